"""Reporting a run: the result object built from the graph's final state, and its end event."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from agents.llm.calls import CallFailure, Usage
from agents.outcome import SCORED_OUTCOMES, Outcome
from agents.schemas import Problem, RevisionResult
from graphs.events import RunEvent, RunFinished
from graphs.metrics import RunMetrics, outcome_metrics
from graphs.scoring import ScoringPolicy
from graphs.state import RefinementState, Round

# Where a driven run's typed events go as they happen (a live trace, a benchmark's marks).
EventSink = Callable[[RunEvent], None]


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
    rounds: list[Round]
    revisions: list[RevisionResult]
    metrics: dict[str, Any] | None
    usage: Usage
    failure: CallFailure | None = None
    # Set by the app on an accepted run: the validity record its project cites of the exact panel that
    # accepted ({"status": "valid", "record_id", "false_accept_upper", …}) or {"status": "none"}. Null
    # otherwise.
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
    """The report of a finished run; ``final`` and ``best`` are always evaluated versions. A run
    with no judged round ended in error before any was judged (the control's blind revision
    failed): its versions are the original, and it has no metrics."""
    rounds, revisions = state.get("rounds") or [], state.get("revisions", [])
    if not rounds:
        if state.get("decision") != Outcome.ERROR:
            raise RuntimeError("the run's state holds no judged round: there is nothing to report")
        original = state["original"]
        return RunResult(
            policy=policy.name,
            outcome=Outcome.ERROR,
            stop_reason=state.get("stop_reason", ""),
            original=original,
            final=original,
            best=original,
            best_round=0,
            rounds=[],
            revisions=list(revisions),
            metrics=None,
            usage=sum((r.usage for r in revisions), Usage()),
            failure=state.get("failure"),
        )
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
