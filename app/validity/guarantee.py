"""A run's guarantee target and the calibrated thresholds of the panels it may escalate to.

The target is the run's own (``runs.guarantee_alpha`` / ``guarantee_delta``), else its project's.
A panel's threshold is the one `judges calibrate` saved with the newest record the project may cite
of its judge model whose calibration meets the target (its α and δ no larger); a panel with none
has no threshold: none of its acceptances stands on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Project, Run, ValidityRecord
from app.validity.selection import citable_records


@dataclass(frozen=True)
class Target:
    """False accepts ≤ ``alpha`` with confidence 1 − ``delta``."""

    alpha: float
    delta: float


async def target_of(session: AsyncSession, run: Run) -> Target | None:
    """The run's target, else its project's (None: neither sets one)."""
    if run.guarantee_alpha is not None and run.guarantee_delta is not None:
        return Target(run.guarantee_alpha, run.guarantee_delta)
    project = await session.get(Project, run.project_id)
    if project is None or project.guarantee_alpha is None or project.guarantee_delta is None:
        return None
    return Target(project.guarantee_alpha, project.guarantee_delta)


def meets(record: ValidityRecord, target: Target) -> bool:
    """Whether the record's calibration was made for a target at least as strict as ``target``."""
    found = record.calibration
    return found is not None and found["alpha"] <= target.alpha and found["delta"] <= target.delta


async def thresholds(
    session: AsyncSession, project_id: str, judge_models: Sequence[str], target: Target
) -> dict[str, float | None]:
    """Each judge model's calibrated threshold for ``target`` (None: no record calibrated to it)."""
    out: dict[str, float | None] = {}
    for name in judge_models:
        records = await citable_records(session, project_id, judge_model=name)
        calibrated = next((r for r in records if meets(r, target)), None)
        out[name] = (
            None
            if calibrated is None or calibrated.calibration is None
            else calibrated.calibration["threshold"]
        )
    return out
