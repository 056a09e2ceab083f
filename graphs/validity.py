"""The judges' validity bench: judge every version of a labelled set once, as round 1 of the loop.

Each version — the flawed problem, its corrected version, a control, and (with twins) its
adversarial twins or a control's paraphrase — is a run driven as a real run is (the service's
executor, on a temporary store: ``app.validity.service``), with ``max_rounds = 1``: the seven
judges in parallel, the policy, the verifier's gate. What comes back is measured against the
labels by :mod:`graphs.validity_metrics`.

A version keeps the run's outcome as its ``decision``; only the panel's own verdicts are figures:
``accepted`` or ``screened`` (the offline panel found nothing: it passed the screen) and
``exhausted`` (refused). Anything else — ``error`` when judge calls failed, ``needs_review`` without
a quorum — is not the panel's verdict, and the bench counts it apart, never as a refusal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import structlog

from agents.answers import FinalAnswer, agree, solver_answer, stated_answer
from agents.outcome import PASSED_OUTCOMES, REFUSED_OUTCOMES, Outcome
from agents.rubric.panel import RUBRIC_MODEL
from agents.schemas import JudgeName, JudgeResult, Problem
from agents.validity.evidence import answer_key, names_evidence, solver_finds_the_flaw
from agents.validity.labels import LabelledItem
from agents.validity.matching import check_matches, findings, gate_matches
from agents.validity.twins import paraphrase, twins_of
from graphs.result import RunResult
from graphs.scoring import ScoringPolicy, Vote

log = structlog.get_logger(__name__)

Version = Literal["flawed", "corrected", "control", "twin", "paraphrase"]
# Round 1 of the loop on one version, driven as every run is (``app.runs.temporary``: the service's
# executor on a temporary store), on a panel whose policy stops after one round.
Drive = Callable[[Problem], Awaitable[RunResult]]


# Outcomes that are the panel's verdict on a version: passed (accepted, or screened: the offline
# panel's "found nothing") or refused.
PASSED: frozenset[str] = PASSED_OUTCOMES
REFUSED: frozenset[str] = REFUSED_OUTCOMES


@dataclass(frozen=True)
class Judged:
    """One version of one labelled item, judged once."""

    item: str
    split: str
    flaw_type: str
    levels: tuple[JudgeName, ...]
    version: Version
    twin: str
    decision: str
    quality: float | None
    votes: tuple[Vote, ...]
    gate: tuple[str, ...]
    flaw_types: tuple[str, ...] = ()
    reported: frozenset[str] = frozenset()  # the model ids its answered judge and solver calls reported
    # Model judges whose refusal names the labelled evidence (agents.validity.evidence).
    named: frozenset[str] = frozenset()
    # The solver's answer equals the answer key and differs from the flawed solution's.
    solver_found: bool = False
    # The solver's answer against the version's answer key (None: no solver answer, or no key).
    solver_right: bool | None = None
    # Why the run ended as it did, when not in the panel's verdict alone (``causes_of``).
    causes: tuple[str, ...] = ()
    solver_failure: str | None = None  # the solver's failed call, in a line (None: none failed)
    # Where the item comes from (its ``source``: name and kind; "" when it names none), its source's
    # own category for its first flaw, and the pair it shares with its sound original.
    source: str = ""
    source_kind: str = ""
    category: str = ""
    pair: str | None = None

    @property
    def should_pass(self) -> bool:
        """Corrected versions, controls and paraphrases should pass; flawed ones and twins not."""
        return self.version in ("corrected", "control", "paraphrase")

    @property
    def passed(self) -> bool:
        """The panel let the version through: accepted, or (offline panel) screened."""
        return self.decision in PASSED

    @property
    def decided(self) -> bool:
        """The run ended in the panel's verdict (passed, refused, or held for review) with every
        judge call answered: not an error, not undecided, and not a verdict a failed call helped
        make (a policy may score a round with a failed call, think-paper as 0; a failure is never
        part of a measurement)."""
        return (self.decision in PASSED or self.decision in REFUSED or self.held) and not self.failed_calls

    @property
    def held(self) -> bool:
        """Held for a person (needs_review) with every judge's verdict given: the panel's verdict
        that the version may not pass unreviewed (the verifier's hold, a split, an uncertified
        panel). It is no pass: a held flawed version is no false accept, a held sound one counts
        against specificity, so holding everything cannot flatter a panel. Held because judges
        gave no verdict, it stays undecided."""
        return self.decision == Outcome.NEEDS_REVIEW and not self.abstentions

    @property
    def errored(self) -> bool:
        """Excluded because something failed: the run ended in error, or a judge call failed."""
        return self.decision == Outcome.ERROR or self.failed_calls > 0

    @property
    def failed_calls(self) -> int:
        """Judge calls of this version that failed."""
        return sum(v.failed for v in self.votes)

    @property
    def abstentions(self) -> int:
        """Judges that gave no verdict although their call did not fail."""
        return sum(v.abstained for v in self.votes)

    @property
    def matched(self) -> bool:
        """A check whose label matches the flaw fired: a model's judge of the flaw's levels failed
        naming the flaw's evidence, an offline judge reported a check of the flaw's type, the
        verifier's evidence is of its kind, or the solver reached the answer key."""
        for vote in self.votes:
            if vote.passed is not False:
                continue
            if vote.offline and any(check_matches(c, self.flaw_types) for c in vote.findings):
                return True
            if not vote.offline and vote.judge in self.levels and vote.judge in self.named:
                return True
        for line in self.gate:
            if line.startswith("solver:"):
                if self.solver_found and gate_matches(line, self.flaw_types):
                    return True
            elif gate_matches(line, self.flaw_types):
                return True
        return False


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
