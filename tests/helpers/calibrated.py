"""A validity record with a calibrated threshold, stored as `judges calibrate --save` stores one:
of the exact panel identity a run's panel has (its endpoint reporting ``reported``), unless a test
asks for another."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from agents.llm.models import ModelRegistry
from app.models import DEFAULT_PROJECT, ValidityRecord
from app.validity.records import identity_of
from graphs.scoring import get_policy

SHARE = {"n": 60, "count": 0, "rate": 0.0, "low": 0.0, "high": 0.06, "excluded": 0}


def calibrated_record(
    registry: ModelRegistry,
    judge_model: str,
    threshold: float | None,
    *,
    reported: str | None = None,
    policy: str = "default",
    project_id: str = DEFAULT_PROJECT,
    alpha: float = 0.05,
    delta: float = 0.1,
) -> ValidityRecord:
    """A record of ``judge_model``'s panel under ``policy``, its endpoint reporting ``reported``
    (default: the model id the registry asks for), calibrated to (``alpha``, ``delta``)."""
    spec = registry.get(judge_model)
    said = reported if reported is not None else (spec.model if spec is not None else None)
    identity = identity_of(registry, judge_model, get_policy(policy), reported_model=said)
    return ValidityRecord(
        project_id=project_id,
        panel_id=identity.id,
        identity=identity.parts(),
        judge_model=judge_model,
        set_name="shipped",
        set_hash="0" * 64,
        split="heldout",
        n_flawed=60,
        n_sound=60,
        false_accept=SHARE,
        specificity=SHARE,
        detection=SHARE,
        adversarial_gap=SHARE,
        calibration={"score": "quality", "alpha": alpha, "delta": delta, "threshold": threshold},
    )


async def store(session: AsyncSession, *records: Any) -> None:
    """Store ``records`` and commit."""
    session.add_all(records)
    await session.commit()
