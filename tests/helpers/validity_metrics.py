"""Validity metrics: a judged version made up for the statistics."""

from __future__ import annotations

from typing import Any

from agents.schemas import JUDGES, JudgeName
from graphs.analysis.judged import Judged, Version
from graphs.scoring import Vote

PROPORTION: tuple[JudgeName, ...] = ("evaluate", "analyze", "holistic")


def votes(
    score: int | None = 90,
    *,
    failed: bool = False,
    offline: bool = False,
    failing: dict[str, Any] | None = None,
) -> tuple[Vote, ...]:
    """Seven votes at ``score`` (None: no verdict; ``failed``: the call failed); ``failing`` maps a
    judge to the offline findings it reports while failing at score 20."""
    out = []
    for judge in JUDGES:
        if failing and judge in failing:
            out.append(Vote(judge, 20, 90, passed=False, offline=offline, findings=tuple(failing[judge])))
        else:
            passed = None if score is None else score >= 85
            confidence = None if score is None else 80
            out.append(Vote(judge, score, confidence, failed=failed, passed=passed, offline=offline))
    return tuple(out)


def judged(
    version: Version,
    decision: str,
    *,
    item: str = "i",
    split: str = "heldout",
    flaw: str = "false_proportionality",
    levels: tuple[JudgeName, ...] = PROPORTION,
    cast: tuple[Vote, ...] | None = None,
    gate: tuple[str, ...] = (),
    twin: str = "",
    named: frozenset[str] = frozenset(),
    solver_found: bool = False,
) -> Judged:
    flawed = version in ("flawed", "twin")
    return Judged(
        item=item,
        split=split,
        flaw_type=flaw if flawed or version == "corrected" else "control",
        levels=levels if version != "control" else (),
        version=version,
        twin=twin,
        decision=decision,
        quality=None,
        votes=cast if cast is not None else votes(),
        gate=gate,
        flaw_types=(flaw,) if version != "control" else (),
        named=named,
        solver_found=solver_found,
    )
