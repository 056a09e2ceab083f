"""Scoring policies: pure functions from judge votes to a quality score and a decision.

Two policies ship:

* ``think-paper`` reproduces the THiNK reference implementation exactly: seven judges, θ = 85,
  *observed* agreement of the binary votes (not chance-corrected), Q = round(.5·PR + .3·A + .2·C, 3),
  stop when Q ≥ τ = 0.85, at most three evaluations, an unparseable judge counted as score 0.
* ``default`` is monotone and chance-corrected (see :func:`directional_kappa`), excludes
  abstentions under a quorum, and sends strongly split panels to human review.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from statistics import fmean
from typing import Literal

PolicyName = Literal["default", "think-paper"]
POLICY_NAMES: tuple[PolicyName, ...] = ("default", "think-paper")


class Decision(StrEnum):
    """Where the loop goes after a round is scored."""

    ACCEPTED = "accepted"
    EXHAUSTED = "exhausted"
    NEEDS_REVIEW = "needs_review"
    REVISE = "revise"


@dataclass(frozen=True)
class Vote:
    """One judge's verdict reduced to numbers; ``score is None`` means the judge abstained."""

    judge: str
    score: float | None
    confidence: float | None = None


@dataclass(frozen=True)
class ScoringPolicy:
    """Every knob of a scoring policy; build one with :func:`get_policy`."""

    name: PolicyName
    pass_threshold: float = 85.0
    judge_thresholds: Mapping[str, float] = field(default_factory=dict)
    alpha: float = 0.5
    beta: float = 0.3
    gamma: float = 0.2
    tau: float = 0.85
    max_rounds: int = 3
    quorum: int = 5
    agreement: Literal["observed", "directional-kappa"] = "directional-kappa"
    confidence_term: Literal["mean", "passing"] = "passing"
    abstention: Literal["exclude", "zero"] = "exclude"
    round_to: int = 4
    metric_pass_strict: bool = False
    judge_against: Literal["original", "previous"] = "original"
    review_kappa_max: float | None = -0.1
    review_confidence_min: float = 0.75
    review_spread_min: float = 70.0

    def threshold(self, judge: str) -> float:
        """θ for one judge: its own override, else the policy-wide threshold."""
        return self.judge_thresholds.get(judge, self.pass_threshold)


_PAPER = ScoringPolicy(
    name="think-paper",
    quorum=0,
    agreement="observed",
    confidence_term="mean",
    abstention="zero",
    round_to=3,
    metric_pass_strict=True,
    judge_against="previous",
    review_kappa_max=None,
)
_DEFAULT = ScoringPolicy(name="default")


def get_policy(name: str, **overrides: object) -> ScoringPolicy:
    """The named policy with optional overrides (θ, weights, τ, max_rounds, quorum, ...)."""
    base = {"think-paper": _PAPER, "default": _DEFAULT}.get(name)
    if base is None:
        raise ValueError(f"unknown scoring policy {name!r}; choose one of {', '.join(POLICY_NAMES)}")
    policy = replace(base, **overrides)  # type: ignore[arg-type]
    _validate(policy)
    return policy


def _validate(policy: ScoringPolicy) -> None:
    if policy.max_rounds < 1:
        raise ValueError("max_rounds must be at least 1")
    if min(policy.alpha, policy.beta, policy.gamma) < 0:
        raise ValueError("weights must be non-negative")
    if not 0 <= policy.tau <= 1:
        raise ValueError("tau must lie in [0, 1]")
    if policy.quorum < 0:
        raise ValueError("quorum must be non-negative")


@dataclass(frozen=True)
class RoundScore:
    """The scored panel of one round. ``quality is None`` when the round had no quorum."""

    n_judges: int
    n_voting: int
    n_passing: int
    pass_rate: float | None
    agreement: float | None
    confidence: float | None
    quality: float | None
    passes: Mapping[str, bool]
    mean_confidence: float | None = None
    score_spread: float = 0.0

    @property
    def valid(self) -> bool:
        """A round without quorum is invalid: neither passed nor failed."""
        return self.quality is not None


def observed_agreement(n_passing: int, n_voting: int) -> float:
    """Share of agreeing ordered judge pairs, [m(m−1) + (n−m)(n−m−1)] / [n(n−1)]."""
    if n_voting < 2:
        return 1.0
    m, n = n_passing, n_voting
    return (m * (m - 1) + (n - m) * (n - m - 1)) / (n * (n - 1))


def directional_kappa(n_passing: int, n_voting: int) -> float:
    """Chance-corrected agreement *on passing*, in [0, 1] and non-decreasing in ``n_passing``.

    κ is Brennan and Prediger's (1981) free-marginal kappa for two categories,
    κ = (P_o − P_e) / (1 − P_e) with P_e = 1/2 (uniform marginals: a single item gives no
    sample from which to estimate the marginals, and Fleiss' estimate then always yields
    −1/(n−1)). The agreement term keeps κ only when a majority passes, max(κ, 0), and is 0
    otherwise, so unanimous *failure* earns nothing and one more passing vote never lowers it.
    """
    if n_voting == 0 or 2 * n_passing <= n_voting:
        return 0.0
    kappa = 2.0 * observed_agreement(n_passing, n_voting) - 1.0
    return max(kappa, 0.0)


def score_round(votes: Sequence[Vote], policy: ScoringPolicy) -> RoundScore:
    """Pass rate, agreement, confidence and composite quality Q of one round's votes."""
    counted = [_count(v, policy) for v in votes]
    voting = [v for v in counted if v.score is not None]
    passes = {v.judge: v.score >= policy.threshold(v.judge) for v in voting if v.score is not None}
    m, n = sum(passes.values()), len(voting)
    if n == 0 or n < policy.quorum:
        return RoundScore(len(votes), n, m, None, None, None, None, passes)
    mean_confidence = fmean((v.confidence or 0.0) / 100.0 for v in voting)
    scores = [v.score for v in voting if v.score is not None]
    spread = max(scores) - min(scores)
    pass_rate = m / n
    agreement = observed_agreement(m, n) if policy.agreement == "observed" else directional_kappa(m, n)
    confidence = _confidence(voting, passes, policy)
    raw = policy.alpha * pass_rate + policy.beta * agreement + policy.gamma * confidence
    quality = round(raw, policy.round_to)
    return RoundScore(
        len(votes), n, m, pass_rate, agreement, confidence, quality, passes, mean_confidence, spread
    )


def _count(vote: Vote, policy: ScoringPolicy) -> Vote:
    # The reference parses a failed judge as score 0 / confidence 0; the paper policy keeps that.
    if vote.score is None and policy.abstention == "zero":
        return Vote(vote.judge, 0.0, 0.0)
    return vote


def _confidence(voting: Sequence[Vote], passes: Mapping[str, bool], policy: ScoringPolicy) -> float:
    values = [(v.confidence or 0.0) / 100.0 for v in voting]
    if policy.confidence_term == "mean":
        return fmean(values)
    # Only confidence in a *passing* verdict counts: confidently failing earns nothing.
    return sum(c for v, c in zip(voting, values, strict=True) if passes[v.judge]) / len(voting)


def is_pass(quality: float | None, policy: ScoringPolicy, *, for_metrics: bool = False) -> bool:
    """Whether a round with this Q passes; the paper's analysis counts a pass only when Q > τ."""
    if quality is None:
        return False
    if for_metrics and policy.metric_pass_strict:
        return quality > policy.tau
    return quality >= policy.tau


def needs_review(score: RoundScore, policy: ScoringPolicy) -> bool:
    """A confident, polarized panel split near half and half: a human should look.

    All three must hold: split, Brennan-Prediger κ = 2·P_o − 1 at or below ``review_kappa_max``
    (for seven voters, a 3-4 or 4-3 vote); confident, the voters' mean confidence is at least
    ``review_confidence_min``; polarized, the highest and lowest score are at least
    ``review_spread_min`` points apart. Judges that differ mildly across levels are normal.
    """
    if policy.review_kappa_max is None or score.mean_confidence is None or score.n_voting < 2:
        return False
    kappa = 2.0 * observed_agreement(score.n_passing, score.n_voting) - 1.0
    return (
        kappa <= policy.review_kappa_max
        and score.mean_confidence >= policy.review_confidence_min
        and score.score_spread >= policy.review_spread_min
    )


def decide(score: RoundScore, round_no: int, policy: ScoringPolicy) -> Decision:
    """accepted / needs_review / exhausted / revise, in that order of precedence."""
    if is_pass(score.quality, policy):
        return Decision.ACCEPTED
    if not score.valid or needs_review(score, policy):
        return Decision.NEEDS_REVIEW
    if round_no >= policy.max_rounds:
        return Decision.EXHAUSTED
    return Decision.REVISE
