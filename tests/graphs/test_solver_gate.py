"""The solver step: a version whose final answer differs from the solver's is never accepted; a
solver that fails is neither a pass nor a fail. Through the simulator and the real client."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from agents.schemas import Problem
from agents.simulator import Rule, SimulatorServer
from graphs.context import RunContext
from graphs.events import RoundScored, RunEvent
from graphs.result import RunResult
from tests.helpers.driving import drive
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]
Ctx = Callable[..., RunContext]
PENS = Problem(
    question="Sam buys 3 pens at $2 each. How much does he pay?",
    solution="3 × $2 = $6, so Sam pays $6.",
)
DISAGREES = "solver: the question's answer is 40 minutes; the solution says 80 minutes"


async def run(context: RunContext, problem: Problem = ORCHESTRA) -> tuple[RunResult, list[RunEvent]]:
    events: list[RunEvent] = []
    result = await drive(problem, context, on_event=events.append)
    return result, events


def solver_requests(server: SimulatorServer) -> list[Any]:
    return [r for r in server.state.requests if r.role == "Solver"]


async def test_a_disagreeing_answer_is_never_accepted(sim: Sim, llm_context: Ctx) -> None:
    # Every judge passes the orchestra (80 minutes); the solver, from the question alone, says 40.
    server = sim([Rule(role="^Solver", answer="40 minutes")])
    result, events = await run(llm_context(max_rounds=2))
    assert result.outcome == "exhausted" and len(result.rounds) == 2
    first = result.rounds[0]
    assert first.quality is not None and first.quality >= 0.85  # the panel alone would accept
    assert first.decision == "revise" and first.verification == [DISAGREES]
    assert first.solver is not None and first.solver.solution is not None
    assert first.solver.solution.answer == "40 minutes"
    assert (
        "a final answer the solver disagrees with" in result.stop_reason and DISAGREES in result.stop_reason
    )
    scored = [e for e in events if isinstance(e, RoundScored)]
    assert scored[0].verification == [DISAGREES] and scored[0].solver == first.solver
    reviser = next(r for r in server.state.requests if r.role == "Reviser")
    assert f"[final_answer] {DISAGREES}" in json.dumps(reviser.body)
    assert result.metrics is not None
    assert result.metrics["rounds_to_pass"] is None  # a refused round never counts as a pass


async def test_the_solver_runs_beside_the_judges_on_the_question_alone(sim: Sim, llm_context: Ctx) -> None:
    server = sim([Rule(role="^Solver", answer="40 minutes")], gate=8, gate_timeout_s=3.0)
    await run(llm_context(max_rounds=1))
    first_round = server.state.requests[:8]
    assert sorted(r.role.split(":")[0] for r in first_round) == ["Judge"] * 7 + ["Solver"]
    answered = [r.answered for r in first_round if r.answered is not None]
    assert len(answered) == len(first_round)  # every request of the round was answered
    assert max(r.arrived for r in first_round) < min(answered)  # concurrent
    solver = solver_requests(server)[0]
    assert ORCHESTRA.question in solver.body["messages"][1]["content"]
    assert ORCHESTRA.solution not in json.dumps(solver.body)


async def test_an_agreeing_answer_is_accepted_as_before(sim: Sim, llm_context: Ctx) -> None:
    sim([Rule(role="^Solver", answer="$6")])
    result, _ = await run(llm_context(), PENS)
    assert result.outcome == "accepted" and len(result.rounds) == 1
    first = result.rounds[0]
    assert first.verification == [] and first.solver is not None and first.solver.solution is not None
    assert first.solver.solution.value == 6
    assert result.usage.calls == 8  # seven judges and the solver, all accounted


@pytest.mark.parametrize(
    ("rule", "kind"),
    [(Rule(role="^Solver", status=503), "endpoint"), (Rule(role="^Solver", malformed=True), "malformed")],
    ids=["endpoint-down", "malformed"],
)
async def test_a_failed_solver_is_neither_pass_nor_fail(
    sim: Sim, llm_context: Ctx, rule: Rule, kind: str
) -> None:
    sim([rule])
    result, events = await run(llm_context(), ORCHESTRA)
    assert result.outcome == "accepted"  # the judges decide; the solver's failure gates nothing
    first = result.rounds[0]
    assert first.verification == []
    assert first.solver is not None and first.solver.solution is None
    assert first.solver.failure is not None and first.solver.failure.kind == kind
    assert result.failure is None  # and it is not the run's failure either
    scored = next(e for e in events if isinstance(e, RoundScored))
    assert scored.solver is not None and scored.solver.failure == first.solver.failure


async def test_no_solver_without_a_gate_or_a_model(sim: Sim, llm_context: Ctx, rubric_context: Ctx) -> None:
    server = sim([Rule(role="^Solver", answer="40 minutes")])
    ungated, _ = await run(
        llm_context(verification_gate=False, max_rounds=1)
    )  # its answer feeds the gate only
    assert solver_requests(server) == [] and ungated.rounds[0].solver is None
    offline, _ = await run(rubric_context())
    assert offline.rounds[0].solver is None and rubric_context().solver is None
