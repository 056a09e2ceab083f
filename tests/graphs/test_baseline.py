"""The zero-shot control arm: one unguided revision, judged once against the original."""

from __future__ import annotations

from collections.abc import Callable

from agents.simulator import Rule, SimulatorServer
from graphs.baseline import run_control
from graphs.context import RunContext
from tests.conftest import ORCHESTRA


async def test_control_revises_without_feedback_and_judges_once(
    sim: Callable[..., SimulatorServer], llm_context: Callable[..., RunContext]
) -> None:
    import json

    server = sim([Rule(role="^Judge", score=40)])
    result = await run_control(ORCHESTRA, llm_context())
    assert len(result.rounds) == 1 and result.outcome == "exhausted"
    assert result.original == ORCHESTRA and result.final.question.endswith("(revised)")
    reviser = next(r for r in server.state.requests if r.role == "Reviser")
    data = json.loads(reviser.body["messages"][-1]["content"].split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    assert data["feedback"] == [] and data["suggestions"] == []  # no feedback at all
    judge = next(r for r in server.state.requests if r.role.startswith("Judge"))
    assert ORCHESTRA.question in judge.body["messages"][-1]["content"]  # the original is the reference
    assert result.usage.calls == 8 and len(result.revisions) == 1


async def test_control_on_the_offline_panel(rubric_context: Callable[..., RunContext]) -> None:
    result = await run_control(ORCHESTRA, rubric_context())
    assert result.outcome == "accepted" and result.metrics["rounds_to_pass"] == 1
