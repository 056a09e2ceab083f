"""The THiNK paper's Table 1 and Table 2, computed exactly as its reference analysis does.

Inputs are per-round rows (problem, round, the seven judges' scores, mean confidence). Q is
recomputed with the ``think-paper`` policy. Table 2: RoundsToPass = mean over passing problems of
the first round with Q > τ (non-passers dropped, as the paper does; the pass rate is reported
beside it); AvgQualityScore = 100 × mean final-round Q; ± = 100 × mean (Q_final − Q_previous).
The paper's text defines AvgQualityScore over all refinement steps instead: that figure (each
problem's mean Q over its rounds, then the mean over problems) is computed beside it.
Table 1: per level, Σ over problems with ≥ 2 rounds of the final-round score ÷ all problems, and
the same sum of (final − previous) ÷ all problems. Beyond the paper: the judges' Fleiss' κ over
every judged version (pass = score ≥ θ) and a 95 % bootstrap interval for AvgQualityScore.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import fmean

from agents.schemas import BloomLevel
from graphs.analysis.agreement import fleiss_kappa
from graphs.analysis.statistics import bootstrap_ci
from graphs.scoring import ScoringPolicy, Vote, get_policy, is_pass, score_round

LEVELS: tuple[str, ...] = tuple(level.value for level in BloomLevel)


@dataclass(frozen=True)
class ReferenceRound:
    """One evaluated round of one problem, as the reference logs it."""

    problem_id: str
    round: int
    scores: Mapping[str, float]  # the six levels and "holistic"
    confidence: float  # the mean of the seven confidences, 0-100


@dataclass(frozen=True)
class PaperTables:
    """One model's row of Table 1 and Table 2, plus the pass rate the paper leaves out."""

    n_problems: int
    n_passed: int
    pass_rate: float
    rounds_to_pass: float | None
    avg_quality_score: float
    avg_quality_all_steps: float
    quality_change: float
    level_scores: Mapping[str, float]
    level_change: Mapping[str, float]
    judges_fleiss_kappa: float | None
    avg_quality_ci: tuple[float, float] | None

    @property
    def level_average(self) -> float:
        """Plain mean of the six level scores (the paper's 'Avg.' matches it for 2 of 7 models)."""
        return fmean(self.level_scores.values())


def paper_tables(rows: Iterable[ReferenceRound], policy: ScoringPolicy | None = None) -> PaperTables:
    """Both tables' values for one model."""
    policy = policy or get_policy("think-paper")
    problems: dict[str, dict[int, ReferenceRound]] = {}
    for row in rows:
        problems.setdefault(row.problem_id, {})[row.round] = row  # a repeated round: the last wins
    if not problems:
        raise ValueError("no rounds to tabulate")
    first_passes, finals, changes, all_steps = [], [], [], []
    votes: dict[str, list[bool | None]] = {}
    level_sum = dict.fromkeys(LEVELS, 0.0)
    level_delta = dict.fromkeys(LEVELS, 0.0)
    for rounds in problems.values():
        ordered = [rounds[r] for r in sorted(rounds)]
        qualities = [_quality(row, policy) for row in ordered]
        for item in ordered:
            for judge, score in item.scores.items():
                votes.setdefault(judge, []).append(score >= policy.threshold(judge))
        passing = [
            row.round
            for row, q in zip(ordered, qualities, strict=True)
            if is_pass(q, policy, for_metrics=True)
        ]
        if passing:
            first_passes.append(passing[0])
        finals.append(qualities[-1])
        all_steps.append(fmean(qualities))
        if len(ordered) >= 2:
            changes.append(qualities[-1] - qualities[-2])
            for level in LEVELS:
                level_sum[level] += ordered[-1].scores[level]
                level_delta[level] += ordered[-1].scores[level] - ordered[-2].scores[level]
    n = len(problems)
    return PaperTables(
        n_problems=n,
        n_passed=len(first_passes),
        pass_rate=len(first_passes) / n,
        rounds_to_pass=fmean(first_passes) if first_passes else None,
        avg_quality_score=100 * fmean(finals),
        avg_quality_all_steps=100 * fmean(all_steps),
        quality_change=100 * fmean(changes) if changes else 0.0,
        level_scores={level: level_sum[level] / n for level in LEVELS},
        level_change={level: level_delta[level] / n for level in LEVELS},
        judges_fleiss_kappa=fleiss_kappa(votes),
        avg_quality_ci=_percent(bootstrap_ci(finals)),
    )


def _percent(interval: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if interval is None else (100 * interval[0], 100 * interval[1])


def _quality(row: ReferenceRound, policy: ScoringPolicy) -> float:
    votes = [Vote(judge, score, row.confidence) for judge, score in row.scores.items()]
    quality = score_round(votes, policy).quality
    assert quality is not None  # the paper policy has no quorum
    return quality
