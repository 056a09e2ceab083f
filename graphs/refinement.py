"""The refinement loop: evaluate (seven judges and the solver in parallel) → score → revise → ...

The zero-shot control arm is the same graph entered through one blind revision (``arm``
"control"), then judged once: the one graph every run, loop or control, is driven through
(``app.runs.executor.RunExecutor``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from agents.answers import mismatch
from agents.identity import reported_by
from agents.judges import JudgeRequest
from agents.llm.calls import CallFailure
from agents.reviser import Finding, RevisionRequest
from agents.schemas import (
    HOLISTIC,
    JUDGES,
    HolisticReply,
    JudgeResult,
    Problem,
    RevisionResult,
    SolverResult,
)
from agents.verify.givens import changed_givens
from agents.verify.verifier import verify
from graphs.context import RunContext
from graphs.escalation import Escalated, escalate
from graphs.events import (
    JudgeVerdict,
    ReviserThinking,
    RevisionProposed,
    RoundScored,
    RoundStarted,
    RunFinished,
)
from graphs.metrics import outcome_metrics
from graphs.revising import NOT_REVISED, ask_until_revised
from graphs.scoring import SCREENED_REASON, Decision, Vote, certify, decide, gate, hold, is_pass, score_round
from graphs.state import JudgeTask, RefinementState, Round, RoundFigures, SolveTask

log = structlog.get_logger(__name__)


class RoundLimitExceeded(RuntimeError):
    """The loop's own guard: a round beyond max_rounds was about to start."""


async def evaluate(state: RefinementState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Start the next round (the judges fan out from here)."""
    number = state.get("round", 0) + 1
    structlog.contextvars.bind_contextvars(round=number)
    if number > runtime.context.policy.max_rounds:
        raise RoundLimitExceeded(f"round {number} exceeds max_rounds")
    runtime.stream_writer(RoundStarted(round=number, problem=state["current"]))
    return {"round": number}


def route_to_judges(state: RefinementState, runtime: Runtime[RunContext]) -> list[Send]:
    """One ``Send`` per judge, and one to the solver when the panel has one and the policy gates on
    verification (its answer only ever feeds the gate): all run concurrently."""
    context, number, current = runtime.context, state["round"], state["current"]
    reference = state["original"] if context.policy.judge_against == "original" else state.get("previous")
    sends = [
        Send("judge", JudgeTask(judge=j, round=number, problem=current, reference=reference)) for j in JUDGES
    ]
    if context.solver is not None and context.policy.verification_gate:
        sends.append(Send("solve", SolveTask(round=number, problem=current)))
    return sends


async def judge(task: JudgeTask, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Run one judge; failures come back as abstentions, never as exceptions."""
    structlog.contextvars.bind_contextvars(round=task["round"], judge=task["judge"])
    request = JudgeRequest(task["judge"], task["round"], task["problem"], task["reference"])
    outcome = await runtime.context.judges[task["judge"]].assess(request)
    runtime.stream_writer(JudgeVerdict.of(outcome))
    return {"outcomes": [outcome]}


async def solve(task: SolveTask, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The solver answers the question alone; a failed call comes back as data, never raised."""
    structlog.contextvars.bind_contextvars(round=task["round"])
    assert runtime.context.solver is not None  # route_to_judges sends here only when there is one
    outcome = await runtime.context.solver.solve(task["problem"], task["round"])
    if outcome.failure is not None:
        log.warning("solver.unavailable", round=task["round"], failure=outcome.failure.summary())
    return {"solutions": [outcome]}


UNVERIFIED = "unverified: "


def gate_evidence(
    problem: Problem, solver: SolverResult | None, *, screen: bool = False
) -> tuple[list[str], list[str]]:
    """Why the version may not be accepted, and the steps the verifier read but could not check.

    The evidence: the stated solution's wrong computations and broken links in its chain (a number
    neither given nor computed, a correction not carried, a final answer copied from a middle step),
    then a final answer that differs from the solver's (a failed solver call adds nothing). The
    unverified steps are named in the trace for every panel. A screen (the offline panel) passes
    only a chain it has checked whole, so for it each unverified step is evidence too ("unverified:
    …"); a model-backed panel's judges read the solution themselves, and its trace names the steps
    without refusing on them.
    """
    found = verify(problem.solution, problem.question)
    lines = [e.line() for e in found.errors]
    unverified = [step.line() for step in found.unverified]
    if screen:
        lines += [line if line.startswith(UNVERIFIED) else UNVERIFIED + line for line in unverified]
    if solver is not None and solver.solution is not None:
        line = mismatch(solver.solution, problem.solution)
        lines += [line] if line else []
    return lines, unverified


def answer_unverified(problem: Problem) -> str | None:
    """The first step the verifier could not check that the stated solution's final answer depends
    on, as the trace names it (None: the answer rests on no such step)."""
    found = verify(problem.solution, problem.question)
    return found.depended[0].line() if found.depended else None


async def score(state: RefinementState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Combine this round's verdicts into Q and decide where to go."""
    context, number = runtime.context, state["round"]
    policy = context.policy
    raw = sorted((o for o in state["outcomes"] if o.round == number), key=lambda o: JUDGES.index(o.judge))
    outcomes = degenerate_panel(raw)
    result = score_round(votes_of(outcomes), policy)
    earlier = state.get("rounds") or []
    unchanged = same_version(state["current"], state.get("previous"))
    # An unchanged version is no revision: a split that "persists" over it says nothing new.
    previous = score_round(votes_of(earlier[-1].outcomes), policy) if earlier and not unchanged else None
    solver = next((s for s in reversed(state.get("solutions") or []) if s.round == number), None)
    gated = policy.verification_gate
    errors, unverified = gate_evidence(state["current"], solver, screen=context.screen) if gated else ([], [])
    decision = gate(decide(result, number, policy, previous), number, policy, len(errors))
    # a screen refuses every unverified step already; a model panel's acceptance is held for review
    # when the final answer rests on one
    decision, held = hold(
        decision, answer_unverified(state["current"]) if gated and not context.screen else None
    )
    reported = round_reported(outcomes, solver)
    decision, certify_reason = certify(
        decision, screen=context.screen, uncertified=context.uncertified_by(reported)
    )
    escalated = await _escalate(state, runtime, decision, result.quality, reported)
    if escalated is not None:
        decision, certify_reason = escalated.decision, escalated.reason
    unusable = not any(o.verdict is not None for o in outcomes)
    decision = Decision.ERROR if unusable else decision
    figures = RoundFigures.of(result, decision).model_dump()
    record = Round(
        round=number,
        problem=state["current"],
        outcomes=outcomes,
        verification=errors,
        unverified=unverified,
        solver=solver,
        unchanged=unchanged,
        escalations=[step.model_dump(mode="json") for step in escalated.steps] if escalated else [],
        **figures,
    )
    runtime.stream_writer(
        RoundScored(
            round=number,
            verification=errors,
            unverified=unverified,
            solver=solver,
            unchanged=unchanged,
            **figures,
        )
    )
    failures = record.failures()
    reason = held or certify_reason or _reason(decision, result.valid, failures)
    if errors and is_pass(result.quality, policy):
        what = {
            "final_answer": "a final answer the solver disagrees with",
            "unverified_step": "a step the screen could not check",
        }.get(_gate_check(errors[0]), "a verified error")
        reason = f"the stated solution has {what} ({errors[0]}): not accepted whatever the panel said"
    if unusable:
        reason = no_usable_verdict(outcomes)
    elif unchanged and decision is Decision.EXHAUSTED:
        reason = f"{reason}; {NO_REVISION}"
    return {
        "rounds": [record],
        "decision": decision.value,
        "stop_reason": reason,
        "failure": _failure(decision, failures, outcomes, reason),
    }


async def _escalate(
    state: RefinementState,
    runtime: Runtime[RunContext],
    decision: Decision,
    quality: float | None,
    reported: str | None,
) -> Escalated | None:
    """An acceptance below the calibrated threshold of the panel that judged it (its endpoint
    reporting ``reported``), up the cascade (None: not escalated)."""
    context = runtime.context
    guarantee = context.guarantee
    if decision is not Decision.ACCEPTED or guarantee is None or not guarantee.below(quality, reported):
        return None
    reference = state["original"] if context.policy.judge_against == "original" else state.get("previous")
    found = await escalate(
        guarantee,
        state["current"],
        reference,
        state["round"],
        quality,
        context.policy.max_rounds,
        reported,
    )
    for step in found.steps:
        runtime.stream_writer(step)
    return found


def _failure(
    decision: Decision, failures: Sequence[CallFailure], outcomes: Sequence[JudgeResult], reason: str
) -> CallFailure | None:
    """The cause of an error round: its first failed call, else (no call failed: every judge abstained
    or gave a degenerate verdict) the panel's unusable replies."""
    if decision is not Decision.ERROR:
        return None
    if failures:
        return failures[0]
    model = outcomes[0].model if outcomes else "panel"
    return CallFailure(kind="malformed", model=model, exception="NoUsableVerdict", message=reason[:500])


NO_REVISION = "no revision: the model under test returned the version it was asked to revise unchanged"
DEGENERATE_RATIONALES = "degenerate: every judge wrote the same rationale"
DEGENERATE_ZEROS = "degenerate: every judge gave score 0 with confidence 0"


def _spaced(text: str) -> str:
    """``text`` with its white space folded: what two versions the same up to spacing share."""
    return " ".join(text.split())


def _normal(text: str) -> str:
    return _spaced(text).casefold()


def same_version(current: Problem, previous: Problem | None) -> bool:
    """Whether ``current`` is ``previous`` again, up to whitespace: no revision was made."""
    if previous is None:
        return False
    return _spaced(current.question) == _spaced(previous.question) and _spaced(current.solution) == _spaced(
        previous.solution
    )


def round_reported(outcomes: Sequence[JudgeResult], solver: SolverResult | None) -> str | None:
    """The one model id the round's answered judge and solver calls reported (None: none answered,
    or they reported several): the reported id of the panel that judged this round."""
    calls = [o.reported_model for o in outcomes] + ([solver.reported_model] if solver is not None else [])
    return reported_by(calls)


def degenerate_panel(outcomes: Sequence[JudgeResult]) -> list[JudgeResult]:
    """The round's outcomes with a degenerate panel's verdicts turned into abstentions.

    Seven judges asked seven different questions do not write one rationale, and a panel that
    scores every judge 0 with confidence 0 said nothing (a base model copying its input does
    both): such verdicts are no evidence about the version, so they abstain with the reason
    ``degenerate: ...``. The judges that gave a verdict are compared (one that already abstained or
    failed is left as it is). The verdict as given stays in ``raw_outputs`` (and in its
    judge.verdict event).
    """
    given = [o.verdict for o in outcomes if o.verdict is not None]
    if len(given) < 2:  # one verdict alone is the judge's own check (agents.judges), not the panel's
        return list(outcomes)
    if len({_normal(v.rationale) for v in given}) == 1:
        why = DEGENERATE_RATIONALES
    elif all(v.score == 0 and v.confidence == 0 for v in given):
        why = DEGENERATE_ZEROS
    else:
        return list(outcomes)
    return [_abstain(o, why) if o.verdict is not None else o for o in outcomes]


def _abstain(outcome: JudgeResult, why: str) -> JudgeResult:
    assert outcome.verdict is not None  # degenerate_panel abstains judges that gave a verdict
    raw = outcome.raw_outputs or [outcome.verdict.model_dump_json()]
    return outcome.model_copy(update={"verdict": None, "abstain_reason": why, "raw_outputs": raw})


def no_usable_verdict(outcomes: Sequence[JudgeResult]) -> str:
    """Why a round in which no judge gave a usable verdict ended in error: the distinct causes."""
    causes = [o.failure.summary() if o.failure else (o.abstain_reason or "abstained") for o in outcomes]
    distinct = list(dict.fromkeys(causes))
    return f"the panel gave no usable verdict ({len(outcomes)} judge(s)): " + "; ".join(distinct[:3])


def votes_of(outcomes: Sequence[JudgeResult]) -> list[Vote]:
    """The judges' outcomes as votes for the scoring policy."""
    return [
        Vote(
            o.judge,
            o.verdict.score if o.verdict else None,
            o.verdict.confidence if o.verdict else None,
            failed=o.failure is not None,
        )
        for o in outcomes
    ]


def _reason(decision: Decision, valid: bool, failures: Sequence[CallFailure]) -> str:
    if decision is Decision.ERROR:
        causes = "; ".join(f.summary() for f in failures[:3])
        return f"the panel failed ({len(failures)} judge call(s)): {causes}"
    if decision is Decision.NEEDS_REVIEW:
        return (
            "no quorum: too many judges declined to score"
            if not valid
            else "judges stay split after a revision"
        )
    return {
        Decision.ACCEPTED: "quality reached the threshold",
        Decision.SCREENED: SCREENED_REASON,
        Decision.EXHAUSTED: "max_rounds reached",
        Decision.REVISE: "",
    }[decision]


def route_after_score(state: RefinementState) -> str:
    """Revise while the policy says so; anything else ends the run."""
    return "revise" if state["decision"] == Decision.REVISE else "finish"


async def revise(state: RefinementState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The model under test thinks aloud and proposes the next version."""
    record, number = state["rounds"][-1], state["round"]
    structlog.contextvars.bind_contextvars(round=number)
    request = RevisionRequest(
        round=number,
        current=state["current"],
        original=state["original"],
        findings=_findings(record.outcomes, runtime.context),
        suggestions=_suggestions(record),
    )

    def on_thinking(delta: str) -> None:
        runtime.stream_writer(ReviserThinking(round=number, delta=delta))

    context = runtime.context
    outcome, refused = await ask_until_revised(
        context.reviser, request, record.verification, context.revise_retries, on_thinking
    )
    runtime.stream_writer(proposed(outcome, state["current"]))
    if outcome.problem is None:
        return _unrevised(outcome)
    if refused:  # the model's failure, counted as such: never a version to judge, never a review
        return {
            "revisions": [outcome],
            "decision": Decision.EXHAUSTED.value,
            "stop_reason": f"{NOT_REVISED} ({len(outcome.not_revised)} attempt(s)): "
            + outcome.not_revised[-1],
        }
    return {"revisions": [outcome], "previous": state["current"], "current": outcome.problem}


def _unrevised(outcome: RevisionResult) -> dict[str, Any]:
    """The state update of a revision that gave no problem: the run ends in error, with its cause."""
    return {
        "revisions": [outcome],
        "decision": Decision.ERROR.value,
        "stop_reason": f"the model under test gave no usable revision: {outcome.error}",
        "failure": outcome.failure
        or CallFailure(
            kind="malformed",
            model=outcome.model,
            exception="NoRevision",
            message=(outcome.error or "no revision came back")[:500],
        ),
    }


def proposed(outcome: RevisionResult, revised: Problem) -> RevisionProposed:
    """The revision.proposed event of a revision of ``revised`` (flagged when it changed nothing)."""
    unchanged = outcome.problem is not None and same_version(outcome.problem, revised)
    note = NO_REVISION if unchanged else None
    if outcome.not_revised:
        note = f"{NOT_REVISED}: " + "; ".join(
            f"attempt {n}: {cause}" for n, cause in enumerate(outcome.not_revised, 1)
        )
    return RevisionProposed(
        round=outcome.round,
        problem=outcome.problem,
        error=outcome.error,
        failure=outcome.failure,
        model=outcome.model,
        usage=outcome.usage,
        unchanged=unchanged,
        note=note,
        not_revised=outcome.not_revised,
        givens_changed=changed_givens(revised.question, outcome.problem.question) if outcome.problem else [],
    )


def _findings(outcomes: list[JudgeResult], context: RunContext) -> tuple[Finding, ...]:
    # Abstentions are left out: an error message must never read as feedback.
    return tuple(
        Finding(
            o.judge,
            o.verdict.score,
            o.verdict.score >= context.policy.threshold(o.judge),
            o.verdict.rationale,
        )
        for o in outcomes
        if o.verdict is not None
    )


def _suggestions(record: Round) -> tuple[str, ...]:
    """The holistic judge's suggestions, then every computation the verifier found wrong and the
    solver's disagreement with the final answer."""
    advice = [f"[{_gate_check(line)}] {line}" for line in record.verification]
    for outcome in record.outcomes:
        if outcome.judge == HOLISTIC and isinstance(outcome.verdict, HolisticReply):
            advice = list(outcome.verdict.suggestions) + [
                a for a in advice if a not in outcome.verdict.suggestions
            ]
    return tuple(advice)


def _gate_check(line: str) -> str:
    if line.startswith("solver:"):
        return "final_answer"
    return "unverified_step" if line.startswith(UNVERIFIED) else "arithmetic_correct"


async def revise_unaided(state: RefinementState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The zero-shot control arm's one revision (round 0): the model under test improves the
    problem unaided, then the loop judges that version once.

    *Unaided* means blind: the reviser sees the problem and nothing else — no findings, no
    suggestions, no analysis by the panel's checks. The run says what one unguided revision
    achieves, beside what the feedback loop achieves on the same problem. A revision that fails
    ends the run in ``error`` (the problem is never judged in its place). A revision that changes
    nothing is flagged "no revision" (its event and its round): it is judged as the model's version,
    so it ends accepted, screened or exhausted, never in review (``score`` compares it with
    ``previous``, the problem).
    """
    problem = state["original"]
    structlog.contextvars.bind_contextvars(round=0)

    def on_thinking(delta: str) -> None:
        runtime.stream_writer(ReviserThinking(round=0, delta=delta))

    outcome = await runtime.context.reviser.revise_unaided(problem, on_thinking)
    runtime.stream_writer(proposed(outcome, problem))
    if outcome.problem is None:
        return _unrevised(outcome)
    return {
        "revisions": [outcome],
        "previous": problem,
        "current": outcome.problem,
        "decision": Decision.REVISE.value,
    }


def route_start(state: RefinementState) -> str:
    """The control arm starts with its blind revision; the loop with judging the problem."""
    return "revise_unaided" if state.get("arm") == "control" else "evaluate"


def route_after_revise(state: RefinementState) -> str:
    """Judge the new version; a failed revision ends the run."""
    return "evaluate" if state["decision"] == Decision.REVISE else "finish"


async def finish(state: RefinementState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Emit run.finished with RoundsToPass and AvgQualityScore (null for an error run: no score).
    A control whose blind revision failed ends here with no round judged."""
    rounds, error = state.get("rounds") or [], state["decision"] == Decision.ERROR
    metrics = outcome_metrics(state["decision"], rounds, runtime.context.policy)
    runtime.stream_writer(
        RunFinished(
            outcome=state["decision"],
            stop_reason=state.get("stop_reason", ""),
            rounds=len(rounds),
            final_quality=None if error or not rounds else rounds[-1].quality,
            rounds_to_pass=metrics.rounds_to_pass if metrics else None,
            avg_quality_final=metrics.avg_quality_final if metrics else None,
            avg_quality_all_steps=metrics.avg_quality_all_steps if metrics else None,
            failure=state.get("failure"),
        )
    )
    return {}


def build_refinement_graph(checkpointer: Any = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the loop; pass a LangGraph checkpointer to make runs durable."""
    graph = StateGraph(RefinementState, context_schema=RunContext)
    graph.add_node("evaluate", evaluate)
    # A Send target takes its own payload (JudgeTask), which the overloads do not model.
    graph.add_node("judge", judge)  # type: ignore[call-overload]
    graph.add_node("solve", solve)  # type: ignore[call-overload]
    graph.add_node("score", score)
    graph.add_node("revise", revise)
    graph.add_node("finish", finish)
    graph.add_node("revise_unaided", revise_unaided)
    graph.add_conditional_edges(START, route_start, ["revise_unaided", "evaluate"])
    graph.add_conditional_edges("revise_unaided", route_after_revise, ["evaluate", "finish"])
    graph.add_conditional_edges("evaluate", route_to_judges, ["judge", "solve"])
    # Two edges, not one join: score runs once after the superstep in which judges and solver ran,
    # and does not wait for a solver that was never sent.
    graph.add_edge("judge", "score")
    graph.add_edge("solve", "score")
    graph.add_conditional_edges("score", route_after_score, ["revise", "finish"])
    graph.add_conditional_edges("revise", route_after_revise, ["evaluate", "finish"])
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)


def recursion_limit(max_rounds: int) -> int:
    """Supersteps a run can need: evaluate, judge (with solve), score, revise per round, plus finish."""
    return 4 * max_rounds + 4
