"""Escalation: an acceptance below the panel's calibrated threshold (``graphs.analysis.guarantee``) is not
the panel's to give. The version goes to the next configured, stronger panel, which judges it afresh
and accepts it only at or above its own calibrated threshold; after the last, a person decides
(``needs_review``, "below the guaranteed threshold"). Each step is a ``round.escalated`` event.

A stronger panel that refuses the version decides the round as the loop would (revise, or exhausted
at the last round): a refusal never needs a guarantee. One whose calls fail, or that has no quorum,
sends the version to review.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from agents.identity import reported_by
from agents.judges import Judge, JudgeRequest
from agents.llm.calls import Usage
from agents.schemas import JUDGES, JudgeName, Problem
from graphs.events import RoundEscalated
from graphs.scoring import Decision, ScoringPolicy, Vote, decide, is_pass, score_round

BELOW = "below the guaranteed threshold"
# A panel's calibrated thresholds by the model id its endpoint reports (the offline panel's under
# None): a round judged by an endpoint reporting another id than any calibrated one has none. A bare
# number is the threshold whatever the endpoint reports (scripted panels in tests); None: none.
Thresholds = Mapping[str | None, float]
Threshold = float | Thresholds | None


def threshold_at(threshold: Threshold, reported: str | None) -> float | None:
    """The calibrated threshold of a panel whose endpoint reported ``reported``."""
    if threshold is None or isinstance(threshold, (int, float)):
        return threshold
    return threshold.get(reported)


@dataclass(frozen=True)
class Stage:
    """A stronger panel: its judges, its policy and its own calibrated threshold (None: it was never
    calibrated to the target, so none of its acceptances stands either)."""

    name: str
    judges: Mapping[JudgeName, Judge]
    policy: ScoringPolicy
    threshold: Threshold


@dataclass(frozen=True)
class Guarantee:
    """The target (false accepts ≤ ``alpha`` with confidence 1 − ``delta``), the run's own panel's
    calibrated threshold (None: none reached the target: every acceptance escalates) and the
    stronger panels, in order."""

    alpha: float
    delta: float
    threshold: Threshold
    stages: tuple[Stage, ...] = field(default_factory=tuple)

    def below(self, quality: float | None, reported: str | None = None) -> bool:
        """Whether an acceptance at ``quality`` by the panel whose endpoint reported ``reported``
        falls short of its guaranteed threshold."""
        threshold = threshold_at(self.threshold, reported)
        return threshold is None or quality is None or quality < threshold


@dataclass(frozen=True)
class Escalated:
    """Where the cascade ended: the round's decision, its reason, and each step as an event."""

    decision: Decision
    reason: str
    steps: tuple[RoundEscalated, ...]


def _short(threshold: float | None, quality: float | None) -> str:
    q = "no Q" if quality is None else f"Q {quality:.3f}"
    return f"{q}, calibrated threshold none" if threshold is None else f"{q} < {threshold:.3f}"


async def escalate(
    guarantee: Guarantee,
    problem: Problem,
    reference: Problem | None,
    round_no: int,
    quality: float | None,
    max_rounds: int,
    reported: str | None = None,
) -> Escalated:
    """Send an acceptance at ``quality`` (by the run's panel, its endpoint reporting ``reported``)
    up the cascade (see the module's docstring)."""
    panel = "the run's panel"
    own = threshold_at(guarantee.threshold, reported)
    steps = [_step(round_no, 0, panel, quality, own, "escalated", _short(own, quality))]
    for number, stage in enumerate(guarantee.stages, 1):
        votes, spent, answered = await _votes(stage, problem, reference, round_no)
        score = score_round(votes, stage.policy)
        q = score.quality
        threshold = threshold_at(stage.threshold, answered)
        if not is_pass(q, stage.policy):
            decision = decide(score, round_no, replace(stage.policy, max_rounds=max_rounds))
            decision = Decision.NEEDS_REVIEW if decision is Decision.ERROR else decision
            reason = f"the stronger panel {stage.name} did not accept it ({decision.value})"
            steps.append(_step(round_no, number, stage.name, q, threshold, decision.value, reason, spent))
            return Escalated(decision, reason, tuple(steps))
        if threshold is not None and q is not None and q >= threshold:
            reason = f"accepted by the stronger panel {stage.name} at or above its guaranteed threshold"
            steps.append(
                _step(round_no, number, stage.name, q, threshold, Decision.ACCEPTED.value, reason, spent)
            )
            return Escalated(Decision.ACCEPTED, reason, tuple(steps))
        why = _short(threshold, q)
        steps.append(_step(round_no, number, stage.name, q, threshold, "escalated", why, spent))
    reason = f"{BELOW}: no panel accepted it at or above its calibrated threshold (α = {guarantee.alpha})"
    steps.append(
        _step(
            round_no, len(guarantee.stages) + 1, "a person", None, None, Decision.NEEDS_REVIEW.value, reason
        )
    )
    return Escalated(Decision.NEEDS_REVIEW, reason, tuple(steps))


async def _votes(
    stage: Stage, problem: Problem, reference: Problem | None, round_no: int
) -> tuple[list[Vote], Usage, str | None]:
    """The stronger panel's seven judges on the version, at once (a failure is an abstention), what
    their calls cost, failed attempts included (it is charged to the run like any judge's), and the
    one model id its endpoint reported (None: none, or several). A call its budget refuses
    (QuotaExceeded) stops the run as a round's would."""
    requests = [JudgeRequest(name, round_no, problem, reference) for name in JUDGES if name in stage.judges]
    outcomes = await asyncio.gather(*(stage.judges[r.judge].assess(r) for r in requests))
    spent = sum((o.usage for o in outcomes), Usage())
    answered = reported_by(o.reported_model for o in outcomes)
    given = [o.verdict for o in outcomes if o.verdict is not None]
    if len(given) > 1 and len({" ".join(v.rationale.split()).casefold() for v in given}) == 1:
        return [Vote(o.judge, None) for o in outcomes], spent, answered  # one rationale seven times
    votes = [
        Vote(
            o.judge,
            o.verdict.score if o.verdict else None,
            o.verdict.confidence if o.verdict else None,
            failed=o.failure is not None,
        )
        for o in outcomes
    ]
    return votes, spent, answered


def _step(
    round_no: int,
    stage: int,
    panel: str,
    quality: float | None,
    threshold: float | None,
    decision: str,
    reason: str,
    usage: Usage | None = None,
) -> RoundEscalated:
    return RoundEscalated(
        round=round_no,
        stage=stage,
        panel=panel,
        quality=quality,
        threshold=threshold,
        decision=decision,
        reason=reason,
        usage=usage or Usage(),
    )
