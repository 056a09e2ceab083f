"""Per-run and per-model metrics (RoundsToPass, AvgQualityScore, level scores): pure functions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import fmean

from agents.outcome import PASSED_OUTCOMES, Outcome
from graphs.scoring import ScoringPolicy, is_pass
from graphs.state import Round


@dataclass(frozen=True)
class RoundMeasures:
    """What metrics need of one evaluated round."""

    round: int
    quality: float | None
    level_scores: Mapping[str, float | None]
    verified_errors: int = 0  # computations of the version's solution the verifier found wrong


@dataclass(frozen=True)
class RunMetrics:
    """Metrics of one refinement run; quality figures are on Q's own 0-1 scale, as everywhere.

    ``avg_quality_all_steps`` is AvgQualityScore as the paper's text defines it (mean over every
    evaluated round); ``avg_quality_final`` is what the reference code computes (final round).
    A run that never passes has ``rounds_to_pass = None`` and is censored at max_rounds + 1.
    """

    rounds_evaluated: int
    passed: bool
    rounds_to_pass: int | None
    rounds_to_pass_censored: int
    avg_quality_all_steps: float | None
    avg_quality_final: float | None
    quality_change: float | None
    level_final: Mapping[str, float | None]
    level_change: Mapping[str, float | None]


def scored_rounds(rounds: Sequence[Round]) -> list[RoundMeasures]:
    """Round records in the form the metrics functions take."""
    return [RoundMeasures(r.round, r.quality, r.level_scores(), len(r.verification)) for r in rounds]


def outcome_metrics(outcome: str, rounds: Sequence[Round], policy: ScoringPolicy) -> RunMetrics | None:
    """The metrics of a run that ended with ``outcome``; None for an ``error`` run, which has no
    score of any kind (not "not passed", not a censored RoundsToPass: its cause says why). A run
    that did not end in a pass (a version a deployment's warrant rule sent to review, say) reports
    no pass, whatever its Q reached."""
    if outcome == Outcome.ERROR:
        return None
    metrics = run_metrics(scored_rounds(rounds), policy)
    if outcome in PASSED_OUTCOMES:
        return metrics
    return replace(metrics, passed=False, rounds_to_pass=None)


def run_metrics(rounds: Sequence[RoundMeasures], policy: ScoringPolicy) -> RunMetrics:
    """RoundsToPass, both AvgQualityScores, and per-level final scores with their change.

    A round passes when its quality clears the threshold and, under a policy with the
    verification gate, its solution has no verified error (the loop never accepts one either).
    """
    passing = [
        r.round
        for r in rounds
        if is_pass(r.quality, policy, for_metrics=True)
        and not (policy.verification_gate and r.verified_errors)
    ]
    first_pass = passing[0] if passing else None
    valid = [r for r in rounds if r.quality is not None]
    final = valid[-1] if valid else None
    previous = valid[-2] if len(valid) >= 2 else None
    return RunMetrics(
        rounds_evaluated=len(rounds),
        passed=first_pass is not None,
        rounds_to_pass=first_pass,
        rounds_to_pass_censored=first_pass if first_pass is not None else policy.max_rounds + 1,
        avg_quality_all_steps=_unit(fmean(_q(r) for r in valid)) if valid else None,
        avg_quality_final=_unit(_q(final)) if final else None,
        quality_change=_unit(_q(final) - _q(previous)) if final and previous else None,
        level_final=dict(final.level_scores) if final else {},
        level_change=_level_change(final, previous),
    )


def _q(scored: RoundMeasures) -> float:
    assert scored.quality is not None  # callers pass valid rounds only
    return scored.quality


def _unit(value: float) -> float:
    return round(value, 4)


def _level_change(final: RoundMeasures | None, previous: RoundMeasures | None) -> dict[str, float | None]:
    if final is None or previous is None:
        return {}
    change: dict[str, float | None] = {}
    for level, now in final.level_scores.items():
        before = previous.level_scores.get(level)
        change[level] = None if now is None or before is None else now - before
    return change
