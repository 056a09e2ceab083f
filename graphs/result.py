"""Running the loop and reporting it: the result object and the runner that streams events."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import StreamMode
from pydantic import BaseModel, ConfigDict

from agents.schemas import CallFailure, Problem, RevisionResult, Usage
from graphs.context import RunContext
from graphs.events import RunEvent, RunFinished
from graphs.metrics import RunMetrics, outcome_metrics
from graphs.refinement import build_refinement_graph, recursion_limit
from graphs.scoring import SCORED_OUTCOMES, Outcome, ScoringPolicy
from graphs.state import RefinementState, RoundRecord

EventSink = Callable[[RunEvent], None]


@functools.cache
def _shared_graph() -> Any:
    """The loop without a checkpointer, compiled once: compiling costs about 5 ms, and a compiled
    graph keeps no per-run state, so concurrent runs share it."""
    return build_refinement_graph()


class RunResult(BaseModel):
    """A finished run: every evaluated round, every revision, the outcome and the metrics.

    ``metrics`` is None for an ``error`` run: a failure is never a score (``stop_reason`` and
    ``failure`` say why it has none).
    """

    model_config = ConfigDict(frozen=True)

    policy: str
    outcome: str
    stop_reason: str
    original: Problem
    final: Problem
    best: Problem
    best_round: int
    rounds: list[RoundRecord]
    revisions: list[RevisionResult]
    metrics: dict[str, Any] | None
    usage: Usage
    failure: CallFailure | None = None
    # Set by the app on an accepted run: the newest validity record of the exact panel that accepted
    # ({"status": "valid", "record_id", "false_accept_upper", …}) or {"status": "none"}. Null otherwise.
    warrant: dict[str, Any] | None = None

    @property
    def scored(self) -> bool:
        """Whether the outcome is the model's pass or failure (accepted or exhausted)."""
        return self.outcome in SCORED_OUTCOMES


def finished_event(result: RunResult) -> RunFinished:
    """The run.finished event of a result, for a run whose stream ended before its own (a resumed
    run whose finish step had already run): the same fields the finish node writes."""
    metrics = result.metrics or {}
    return RunFinished(
        outcome=result.outcome,
        stop_reason=result.stop_reason,
        rounds=len(result.rounds),
        final_quality=result.rounds[-1].quality if result.rounds and result.metrics is not None else None,
        rounds_to_pass=metrics.get("rounds_to_pass"),
        avg_quality_final=metrics.get("avg_quality_final"),
        avg_quality_all_steps=metrics.get("avg_quality_all_steps"),
        failure=result.failure,
    )


def build_result(state: RefinementState, policy: ScoringPolicy) -> RunResult:
    """The report of a finished run; ``final`` and ``best`` are always evaluated versions."""
    rounds, revisions = state.get("rounds") or [], state.get("revisions", [])
    if not rounds:
        raise RuntimeError("the run's state holds no judged round: there is nothing to report")
    best = max(rounds, key=lambda r: (r.quality if r.quality is not None else -1.0, -r.round))
    calls = [
        *(o.usage for r in rounds for o in r.outcomes),
        *(r.solver.usage for r in rounds if r.solver is not None),
        *(r.usage for r in revisions),
    ]
    usage = sum(calls, Usage())
    return RunResult(
        policy=policy.name,
        outcome=state["decision"],
        stop_reason=state.get("stop_reason", ""),
        original=state["original"],
        final=rounds[-1].problem,
        best=best.problem,
        best_round=best.round,
        rounds=list(rounds),
        revisions=list(revisions),
        metrics=_as_dict(outcome_metrics(state["decision"], rounds, policy)),
        usage=usage,
        failure=state.get("failure"),
    )


def _as_dict(metrics: RunMetrics | None) -> dict[str, Any] | None:
    return dataclasses.asdict(metrics) if metrics is not None else None


def unjudged_error(problem: Problem, policy: ScoringPolicy, revision: RevisionResult) -> RunResult:
    """A run that ended in error before any version was judged (the reviser failed first)."""
    return RunResult(
        policy=policy.name,
        outcome=Outcome.ERROR,
        stop_reason=f"the model under test gave no usable revision: {revision.error}",
        original=problem,
        final=problem,
        best=problem,
        best_round=0,
        rounds=[],
        revisions=[revision],
        metrics=None,
        usage=revision.usage,
        failure=revision.failure,
    )


async def run_refinement(
    problem: Problem,
    context: RunContext,
    *,
    on_event: EventSink | None = None,
    graph: Any = None,
    original: Problem | None = None,
) -> RunResult:
    """Run the loop to its end, forwarding every typed event to ``on_event``.

    ``original`` (default: ``problem``) is the version judges compare against for intent; the
    zero-shot control arm passes the untouched problem here and its one revision as ``problem``.
    """
    compiled = graph if graph is not None else _shared_graph()
    start: RefinementState = {
        "original": original or problem,
        "current": problem,
        "previous": original,
        "round": 0,
    }
    config: RunnableConfig = {"recursion_limit": recursion_limit(context.policy.max_rounds)}
    modes: list[StreamMode] = ["custom", "values"]
    final: RefinementState | None = None
    async for mode, chunk in compiled.astream(start, config=config, context=context, stream_mode=modes):
        if mode == "custom" and on_event is not None:
            on_event(cast(RunEvent, chunk))
        elif mode == "values":
            final = cast(RefinementState, chunk)
    assert final is not None and final.get("rounds"), "the graph ended without evaluating"
    return build_result(final, context.policy)
