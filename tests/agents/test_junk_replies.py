"""Schema-valid replies that say nothing (issue 36): degenerate verdicts and self-contradicting
solvers are failures with their cause and their raw output kept, never a score."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agents.answers import inconsistent, mismatch
from agents.judges import JudgeRequest, LLMJudge
from agents.llm.client import LLMClient
from agents.schemas import Solution
from agents.simulator import Rule, SimulatorServer
from agents.solver import LLMSolver
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]
Client = Callable[..., LLMClient]
REQUEST = JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA)
FIVE = ("concepts", "prerequisites", "representations", "alternative_values", "narrative")


def verdict(**fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "own_answer": "80 minutes",
        "rationale": "The solution scales the time the wrong way round.",
        "score": 40,
        "confidence": 70,
    }
    return values | fields


async def judged(sim: Sim, client: Client, reply: dict[str, Any], judge: str = "apply") -> Any:
    sim([Rule(role="^Judge", json=reply)])
    return await LLMJudge(client()).assess(JudgeRequest(judge, 1, ORCHESTRA, ORCHESTRA))  # type: ignore[arg-type]


async def test_a_verdict_that_copies_the_solution_abstains(sim: Sim, client: Client) -> None:
    copy = verdict(own_answer=ORCHESTRA.solution, rationale=ORCHESTRA.solution, score=0, confidence=0)
    outcome = await judged(sim, client, copy)
    assert outcome.verdict is None and outcome.abstained
    assert outcome.abstain_reason == "degenerate: the rationale copies the problem it was given"
    assert outcome.failure is None  # the call worked: an abstention, not a failed call
    assert json.loads(outcome.raw_outputs[-1])["rationale"] == ORCHESTRA.solution  # the raw output kept


async def test_a_copy_of_the_question_in_other_case_and_spacing_is_still_a_copy(
    sim: Sim, client: Client
) -> None:
    words = ORCHESTRA.question.split()[:12]
    outcome = await judged(sim, client, verdict(own_answer="  ".join(words).upper()))
    assert outcome.abstain_reason == "degenerate: the own_answer copies the problem it was given"


async def test_score_zero_with_confidence_zero_abstains(sim: Sim, client: Client) -> None:
    outcome = await judged(sim, client, verdict(score=0, confidence=0))
    assert outcome.verdict is None and outcome.abstain_reason == "degenerate: score 0 with confidence 0"


async def test_a_holistic_verdict_of_punctuation_abstains(sim: Sim, client: Client) -> None:
    junk = verdict(
        rationale='":{"', five_keys=dict.fromkeys(FIVE, '":{"'), suggestions=['":{"'], score=50, confidence=50
    )
    outcome = await judged(sim, client, junk, judge="holistic")
    assert outcome.verdict is None and outcome.abstain_reason is not None
    assert outcome.abstain_reason.startswith("degenerate: no words in rationale, five_keys.concepts")


async def test_a_sound_verdict_that_shares_the_solutions_answer_is_kept(sim: Sim, client: Client) -> None:
    sound = verdict(
        own_answer="80 minutes", rationale="It says 80 minutes, as I found.", score=0, confidence=90
    )
    outcome = await judged(sim, client, sound)
    assert outcome.verdict is not None and outcome.verdict.score == 0 and outcome.abstain_reason is None


async def test_an_own_answer_that_restates_the_solutions_last_clause_is_kept(
    sim: Sim, client: Client
) -> None:
    """Agreeing with the solution is not copying it: only most of a solution handed back is."""
    last = ORCHESTRA.solution.split(": ")[-1]  # "40 × 120 / 60 = 80 minutes."
    sound = verdict(own_answer=f"It takes {last}", rationale="The time does not scale like that.")
    outcome = await judged(sim, client, sound)
    assert outcome.verdict is not None and outcome.abstain_reason is None


SOLVED = {"working": "Half the players take the same time.", "unit": "minutes"}


async def test_a_solver_that_contradicts_itself_is_asked_again(sim: Sim, client: Client) -> None:
    contradiction = Rule(role="^Solver", json=SOLVED | {"answer": "40 minutes", "value": 12.5}, times=1)
    server = sim([contradiction, Rule(role="^Solver", answer="40 minutes")])
    result = await LLMSolver(client()).solve(ORCHESTRA, 1)
    assert result.solution is not None and result.solution.value == 40 and result.failure is None
    assert len(result.raw_outputs) == 2 and len(server.state.requests) == 2
    again = server.state.requests[1].body["messages"]
    assert "the number in `answer` is not the number in `value`" in again[-1]["content"]
    assert "12.5" in again[-2]["content"]  # its own reply, as the assistant's turn


async def test_a_solver_that_contradicts_itself_twice_fails_with_the_cause(sim: Sim, client: Client) -> None:
    server = sim([Rule(role="^Solver", json=SOLVED | {"answer": "40 minutes", "value": 12.5})])
    result = await LLMSolver(client()).solve(ORCHESTRA, 1)
    assert result.solution is None and result.failure is not None
    assert (result.failure.kind, result.failure.exception) == ("malformed", "InconsistentAnswer")
    assert "'40 minutes'" in result.failure.message and "12.5 minutes" in result.failure.message
    assert len(server.state.requests) == 2 and len(result.raw_outputs) == 2


def solution(answer: str, value: float | None, unit: str = "") -> Solution:
    return Solution(working="…", answer=answer, value=value, unit=unit)


def test_answer_and_value_agree_or_do_not() -> None:
    assert inconsistent(solution("40 minutes", 12.5, "minutes")) is not None
    assert inconsistent(solution("40 minutes", 40, "minutes")) is None
    assert inconsistent(solution("80 minutes (1 hour 20 minutes)", 80, "minutes")) is None
    assert inconsistent(solution("1.5 km", 1500, "m")) is None  # one answer in two units
    assert inconsistent(solution("25%", 0.25)) is None
    assert inconsistent(solution("no number", None)) is None
    assert inconsistent(solution("eighty minutes", 80, "minutes")) is None
    # another unit than the value's is no conversion away: Gemma's "40 minutes" with 12.5 dollars
    assert inconsistent(solution("40 minutes", 12.5, "dollars")) is not None
    assert inconsistent(solution("12.5 minutes", 12.5, "dollars")) is None  # the same number, mislabelled


def test_mismatch_names_the_two_numbers_it_compared() -> None:
    line = mismatch(solution("40 minutes", 12.5, "minutes"), ORCHESTRA.solution)
    assert line == "solver: the question's answer is 12.5 minutes; the solution says 80 minutes"
