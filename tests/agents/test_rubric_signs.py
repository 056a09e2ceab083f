"""A count or a sum of money given below zero is a quantity no story allows (issue 52). Every problem
is written for these tests; each flawed one has a sound neighbour, with a sign, that must pass."""

from __future__ import annotations

import pytest

from agents.judges import JudgeRequest
from agents.rubric import rules as d
from agents.rubric.facts import ProblemFacts
from agents.rubric.limits import negative_given
from agents.rubric.panel import RubricJudge
from agents.schemas import JUDGES, Problem


@pytest.mark.parametrize(
    ("question", "found"),
    [
        ("Mia ate -4 plums. She had 10 plums. How many plums are left?", "-4 plums"),
        ("Each crate holds -12 bottles. How many bottles are in 3 crates?", "-12 bottles"),
        ("-15 children went swimming and 8 went rowing. How many went in all?", "-15 children"),
        ("Sam has 40 dollars. How many kites can he buy if each kite costs $ -8?", "money of -8"),
        ("A kite costs $-8. How much do 3 kites cost?", "money of -8"),
        ("Ravi sold −6 tickets on Monday and 9 on Tuesday. How many did he sell?", "-6 tickets"),
    ],
)
def test_a_count_or_a_price_below_zero_is_impossible(question: str, found: str) -> None:
    evidence = d.plausible(ProblemFacts(question, "The answer is 6."))
    assert evidence and found in evidence


@pytest.mark.parametrize(
    "question",
    [
        "At dawn it was -4 degrees and by noon it was 6 degrees. How much warmer was it at noon?",
        "The lift went from floor -2, the basement, to floor 5. How many floors did it rise?",
        "Ann's bank balance is $-40. She pays in $100. What is her balance now?",
        "A diver is at -12 metres below sea level and rises 5 metres. Where is she now?",
        "Mia had 10 plums. She ate 4 plums. How many plums are left?",
        "What is the maximum value of $-5r^2 + 40r - 12$ for real $r$?",
        "Work out 20 - 8 apples' worth of change: 12 - 3 pears are left. How many pears?",
        "A kite costs $8 - $3 in the sale. How much is it?",
    ],
)
def test_a_sign_the_story_allows_or_a_subtraction_is_no_finding(question: str) -> None:
    assert negative_given(ProblemFacts(question, "The answer is 6.")) == ""


async def _refusing(question: str, solution: str) -> set[str]:
    """The judges whose plausible_quantities check fails the version (score below the pass mark)."""
    problem = Problem(question=question, solution=solution)
    out: set[str] = set()
    for judge in JUDGES:
        outcome = await RubricJudge().assess(JudgeRequest(judge, 1, problem, problem))
        verdict = outcome.verdict
        assert verdict is not None
        if verdict.score < 50 and "[plausible_quantities]" in verdict.rationale:
            out.add(judge)
    return out


async def test_the_screen_refuses_a_negative_count_with_its_check() -> None:
    """Through the judges: the plausible_quantities check fails, at the levels the taxonomy names
    for an impossible quantity; the same story without the sign passes it."""
    solution = "20 - 7 = 13. The answer is 13 grapes."
    bad = await _refusing("Bobi ate -7 grapes. He had 20 grapes. How many grapes are left?", solution)
    assert {"evaluate", "holistic"} <= bad
    assert not await _refusing("Bobi ate 7 grapes. He had 20 grapes. How many grapes are left?", solution)


async def test_a_ratio_with_a_zero_side_is_judged_not_a_crash() -> None:
    """'10 minutes walking for every 0 minutes sitting' (a UMWP-like unrealistic condition) made
    the operation check divide by zero, and the version ended in an error, not a verdict."""
    problem = Problem(
        question="Jo should walk 10 minutes for every 0 minutes she sits. She sits for 3 hours. "
        "How long will she walk?",
        solution="3 × 60 = 180. 180 ÷ 10 = 18. The answer is 18 minutes.",
    )
    for judge in JUDGES:
        outcome = await RubricJudge().assess(JudgeRequest(judge, 1, problem, problem))
        assert outcome.verdict is not None
        assert 0 <= outcome.verdict.score <= 100
