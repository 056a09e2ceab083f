"""When a refusal detects a labelled flaw: the judge's evidence rule and the answer key, both ways."""

from __future__ import annotations

import pytest

from agents.answers import FinalAnswer, stated_answer
from agents.labelled.evidence import answer_key, names_evidence, numbers_in, solver_finds_the_flaw

SYMPHONY = "A symphony lasts 40 minutes however many musicians play it; it does not scale with the orchestra."


@pytest.mark.parametrize(
    "rationale",
    [
        "The length of the symphony does not change with the number of musicians.",  # two content words
        "Scaling 40 minutes by the players is wrong.",  # a number of the evidence
        "It says forty minutes times 12; the piece still lasts forty minutes.",  # a worded number
        "The ORCHESTRA size cannot scale the duration.",  # stems: orchestra, scale
    ],
)
def test_a_rationale_that_names_the_evidence_counts(rationale: str) -> None:
    assert names_evidence(rationale, [SYMPHONY])


@pytest.mark.parametrize(
    "rationale",
    [
        "This is not right.",  # a content-blind judge
        "The problem has an error in its solution; the answer is wrong.",  # only generic words
        "Step 1 is unclear and both steps need more work.",  # 1 and 2 name nothing
        "The musicians are fine.",  # one content word of the evidence is not enough
        "",
    ],
)
def test_a_rationale_that_names_nothing_of_the_evidence_does_not(rationale: str) -> None:
    assert not names_evidence(rationale, [SYMPHONY])


def test_any_one_of_several_flaws_evidence_is_enough() -> None:
    evidence = [SYMPHONY, "The price of 3 tickets is given twice with different totals."]
    assert names_evidence("Two different ticket totals are given.", evidence)


def test_numbers_are_read_in_digits_and_in_words() -> None:
    assert {40.0, 200.0, 1200.0, 4.5} <= numbers_in("40 min, two hundred, 1,200 cm, 4 1/2 cups")


KEY = answer_key("Each bag holds 6 apples, so 4 bags hold 4 × 6 = 24 apples.")
FLAWED = stated_answer("Each bag holds 6 apples, so 4 bags hold 4 + 6 = 10 apples.")


def solver(value: float, unit: str = "apples") -> FinalAnswer | None:
    from agents.answers import solver_answer
    from agents.schemas import Solution

    return solver_answer(Solution(working="", answer=f"{value:g} {unit}", value=value, unit=unit))


def test_the_solver_detects_only_when_it_reaches_the_answer_key() -> None:
    assert solver_finds_the_flaw(solver(24), KEY, FLAWED)
    assert not solver_finds_the_flaw(solver(12), KEY, FLAWED)  # disagrees with both: no detection
    assert not solver_finds_the_flaw(solver(10), KEY, FLAWED)  # agrees with the flawed solution


def test_no_answer_key_no_solver_detection() -> None:
    assert answer_key(None) is None
    assert not solver_finds_the_flaw(solver(24), None, FLAWED)
    assert not solver_finds_the_flaw(None, KEY, FLAWED)
