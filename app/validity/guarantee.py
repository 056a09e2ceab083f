"""A run's guarantee target and the calibrated thresholds of the panels it may escalate to.

The target is the run's own (``runs.guarantee_alpha`` / ``guarantee_delta``), else its project's.
A panel's threshold is the one `judges calibrate` saved with the newest record the project may cite
of that very panel whose calibration meets the target (its α and δ no larger), found as warrants
are (``app.validity.records``): by the panel's whole identity, its endpoint reporting the record's
model id. A record calibrated under the same judge model name for another panel (another model id
reported, other prompts, another policy) or another project's unpublished record is none of its
records. A panel with none has no threshold: none of its acceptances stands on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from agents.llm.models import ModelRegistry
from app.models import Project, Run, ValidityRecord
from app.validity.records import identity_of, of_panel, reported_of
from app.validity.selection import citable_records
from graphs.escalation import Thresholds
from graphs.scoring import ScoringPolicy


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
    session: AsyncSession,
    registry: ModelRegistry,
    project_id: str,
    judge_models: Sequence[str],
    policy: ScoringPolicy,
    target: Target,
) -> dict[str, Thresholds]:
    """Each judge model's calibrated thresholds for ``target`` under ``policy``, by the model id its
    endpoint reports (the offline panel's under None); empty: no record of the panel meets it."""
    out: dict[str, Thresholds] = {}
    for name in judge_models:
        panel = identity_of(registry, name, policy)
        rows = of_panel(panel, await citable_records(session, project_id, judge_model=name))
        newest: dict[str | None, ValidityRecord] = {}
        for row in rows:  # newest first: of each reported id, the newest record that meets the target
            if meets(row, target):
                newest.setdefault(reported_of(panel, row), row)
        out[name] = {
            reported: float(row.calibration["threshold"])
            for reported, row in newest.items()
            if row.calibration is not None and row.calibration.get("threshold") is not None
        }
    return out
