"""Mechanisms of the offline panel that read meaning: each finds a flaw by what the problem says,
and leaves the sound version of the same problem alone."""

from __future__ import annotations

from fractions import Fraction

import pytest

from agents.rubric import detectors as d
from agents.rubric.facts import ProblemFacts
from agents.verify.verifier import verify


def wrong(solution: str) -> list[str]:
    return [e.claim for e in verify(solution).errors]


# ---- the verifier ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("Paint : water = 300 : 600 = 1 : 2.", True),
        ("Paint : water = 300 : 600 = 1 : 3.", False),
        ("It starts at 9:15 and 9:15 + 30 min = 9:45.", True),  # a clock is not a ratio
        ("Step 1: 120 × 0.9 = 108.", True),  # a label's colon is not a ratio
    ],
)
def test_ratios_are_compared_as_ratios(solution: str, ok: bool) -> None:
    assert (wrong(solution) == []) is ok


def test_a_sum_said_as_two_numbers_together_is_checked() -> None:
    assert wrong(
        "Ten percent is thirty and five percent is fifteen, so thirty and fifteen together, which is fifty."
    )
    assert not wrong("Thirty and fifteen together, which is forty-five.")


def test_money_written_after_or_before_a_product_is_read() -> None:
    assert wrong("Over 3 years: 45 × 3 = 125 €.")
    assert not wrong("Adults: 2 * $12 = $24. Children: 3 * $7 = $21.")


def test_a_compound_duration_written_as_decimal_hours_is_a_conversion() -> None:
    found = verify("Time: 2 h 15 min = 2.25 h. Speed: 9 ÷ 2.25 = 4 km/h.")
    assert not found.errors and Fraction(9, 4) in {v for _, v in found.results}


# ---- where a solution's numbers come from --------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "solution"),
    [
        ("2/3 of the 30 pupils walk. How many do not walk?", "1/3 of 30 = 10 pupils do not walk."),
        (
            "Pipe A fills a tank in 10 minutes and pipe B in 15 minutes. Both are opened. How long?",
            "1/10 + 1/15 = 3/30 + 2/30 = 5/30 = 1/6 a minute, so 6 minutes.",
        ),
        (
            "The film lasts 50 minutes and the talk 35 minutes. How long in all?",
            "50 + 35 = 85 minutes, which is 1 hour and 25 minutes.",
        ),
        (
            "45% of the 600 fans wear red. How many wear red?",
            "40% of 600 is 240 and 5% of 600 is 30, so 240 + 30 = 270 fans.",
        ),
    ],
)
def test_numbers_worked_out_from_the_question_are_not_invented(question: str, solution: str) -> None:
    assert ProblemFacts(question, solution).untraced == []


def test_an_aside_after_the_answer_is_not_the_answer() -> None:
    facts = ProblemFacts(
        "How many shelves of 40 cm fit on a 3 m wall?", "300 ÷ 40 = 7.5, so 7 shelves (20 cm spare)."
    )
    assert facts.final_answer == 7


# ---- does the answer answer the question -------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "solution", "flawed"),
    [
        (
            "Pens cost €2 each. Leo buys 4 and pays with €10. How much change does he get?",
            "4 × 2 = 8, so Leo spends €8.",
            True,
        ),
        (
            "Pens cost €2 each. Leo buys 4 and pays with €10. How much change does he get?",
            "4 × 2 = 8 and 10 − 8 = 2, so €2.",
            False,
        ),
        (
            "€500 earns 2% simple interest a year. How much interest is earned in 3 years?",
            "500 × 0.02 = 10. Over 3 years: 10 × 3 = 30 €.",
            False,
        ),
        (
            "Her scores were 6, 8 and 10. What was her mean score per test?",
            "6 + 8 + 10 = 24. 24 ÷ 3 = 8 points per test.",
            False,
        ),
        (
            "Of 40 pupils, 3/4 have a pet. How many pupils do not have a pet?",
            "3/4 of 40 = 30, so 30 pupils have a pet.",
            True,
        ),
        (
            "Of 40 pupils, 3/4 have a pet. How many pupils do not have a pet?",
            "40 − 30 = 10 pupils do not have a pet.",
            False,
        ),
    ],
)
def test_the_answer_is_the_asked_quantity(question: str, solution: str, flawed: bool) -> None:
    assert bool(d.answers_the_question(ProblemFacts(question, solution))) is flawed


def test_a_square_given_by_its_perimeter_is_not_read_as_its_side() -> None:
    facts = ProblemFacts(
        "A square rug has a perimeter of 12 m. What is its area?", "Side = 12 ÷ 4 = 3 m. Area = 3 × 3 = 9 m²."
    )
    assert not d.operation_fits(facts)


def test_a_subtraction_said_in_words_is_a_subtraction() -> None:
    facts = ProblemFacts(
        "Ivo has 30 euros and spends a third of it. How much does he have left?",
        "A third of thirty euros is ten euros, which leaves him with twenty euros.",
    )
    assert not d.operation_fits(facts)
    adds = ProblemFacts(facts.question, "30 + 10 = 40 euros are left.")
    assert d.operation_fits(adds)


# ---- quantities the world allows ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "impossible"),
    [
        ("A minibus drives 90 km at 250 km/h. How long does it take?", True),
        ("A minibus drives 90 km at 60 km/h. How long does it take?", False),
        ("Ada is 8 years old and her grandfather is 131 years old. How much older is he?", True),
        ("In March Ola saved €2 on each of the 34 days of the month. How much did she save?", True),
        ("Lena cycles 18 km to her aunt's house at 12 km/h. How long does it take?", False),
        ("The classroom is 25 m high. How high are two classrooms stacked?", True),
    ],
)
def test_quantities_the_world_does_not_allow(question: str, impossible: bool) -> None:
    assert bool(d.plausible(ProblemFacts(question, "1 + 1 = 2."))) is impossible
