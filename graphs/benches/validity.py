"""The judges' validity bench: judge every version of a labelled set once, as round 1 of the loop.

Each version — the flawed problem, its corrected version, a control, and (with twins) its
adversarial twins or a control's paraphrase — is a run driven as a real run is (the service's
executor, on a temporary store: ``app.validity.service``), with ``max_rounds = 1``: the seven
judges in parallel, the policy, the verifier's gate. What comes back is measured against the
labels by :mod:`graphs.analysis.validity_metrics`.

A version keeps the run's outcome as its ``decision``; only the panel's own verdicts are figures:
``accepted`` or ``screened`` (the offline panel found nothing: it passed the screen) and
``exhausted`` (refused). Anything else — ``error`` when judge calls failed, ``needs_review`` without
a quorum — is not the panel's verdict, and the bench counts it apart, never as a refusal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import structlog

from agents.answers import FinalAnswer, agree, solver_answer, stated_answer
from agents.labelled.evidence import answer_key, names_evidence, solver_finds_the_flaw
from agents.labelled.labels import LabelledItem
from agents.labelled.matching import findings
from agents.labelled.twins import paraphrase, twins_of
from agents.rubric.panel import RUBRIC_MODEL
from agents.schemas import JudgeResult, Problem
from graphs.analysis.judged import PASSED, Judged, Version
from graphs.result import RunResult
from graphs.scoring import ScoringPolicy, Vote

log = structlog.get_logger(__name__)

# Round 1 of the loop on one version, driven as every run is (``app.runs.temporary``: the service's
# executor on a temporary store), on a panel whose policy stops after one round.
Drive = Callable[[Problem], Awaitable[RunResult]]


def versions(item: LabelledItem, twins: bool) -> list[tuple[Version, str, Problem]]:
    """The versions of an item to judge."""
    if item.kind == "control":
        out: list[tuple[Version, str, Problem]] = [("control", "", item.problem)]
        if twins:
            out.append(("paraphrase", "paraphrase", paraphrase(item).problem))
        return out
    out = [("flawed", "", item.problem)]
    if item.corrected is not None:
        out.append(("corrected", "", item.corrected))
    if twins:
        out += [("twin", twin.kind, twin.problem) for twin in twins_of(item)]
    return out


@dataclass(frozen=True)
class PanelReading:
    """Round 1 of the loop on one version: the run's outcome, Q, each judge's vote, the gate, and
    the model ids the endpoint reported in the round's answered calls."""

    decision: str
    quality: float | None
    votes: tuple[Vote, ...]
    gate: tuple[str, ...]
    reported: frozenset[str] = frozenset()
    rationales: tuple[tuple[str, str], ...] = ()  # (judge, what it wrote) of each model judge
    solver: FinalAnswer | None = None  # the solver's answer as a number
    causes: tuple[str, ...] = ()  # the run's stop reason, each judge's abstention or failure, the solver's
    solver_failure: str | None = None

    @property
    def passed(self) -> bool:
        """Accepted, or screened by the offline panel."""
        return self.decision in PASSED


def reading_of(result: RunResult, policy: ScoringPolicy) -> PanelReading:
    """What the bench measures of a run that judged one version (round 1 of the loop)."""
    if not result.rounds:  # no version was judged (nothing the bench can read as a verdict)
        return PanelReading(str(result.outcome), None, (), (), causes=causes_of(result))
    record = result.rounds[0]
    votes = tuple(_vote(o, policy) for o in record.outcomes)
    calls = [o.reported_model for o in record.outcomes] + (
        [record.solver.reported_model] if record.solver else []
    )
    reported = frozenset(model for model in calls if model is not None)
    rationales = tuple(
        (o.judge, o.verdict.rationale) for o in record.outcomes if o.verdict and o.model != RUBRIC_MODEL
    )
    solved = record.solver.solution if record.solver else None
    answer = solver_answer(solved) if solved else None
    failed = record.solver.failure if record.solver else None
    return PanelReading(
        str(result.outcome),
        record.quality,
        votes,
        tuple(record.verification),
        reported,
        rationales,
        answer,
        causes_of(result),
        failed.summary() if failed else None,
    )


def causes_of(result: RunResult) -> tuple[str, ...]:
    """Why a version's run ended as it did, beyond the panel's verdicts: its stop reason, then the
    judges that abstained or failed, grouped by cause ("remember, apply abstained: …"), then the
    solver's failed call."""
    lines = [f"stop reason: {result.stop_reason}"] if result.stop_reason else []
    if not result.rounds:
        return tuple(lines)
    record = result.rounds[0]
    by_cause: dict[str, list[str]] = {}
    for outcome in record.outcomes:
        if outcome.failure is not None:
            by_cause.setdefault(f"failed: {outcome.failure.summary()}", []).append(outcome.judge)
        elif outcome.verdict is None:
            why = outcome.abstain_reason or "no reason given"
            by_cause.setdefault(f"abstained: {why}", []).append(outcome.judge)
    lines += [f"{', '.join(judges)} {cause}" for cause, judges in by_cause.items()]
    if record.solver is not None and record.solver.failure is not None:
        lines.append(f"solver failed: {record.solver.failure.summary()}")
    return tuple(lines)


def _vote(outcome: JudgeResult, policy: ScoringPolicy) -> Vote:
    verdict = outcome.verdict
    offline = outcome.model == RUBRIC_MODEL
    return Vote(
        outcome.judge,
        verdict.score if verdict else None,
        verdict.confidence if verdict else None,
        failed=outcome.failure is not None,
        passed=(verdict.score >= policy.threshold(outcome.judge)) if verdict else None,
        offline=offline,
        findings=findings(verdict.rationale) if verdict and offline else (),
    )


async def bench(
    items: Sequence[LabelledItem],
    drive: Drive,
    policy: ScoringPolicy,
    *,
    twins: bool = False,
    concurrency: int = 8,
) -> list[Judged]:
    """Judge every version of every item (``concurrency`` versions at a time), each by ``drive``
    under ``policy`` (the judges' thresholds a vote passes by)."""
    slots = asyncio.Semaphore(concurrency)

    async def one(item: LabelledItem, version: Version, twin: str, problem: Problem) -> Judged:
        async with slots:
            try:
                verdict = reading_of(await drive(problem), policy)
            except Exception as exc:  # one version's crash is that version's error, not the bench's
                log.exception("validity.version_failed", item=item.id, version=version, twin=twin)
                crash = f"{type(exc).__name__}: {exc}"
                verdict = PanelReading("error", None, (), (crash,), causes=(f"the run raised {crash}",))
        levels = tuple(dict.fromkeys(level for flaw in item.flaws for level in flaw.levels))
        evidence = [flaw.evidence for flaw in item.flaws]
        key = _key(item, version, problem)
        return Judged(
            item.id,
            item.split,
            item.flaw_type,
            levels,
            version,
            twin,
            verdict.decision,
            verdict.quality,
            verdict.votes,
            verdict.gate,
            tuple(dict.fromkeys(flaw.type for flaw in item.flaws)),
            verdict.reported,
            frozenset(judge for judge, text in verdict.rationales if names_evidence(text, evidence)),
            version == "flawed"
            and solver_finds_the_flaw(verdict.solver, key, stated_answer(problem.solution)),
            None if verdict.solver is None or key is None else agree(verdict.solver, key) is True,
            verdict.causes,
            verdict.solver_failure,
            item.source.name if item.source else "",
            item.source.kind if item.source else "",
            next((flaw.category for flaw in item.flaws if flaw.category), ""),
            item.pair,
        )

    jobs = [one(item, v, t, p) for item in items for v, t, p in versions(item, twins)]
    return list(await asyncio.gather(*jobs))


def _key(item: LabelledItem, version: Version, problem: Problem) -> FinalAnswer | None:
    """The answer key of a version: a flawed version's (and its twins') is the corrected version's
    answer; a sound version's is its own stated answer."""
    if version in ("flawed", "twin"):
        return answer_key(item.corrected.solution if item.corrected else None)
    return stated_answer(problem.solution)
