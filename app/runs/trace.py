"""Building the public run resources from stored rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from agents.llm.calls import Usage
from agents.schemas import JUDGES, Problem, SolverResult
from agents.verify.givens import changed_givens
from agents.verify.verifier import verify
from app.access.usage import escalation_usage
from app.grading import grading_progress
from app.models import JudgementRow, ProblemRow, RevisionRow, RoundRow, Run, RunFacts, TranscriptEvent
from app.runs.repository import FIGURES
from app.runs.schemas import (
    ProblemIn,
    RevisionPublic,
    RoundPublic,
    RunPublic,
    RunTrace,
    VerdictPublic,
    Version,
)
from graphs.refinement import same_version


def run_public(run: Run, question: str) -> RunPublic:
    """The list view of a run."""
    facts = RunFacts.of(run)
    metrics = (facts.metrics if facts else None) or {}
    return RunPublic(
        id=run.id,
        status=run.status,
        model=run.model,
        judge_model=run.judge_model,
        policy=run.policy,
        max_rounds=run.max_rounds,
        question=question,
        created_at=run.created_at,
        finished_at=run.finished_at,
        stop_reason=run.stop_reason,
        failure=run.failure,
        rounds_to_pass=metrics.get("rounds_to_pass"),
        avg_quality_final=metrics.get("avg_quality_final"),
        batch_id=run.batch_id,
        arm=run.arm,
        warrant=facts.warrant if facts else None,
        grading_progress=grading_progress(run.status, run.review),
    )


def _verdict(row: JudgementRow) -> VerdictPublic:
    return VerdictPublic(
        **row.model_dump(
            include={
                "judge",
                "score",
                "confidence",
                "rationale",
                "details",
                "abstain_reason",
                "failure",
                "reasoning",
                "model",
                "reported_model",
                "prompt_version",
                "input_tokens",
                "cached_input_tokens",
                "output_tokens",
                "latency_s",
                "cost_usd",
                "raw_outputs",
            }
        ),
        abstained=row.score is None,
    )


def _revision(row: RevisionRow, streamed: str) -> RevisionPublic:
    """A revision with everything stored for it: its raw replies, and its think-aloud."""
    public = RevisionPublic(**row.model_dump(exclude={"id", "run_id", "round"}))
    if not public.thinking and streamed:
        public.thinking = streamed
    return public


def _with_givens(revision: RevisionPublic | None, question: str) -> RevisionPublic | None:
    """The revision with the givens it changed in the question it revised (derived, so every stored
    run shows them, whichever reviser made it)."""
    if revision is not None and revision.question is not None:
        revision.givens_changed = changed_givens(question, revision.question)
    return revision


async def streamed_thinking(session: AsyncSession, run_id: str) -> dict[int, str]:
    """The think-aloud a run's transcript holds, joined per round (its stream sent exactly this),
    without a revise step's that a resume cut short (its ``run.resumed`` names the rounds)."""
    kinds = ("reviser.thinking", "run.resumed")
    rows = await session.execute(
        select(col(TranscriptEvent.type), col(TranscriptEvent.data))
        .where(col(TranscriptEvent.run_id) == run_id, col(TranscriptEvent.type).in_(kinds))
        .order_by(col(TranscriptEvent.seq))
    )
    joined: dict[int, str] = {}
    for kind, data in rows.all():
        if kind == "run.resumed":
            for round_no in data.get("discarded_thinking_rounds", []):
                joined.pop(int(round_no), None)
            continue
        round_no = int(data.get("round", 0))
        joined[round_no] = joined.get(round_no, "") + str(data.get("delta", ""))
    return joined


def _unchanged(run: Run, problem: ProblemRow, rounds: Sequence[RoundRow]) -> dict[int, bool]:
    """Which rounds judged no revision, by the loop's own rule (``graphs.refinement.same_version``):
    a loop's round after the first against the round before it; a control's one round (the blind
    revision) against the problem as submitted."""
    before = Problem.model_construct(question=problem.question, solution=problem.solution)
    previous: Problem | None = before if run.arm == "control" else None
    out: dict[int, bool] = {}
    for row in sorted(rounds, key=lambda r: r.round):
        version = Problem.model_construct(question=row.question, solution=row.solution)
        out[row.round] = same_version(version, previous)
        previous = version
    return out


def _feedback(verdicts: list[VerdictPublic]) -> list[str]:
    """What the reviser was shown: rationales of voting judges, then the holistic suggestions."""
    lines = [f"{v.judge}: {v.rationale}" for v in verdicts if not v.abstained and v.rationale]
    for verdict in verdicts:
        if verdict.judge == "holistic" and verdict.details:
            lines += [f"suggestion: {s}" for s in verdict.details.get("suggestions", [])]
    return lines


def run_trace(
    run: Run,
    problem: ProblemRow,
    rounds: Sequence[RoundRow],
    judgements: Sequence[JudgementRow],
    revisions: Sequence[RevisionRow],
    streamed: Mapping[int, str] | None = None,
) -> RunTrace:
    """The full revision trace of a run; ``streamed`` is the think-aloud the transcript holds per
    round, shown where a revision's row has none (rows stored before failed revisions kept theirs)."""
    by_round: dict[int, list[VerdictPublic]] = {}
    for row in sorted(judgements, key=lambda j: JUDGES.index(j.judge)):
        by_round.setdefault(row.round, []).append(_verdict(row))
    revision_of = {r.round: _revision(r, (streamed or {}).get(r.round, "")) for r in revisions}
    unchanged = _unchanged(run, problem, rounds)
    public_rounds = [
        RoundPublic(
            **r.model_dump(include=FIGURES | {"round", "question", "solution"}),
            verification=r.verification or [],
            unverified=[step.line() for step in verify(r.solution, r.question).unverified],
            solver=SolverResult.model_validate(r.solver) if r.solver else None,
            verdicts=by_round.get(r.round, []),
            feedback=_feedback(by_round.get(r.round, [])),
            revision=_with_givens(revision_of.get(r.round), r.question),
            unchanged=unchanged.get(r.round, False),
            escalations=r.escalations or [],
        )
        for r in rounds
    ]
    solvers = [p.solver.usage for p in public_rounds if p.solver]
    escalated = [u for r in rounds for u in escalation_usage(r.escalations)]
    usage = _usage(judgements, revisions, [*solvers, *escalated])
    facts = RunFacts.of(run)
    final, best = _versions(rounds)
    return RunTrace(
        **run_public(run, problem.question).model_dump(),
        problem=ProblemIn(question=problem.question, solution=problem.solution, metadata=run.meta or {}),
        rounds=public_rounds,
        final=final,
        best=best,
        best_round=best.round if best else None,
        metrics=facts.metrics if facts else None,
        usage=usage,
    )


def _versions(rounds: Sequence[RoundRow]) -> tuple[Version | None, Version | None]:
    """The last version judged and the best one (highest Q, earliest of equals), as the CLI's
    ``--json`` reports them (``graphs.result``)."""
    if not rounds:
        return None, None
    last = max(rounds, key=lambda r: r.round)
    best = max(rounds, key=lambda r: (r.quality if r.quality is not None else -1.0, -r.round))
    return _version(last), _version(best)


def _version(row: RoundRow) -> Version:
    return Version(round=row.round, question=row.question, solution=row.solution, quality=row.quality)


def _usage(
    judgements: Sequence[JudgementRow], revisions: Sequence[RevisionRow], solvers: Sequence[Usage]
) -> dict[str, Any]:
    """What every stored call cost: the judgements, the revisions, and the solver's and the stronger
    panels' calls."""
    rows: list[JudgementRow | RevisionRow | Usage] = [*judgements, *revisions, *solvers]
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    return {
        "input_tokens": sum(r.input_tokens for r in rows),
        "cached_input_tokens": sum(r.cached_input_tokens for r in rows),
        "output_tokens": sum(r.output_tokens for r in rows),
        "latency_s": round(sum(r.latency_s for r in rows), 3),
        "cost_usd": sum(costs) if costs else None,
    }
