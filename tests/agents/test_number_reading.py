"""How the panel and the verifier read numbers: whole decimals, unit conversions of areas and
volumes, and scientific notation as one exact number."""

from __future__ import annotations

from fractions import Fraction

import pytest

from agents.rubric import roles
from agents.rubric import rules as detectors
from agents.rubric.facts import ProblemFacts
from agents.rubric.repairs import repair
from agents.schemas import Problem
from agents.verify.text import decimal_text, with_digits
from agents.verify.verifier import verify

# ---- a decimal is read whole ---------------------------------------------------------------------


def test_a_premise_is_not_read_from_the_integer_part_of_a_decimal() -> None:
    """19.6 × 3 is a computation with the question's 19.6, not a stated crate of 19 kg."""
    facts = ProblemFacts(
        "A crate of apples weighs 19.6 kg. How much do 3 crates weigh?",
        "The crate weighs 19.6 × 3 = 58.8 kg altogether.",
    )
    assert roles.stated_premise(facts) == ""


def test_a_supplied_decimal_premise_is_quoted_whole() -> None:
    facts = ProblemFacts(
        "A crate of apples weighs 19.6 kg. How much do 3 crates weigh?",
        "Three crates weigh 19.6 × 3 = 58.8 kg. The van trip takes 12.5 hours.",
    )
    assert "12.5" in roles.stated_premise(facts)


def test_parts_of_a_mix_are_not_read_from_a_decimal_tail() -> None:
    """'2.5 parts' is no 5 parts."""
    facts = ProblemFacts(
        "A drink is 2.5 parts juice to 4 parts water, with 3 ice cubes. How many parts in all?",
        "2.5 + 4 = 6.5 parts.",
    )
    assert roles.extra_parts(facts) == ""


def test_a_fraction_does_not_swallow_a_decimal_denominator() -> None:
    assert [e.ok for e in verify("6 ÷ 1.5 = 4 bags.").evidence] == [True]
    assert [e.ok for e in verify("3/4.5 = 2/3.").evidence] == [True]


def test_a_repair_never_reads_an_exponent_as_an_operand() -> None:
    """'3.2e4 ÷ 8 = 4000' is right: a repair that read '4 ÷ 8' would write 0.5 over it."""
    problem = Problem(
        question="A bank holds 3.2e4 coins in 8 sacks. How many per sack?", solution="3.2e4 ÷ 8 = 4000."
    )
    assert repair(problem, {"arithmetic_correct"})[0] == problem


# ---- conversions of areas and volumes --------------------------------------------------------------

TILE = "A floor tile is 50 cm by 50 cm. What is its area in square metres?"


@pytest.mark.parametrize(
    ("question", "solution", "said"),
    [
        (TILE, "The area is 50 × 50 = 2500 cm², which is 2500 ÷ 100 = 25 m².", "2500 cm² is 0.25 m²"),
        (
            "A park is 2 km by 3 km. What is its area in square metres?",
            "The area is 2 × 3 = 6 km². That is 6 × 1000 = 6000 m².",
            "6 km² is 6000000 m²",
        ),
        (
            "A pond holds 3 m³ of water. How many cm³ is that?",
            "3 m³ is 3 × 1000 = 3000 cm³.",
            "3 m³ is 3000000 cm³",
        ),
    ],
)
def test_a_conversion_by_the_length_factor_is_flagged_with_evidence(
    question: str, solution: str, said: str
) -> None:
    found = detectors.units_consistent(ProblemFacts(question, solution))
    assert found and said in found and "conversion is wrong" in found


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("2500 cm² is 25 m².", False),
        ("25000 cm² = 2.5 m².", True),
        ("3 km² = 3000000 m².", True),
        ("3 km² = 3000 m².", False),
        ("1 m³ = 1000000 cm³.", True),
        ("1 m³ = 1000 cm³.", False),
    ],
)
def test_the_verifier_converts_squared_and_cubed_units(solution: str, ok: bool) -> None:
    evidence = verify(solution).evidence
    assert [e.kind for e in evidence] == ["conversion"] and evidence[0].ok is ok


def test_litres_and_cubic_centimetres_are_checked_by_the_unit_chain() -> None:
    question = "A jug holds 2 L of milk. How many cm³ is that?"
    assert not detectors.units_consistent(ProblemFacts(question, "2 L = 2000 cm³."))
    assert "2000" in (detectors.units_consistent(ProblemFacts(question, "2 L = 200 cm³.")) or "")


# ---- scientific notation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("3.2 × 10^4", "32000"),
        ("3.2e4", "32000"),
        ("3.2E4", "32000"),
        ("3.2 x 10⁴", "32000"),
        ("3.2 * 10**4", "32000"),
        ("1.5·10^3", "1500"),
        ("2.5 × 10^-3", "0.0025"),
        ("2.5 × 10⁻³", "0.0025"),
        ("4 × 10^(-2)", "0.04"),
        ("7 × 10³", "7000"),
    ],
)
def test_scientific_notation_is_read_as_one_exact_number(written: str, read: str) -> None:
    assert with_digits(f"It is {written}.") == f"It is {read}."


@pytest.mark.parametrize(
    "text",
    ["12 × 10^2 = 1200", "8 ÷ 2 × 10^3 = 4000", "6² = 36", "2 × 10 = 20"],
)
def test_products_that_are_not_scientific_notation_stay_computations(text: str) -> None:
    assert with_digits(text) == text
    assert verify(text).errors == []


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("3.2 × 10^4 ÷ 8 = 4000", True),
        ("3.2 × 10^4 ÷ 8 = 400", False),
        ("3.2e4 ÷ 8 = 4000", True),
        ("3.2e4 ÷ 8 = 400", False),
        ("3.2 x 10⁴ ÷ 8 = 4000", True),
        ("3.2 x 10⁴ ÷ 8 = 400", False),
        ("1.5·10^3 + 500 = 2000", True),
        ("1.5·10^3 + 500 = 650", False),
        ("(6 × 10^8) ÷ (3 × 10^5) = 2 × 10^3 = 2000", True),
    ],
)
def test_a_computation_in_scientific_notation_is_verified(solution: str, ok: bool) -> None:
    found = verify(solution)
    assert found.checked and (found.errors == []) is ok


def test_a_wrong_result_in_scientific_notation_shows_the_right_one() -> None:
    (error,) = verify("3.2 × 10^4 ÷ 8 = 400").errors
    assert error.actual == "4000" and "wrong: it is 4000" in error.line()


def test_the_panel_reads_scientific_notation_as_the_quantity() -> None:
    facts = ProblemFacts(
        "A dam holds 3.2 × 10^4 m³ of water shared by 8 towns. How much does each town get?",
        "3.2 × 10^4 ÷ 8 = 4 × 10^3 m³ each.",
    )
    assert Fraction(32000) in facts.question_numbers and facts.final_answer == 4000


def test_decimal_text_is_exact() -> None:
    assert decimal_text(Fraction(32000)) == "32000"
    assert decimal_text(Fraction(-3, 2000)) == "-0.0015"
    assert decimal_text(Fraction(1, 4)) == "0.25"
