"""Scoring policies: pure functions from judge votes to a quality score and a decision.

Two policies ship:

* ``think-paper`` reproduces the THiNK reference implementation exactly: seven judges, θ = 85,
  *observed* agreement of the binary votes (not chance-corrected), Q = round(.5·PR + .3·A + .2·C, 3),
  stop when the rounded Q ≥ τ = 0.85, at most three evaluations, an unparseable judge counted as
  score 0.
* ``default`` cannot be gamed by a judge that fails or abstains, is monotone in every score, and
  its agreement term reads the judges' continuous scores (see :func:`shortfall_agreement`).
  Decisions use the exact Q; rounding is for display.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from statistics import fmean
from typing import Literal

from agents.outcome import Outcome

# A panel's identity holds a hash of this module's source (graphs.decision, agents.identity): any
# edit of it is a new, unmeasured panel, and records measured under the old code warrant nothing.

PolicyName = Literal["default", "think-paper"]
POLICY_NAMES: tuple[PolicyName, ...] = ("default", "think-paper")

# The variance of answers drawn uniformly from the 0-100 integer scale, (101² − 1) / 12: the
# "no agreement at all" reference of James, Demaree and Wolf's r_wg.
UNIFORM_VARIANCE = (101**2 - 1) / 12


class Decision(StrEnum):
    """Where the loop goes after a round is scored: an outcome that ends the run, or ``revise``."""

    ACCEPTED = Outcome.ACCEPTED.value
    SCREENED = Outcome.SCREENED.value
    EXHAUSTED = Outcome.EXHAUSTED.value
    NEEDS_REVIEW = Outcome.NEEDS_REVIEW.value
    ERROR = Outcome.ERROR.value
    REVISE = "revise"


SCREENED_REASON = "the offline checks found no flaw; this is not a judgement of soundness"


@dataclass(frozen=True)
class Vote:
    """One judge's verdict reduced to numbers: what a policy scores, and what the validity bench
    reads of each judge.

    ``score is None`` means no verdict: a *failed* call (``failed``: the endpoint or its reply) or a
    judge that declined to score (:attr:`abstained`). The bench also keeps whether the score passed
    the judge's threshold (``passed``; None: no verdict), whether the judge is the offline rubric
    (``offline``), and which checks it reported failed (``findings``: the offline panel's check ids;
    a model's judge names none).
    """

    judge: str
    score: float | None
    confidence: float | None = None
    failed: bool = False
    passed: bool | None = None
    offline: bool = False
    findings: tuple[str, ...] = ()

    @property
    def abstained(self) -> bool:
        """No verdict, and not because the call failed."""
        return self.score is None and not self.failed


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
    agreement: Literal["observed", "shortfall"] = "shortfall"
    confidence_term: Literal["mean", "passing"] = "passing"
    round_to: int | None = None
    metric_pass_strict: bool = False
    judge_against: Literal["original", "previous"] = "original"
    failed_round: Literal["error", "score"] = "error"
    # A version whose solution has a verified error is never accepted. On under every shipped policy
    # (think-paper too: Q is the reference's, but a tutor must never receive a wrong answer).
    verification_gate: bool = True
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
    round_to=3,
    metric_pass_strict=True,
    judge_against="previous",
    failed_round="score",
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
class PanelScore:
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
    n_failed: int = 0

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


def shortfall_agreement(votes: Sequence[Vote], policy: ScoringPolicy) -> float:
    """How closely the panel agrees that the version meets the bar, from the continuous scores.

    An r_wg-style index (James, Demaree & Wolf, 1984): 1 − (observed dispersion) / (the dispersion
    of uniformly random answers, 850 on a 0-100 scale), floored at 0. The dispersion is taken below
    each judge's pass mark — the mean squared *shortfall* max(θ_j − s_j, 0)² — so that scores above
    the bar agree perfectly and raising any score never lowers the index. A judge without a
    verdict counts as the largest shortfall (score 0). Two panels with the same pass rate differ:
    6 of 7 passing with the seventh at 80 gives 0.996; with the seventh at 20, 0.290.
    """
    if not votes:
        return 0.0
    shortfalls = [
        max(policy.threshold(v.judge) - (v.score if v.score is not None else 0.0), 0.0) for v in votes
    ]
    return max(0.0, 1.0 - fmean(d * d for d in shortfalls) / UNIFORM_VARIANCE)


def score_round(votes: Sequence[Vote], policy: ScoringPolicy) -> PanelScore:
    """Pass rate, agreement, confidence and composite quality Q of one round's votes.

    Every judge of the panel is in every denominator: a judge without a verdict counts as a
    failing vote with the worst score and no confidence, so a failure or abstention can only lower
    Q (it never turns a failing panel into a passing one).
    """
    counted = [_count(v, policy) for v in votes]
    voting = [v for v in counted if v.score is not None]
    passes = {v.judge: v.score >= policy.threshold(v.judge) for v in voting if v.score is not None}
    m, n = sum(passes.values()), len(counted)
    failed = sum(v.failed for v in votes)
    if not voting or len(voting) < policy.quorum:
        return PanelScore(n, len(voting), m, None, None, None, None, passes, n_failed=failed)
    scores = [v.score for v in voting if v.score is not None]
    pass_rate = m / n
    agreement = (
        observed_agreement(m, n) if policy.agreement == "observed" else shortfall_agreement(counted, policy)
    )
    confidence = _confidence(counted, passes, policy)
    raw = policy.alpha * pass_rate + policy.beta * agreement + policy.gamma * confidence
    return PanelScore(
        n_judges=n,
        n_voting=len(voting),
        n_passing=m,
        pass_rate=pass_rate,
        agreement=agreement,
        confidence=confidence,
        quality=raw if policy.round_to is None else round(raw, policy.round_to),
        passes=passes,
        mean_confidence=fmean((v.confidence or 0.0) / 100.0 for v in voting),
        score_spread=max(scores) - min(scores),
        n_failed=failed,
    )


def _count(vote: Vote, policy: ScoringPolicy) -> Vote:
    # The reference parses a failed judge as score 0 / confidence 0; the paper policy keeps that.
    if vote.score is None and policy.name == "think-paper":
        return Vote(vote.judge, 0.0, 0.0, vote.failed)
    return vote


def _confidence(votes: Sequence[Vote], passes: Mapping[str, bool], policy: ScoringPolicy) -> float:
    values = [(v.confidence or 0.0) / 100.0 if v.score is not None else 0.0 for v in votes]
    if policy.confidence_term == "mean":
        return fmean(values)
    # Only confidence in a *passing* verdict counts: confidently failing earns nothing.
    return sum(c for v, c in zip(votes, values, strict=True) if passes.get(v.judge, False)) / len(votes)


def is_pass(quality: float | None, policy: ScoringPolicy, *, for_metrics: bool = False) -> bool:
    """Whether a round with this Q passes; the paper's analysis counts a pass only when Q > τ."""
    if quality is None:
        return False
    if for_metrics and policy.metric_pass_strict:
        return quality > policy.tau
    return quality >= policy.tau


def polarized(score: PanelScore, policy: ScoringPolicy) -> bool:
    """A confident, polarized panel split near half and half.

    All three must hold: split, Brennan-Prediger κ = 2·P_o − 1 of the votes at or below
    ``review_kappa_max`` (for seven voters, a 3-4 or 4-3 vote); confident, the voters' mean
    confidence is at least ``review_confidence_min``; polarized, the highest and lowest score are at
    least ``review_spread_min`` points apart. Judges that differ mildly across levels are normal.
    """
    if policy.review_kappa_max is None or score.mean_confidence is None or score.n_voting < 2:
        return False
    kappa = 2.0 * observed_agreement(score.n_passing, score.n_voting) - 1.0
    return (
        kappa <= policy.review_kappa_max
        and score.mean_confidence >= policy.review_confidence_min
        and score.score_spread >= policy.review_spread_min
    )


def gate(decision: Decision, round_no: int, policy: ScoringPolicy, errors: int) -> Decision:
    """A version whose stated solution has a verified error is never accepted, whatever its Q."""
    if decision is not Decision.ACCEPTED or not errors or not policy.verification_gate:
        return decision
    return Decision.EXHAUSTED if round_no >= policy.max_rounds else Decision.REVISE


def decide(
    score: PanelScore, round_no: int, policy: ScoringPolicy, previous: PanelScore | None = None
) -> Decision:
    """accepted / error / needs_review / exhausted / revise, in that order of precedence.

    * No quorum: ``error`` when calls failed, ``needs_review`` when judges declined.
    * Under the default policy a round in which a judge's call failed and that is not accepted
      ends the run as ``error``: the model under test is not asked to revise because the panel
      failed, and the run is not counted as the model's failure.
    * A polarized split goes to ``revise`` in round 1; a split that persists after a revision goes
      to ``needs_review``.
    """
    if score.quality is None:
        return Decision.ERROR if score.n_failed else Decision.NEEDS_REVIEW
    if is_pass(score.quality, policy):
        return Decision.ACCEPTED
    if score.n_failed and policy.failed_round == "error":
        return Decision.ERROR
    if previous is not None and polarized(score, policy) and polarized(previous, policy):
        return Decision.NEEDS_REVIEW
    if round_no >= policy.max_rounds:
        return Decision.EXHAUSTED
    return Decision.REVISE


def hold(decision: Decision, unverified: str | None) -> tuple[Decision, str | None]:
    """What an acceptance becomes when the final answer depends on a step the verifier could not
    check (``unverified``, the step's line; None: no such step): ``needs_review``, with the step as
    the cause. A model panel's judges may pass such a step, but nothing checked the value the
    answer rests on, so a person decides."""
    if decision is not Decision.ACCEPTED or unverified is None:
        return decision, None
    return Decision.NEEDS_REVIEW, (
        f"the final answer depends on a step the verifier could not check ({unverified}): "
        "not accepted unreviewed"
    )


def certify(decision: Decision, *, screen: bool, uncertified: str | None) -> tuple[Decision, str | None]:
    """What an acceptance becomes on a panel that may not certify, and the reason (None: unchanged).

    A screen's pass is ``screened`` (the offline panel refuses with evidence but never certifies);
    a panel without the warrant its deployment requires sends the version to ``needs_review`` with
    ``uncertified`` as the cause. A screen wins over the warrant rule: a screened run claims nothing.
    """
    if decision is not Decision.ACCEPTED:
        return decision, None
    if screen:
        return Decision.SCREENED, SCREENED_REASON
    if uncertified is not None:
        return Decision.NEEDS_REVIEW, uncertified
    return decision, None
