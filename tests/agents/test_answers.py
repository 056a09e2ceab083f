"""The solver's final answer against the stated solution's: read, converted, compared with rounding."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agents.answers import mismatch, stated_answer
from agents.llm.client import LLMClient
from agents.schemas import Problem, Solution
from agents.simulator import Rule, SimulatorServer
from agents.solver import LLMSolver
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]


def solved(value: float | None, unit: str = "", answer: str = "") -> Solution:
    return Solution(working="...", answer=answer or f"{value} {unit}".strip(), value=value, unit=unit)


@pytest.mark.parametrize(
    ("solution", "value", "text"),
    [
        ("With half as many musicians: 40 × 120 / 60 = 80 minutes.", 80, "80 minutes"),
        (
            "The answer is $12.50, since 5 × 2.50 = 12.50 and then I checked 12.50 − 2 = 10.50.",
            12.5,
            "$12.50",
        ),
        ("So 25% of the class walks to school.", 25, "25%"),
        ("She ends with 3 - 5 = -2 degrees.", -2, "-2 degrees"),
        ("The answer is 4 1/2 cups.", 4.5, "4 1/2"),
        ("He has one thousand five hundred metres left.", 1500, "1500 metres"),
    ],
)
def test_the_stated_final_answer_is_read(solution: str, value: float, text: str) -> None:
    answer = stated_answer(solution)
    assert answer is not None and answer.value == value and answer.text == text


@pytest.mark.parametrize("solution", ["", "The problem has no answer.", "Dinner starts at 7:30 pm."])
def test_no_number_or_a_time_of_day_is_not_read(solution: str) -> None:
    assert stated_answer(solution) is None


@pytest.mark.parametrize(
    ("answer", "stated"),
    [
        (solved(80, "minutes"), "40 × 120 / 60 = 80 minutes."),
        (solved(1.5, "km"), "He has 1500 m left."),  # converted
        (solved(0.25), "So 25% of the class."),  # a share written two ways
        (solved(33.333333), "Each gets 33.33 grams."),  # rounded by the solution
        (solved(33), "Each gets 33.33 grams."),  # rounded by the solver
        (solved(12.5, "dollars"), "The answer is $12.50."),
        (solved(1 / 3), "So 1/3 of the pizza is left."),
    ],
)
def test_the_same_answer_is_no_mismatch(answer: Solution, stated: str) -> None:
    assert mismatch(answer, stated) is None


@pytest.mark.parametrize(
    "answer",
    [
        solved(None, answer="unanswerable: the speed is not given"),  # no number to compare
        solved(12, "dollars"),  # dollars against minutes: not the same quantity
    ],
)
def test_what_cannot_be_compared_is_no_mismatch(answer: Solution) -> None:
    assert mismatch(answer, "40 × 120 / 60 = 80 minutes.") is None


def test_a_different_answer_is_a_mismatch_that_names_both() -> None:
    line = mismatch(solved(40, "minutes", "40 minutes"), ORCHESTRA.solution)
    assert line == "solver: the question's answer is 40 minutes; the solution says 80 minutes"
    assert mismatch(solved(33.4), "Each gets 33.33 grams.") is not None  # beyond either rounding
    assert mismatch(solved(2, "km"), "He has 1400 m left.") is not None  # 1.5 km would round to 2


async def test_the_solver_sees_the_question_alone(sim: Sim, client: Callable[..., LLMClient]) -> None:
    server = sim([Rule(role="^Solver", answer="40 minutes")])
    outcome = await LLMSolver(client()).solve(ORCHESTRA, 1)
    assert (
        outcome.solution is not None and outcome.solution.value == 40 and outcome.solution.unit == "minutes"
    )
    assert outcome.prompt_version.startswith("solver@") and outcome.usage.calls == 1
    body = server.state.requests[0].body
    assert body["response_format"]["json_schema"]["name"] == "Solution"
    assert ORCHESTRA.question in body["messages"][1]["content"]
    assert ORCHESTRA.solution not in str(body["messages"])


async def test_an_unscripted_solver_gives_no_number(sim: Sim, client: Callable[..., LLMClient]) -> None:
    sim()
    outcome = await LLMSolver(client()).solve(Problem(question="How many?"), 1)
    assert outcome.solution is not None and outcome.solution.value is None


async def test_a_failed_solver_call_is_data(sim: Sim, client: Callable[..., LLMClient]) -> None:
    sim([Rule(role="^Solver", status=503)])
    outcome = await LLMSolver(client(max_retries=0)).solve(ORCHESTRA, 1)
    assert outcome.solution is None and outcome.failure is not None
    assert outcome.failure.kind == "endpoint" and outcome.failure.status == 503
