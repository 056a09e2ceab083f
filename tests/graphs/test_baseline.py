"""The zero-shot control arm: one blind revision, judged once against the original."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from agents.rubric import panel as rubric_panel
from agents.rubric.panel import RubricReviser
from agents.simulator import Rule, SimulatorServer
from graphs.context import RunContext
from tests.helpers.driving import drive
from tests.helpers.problems import ORCHESTRA


def fenced(body: dict[str, object]) -> dict[str, object]:
    content = str(body["messages"][-1]["content"])  # type: ignore[index]
    data: dict[str, object] = json.loads(content.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    return data


async def test_the_llm_reviser_sees_the_problem_alone(
    sim: Callable[..., SimulatorServer], llm_context: Callable[..., RunContext]
) -> None:
    server = sim([Rule(role="^Judge", score=40)])
    result = await drive(ORCHESTRA, llm_context(), arm="control")
    assert len(result.rounds) == 1 and result.outcome == "exhausted"
    assert result.original == ORCHESTRA and result.final.question.endswith("(revised 1)")
    first = server.state.requests[0]
    assert first.role == "Reviser (unaided)"  # its own prompt, and before any judge has spoken
    assert fenced(first.body) == {"question": ORCHESTRA.question, "solution": ORCHESTRA.solution}
    judges = [r for r in server.state.requests if r.role.startswith("Judge")]
    assert len(judges) == 7 and all(ORCHESTRA.question in str(r.body["messages"]) for r in judges)
    assert result.usage.calls == 9 and len(result.revisions) == 1  # the reviser, 7 judges, the solver


async def test_the_offline_reviser_runs_no_check_when_blind(
    monkeypatch: pytest.MonkeyPatch, rubric_context: Callable[..., RunContext]
) -> None:
    def forbidden(*_: object, **__: object) -> None:
        raise AssertionError("the blind reviser consulted the panel's analysis")

    for name in ("run_checks", "repair", "ProblemFacts", "facts_of", "_reported_checks"):
        monkeypatch.setattr(rubric_panel, name, forbidden)
    thinking: list[str] = []
    outcome = await RubricReviser().revise_unaided(ORCHESTRA, thinking.append)
    assert outcome.problem == ORCHESTRA and "no feedback" in "".join(thinking)


async def test_the_offline_control_judges_the_original(rubric_context: Callable[..., RunContext]) -> None:
    result = await drive(ORCHESTRA, rubric_context(), arm="control")
    assert result.rounds[0].problem == ORCHESTRA and result.outcome == "exhausted"


async def test_a_failed_blind_revision_is_an_error_never_judged(
    sim: Callable[..., SimulatorServer], llm_context: Callable[..., RunContext]
) -> None:
    server = sim([Rule(role="^Reviser", status=503)])
    result = await drive(ORCHESTRA, llm_context(), arm="control")
    assert result.outcome == "error" and result.rounds == []
    assert result.failure is not None and result.failure.status == 503 and result.failure.model == "sim"
    assert not any(r.role.startswith("Judge") for r in server.state.requests)
