"""The deterministic verifier: every computation a solution states, in symbols or in words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.rubric.facts import ProblemFacts
from agents.rubric.rules import answers_the_question
from agents.verify.text import disguised, plain, with_digits
from agents.verify.verifier import verify


def wrong(solution: str) -> list[str]:
    return [e.claim for e in verify(solution).errors]


@pytest.mark.parametrize(
    ("solution", "bad"),
    [
        ("Fourteen plus nine makes twenty-two, so Nina has twenty-two stickers.", ["14 + 9 makes 22"]),
        ("Five times eighteen gives eighty.", ["5 × 18 gives 80"]),
        ("Ninety-six shared equally among eight is eleven.", ["96 ÷ 8 is 11"]),
        ("Eight dollars times seven hours is fifty-four dollars.", ["8 dollars × 7 hours is 54 dollars"]),
        ("Twenty-five and eighteen make forty-one.", ["25 + 18 make 41"]),
        (
            "Sixty times two is one hundred and twenty, and half of sixty is thirty. "
            "One hundred and twenty plus thirty is one hundred and forty.",
            ["120 + 30 is 140"],
        ),
    ],
)
def test_worded_arithmetic(solution: str, bad: list[str]) -> None:
    assert wrong(solution) == bad


def test_worded_arithmetic_that_is_right_passes() -> None:
    assert (
        wrong("Twenty-eight shared equally among four is seven, because four sevens are twenty-eight.") == []
    )
    assert verify(
        "Four scarves a week for six weeks is four times six, which is twenty-four scarves."
    ).checked


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("21/35 = 3/5, so 3/5 of the class walks.", True),
        ("21/35 = 3/7, so 3/7 of the class walks.", False),
        ("6 ÷ 3/4 = 6 × 4/3 = 24/3 = 8 batches.", True),  # a/b written tight is one number
        ("6 × 3/4 = 18/4 = 4 1/2 batches.", True),  # mixed numbers
        ("3/4 + 1/8 = 7/8 of the pizza.", True),
        ("3/4 + 1/8 = 4/12 of the pizza.", False),
    ],
)
def test_fractions_on_both_sides(solution: str, ok: bool) -> None:
    assert (wrong(solution) == []) is ok


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("25% of 200 = 0.25 × 200 = 50 people.", True),
        ("15% of 240 = 36. 240 - 36 = 204, so the sale price is $204.", True),
        ("20 ÷ 80 = 0.25 = 25%.", True),
        ("100% - 45% - 40% = 15%.", True),
        ("45% of 80 = 32.", False),
        ("2000 × 1.03 = $2060. After 2 years: 2060 × 1.03 = $2121.80.", True),
    ],
)
def test_percents(solution: str, ok: bool) -> None:
    assert (wrong(solution) == []) is ok


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("4 × 45 = 180 cm = 1.8 m.", True),
        ("4 × 45 = 180 cm = 0.18 m.", False),
        ("6 × 85 = 510 cents = $5.10.", True),
        ("6 × 85 = 510 cents = $0.51.", False),
        ("m = 0.6 × 1000 = 600 g = 6 kg.", False),
        ("2 litres = 2000 ml. 2000 divided by 250 is 8.", True),
        ("72 km/h = 72 000 m ÷ 3600 s = 20 m/s. 20 × 10 = 200 metres.", True),
        ("1 hour 45 minutes + 20 minutes = 1 hour 65 minutes = 2 hours 5 minutes.", True),
        (
            "Fifteen minutes plus fifty minutes is seventy-five minutes, "
            "which is one hour and fifteen minutes.",
            False,
        ),
        ("50 minutes = 5/6 hour and 10 ÷ 5/6 = 12 km/h.", True),
        # A cubic centimetre is a millilitre: litres and cubic units convert into each other.
        ("The tank holds 2.5 litres = 2500 cm³.", True),
        ("The tank holds 2.5 litres = 250 cm³.", False),
        ("0.3 m³ = 300 litres, so 300 ÷ 15 = 20 buckets.", True),
        ("0.3 m³ = 30 litres, so 30 ÷ 15 = 2 buckets.", False),
        ("500 ml + 1.5 l = 2 l = 2000 cm³.", True),
    ],
)
def test_unit_conversions(solution: str, ok: bool) -> None:
    assert (wrong(solution) == []) is ok


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("Let n be the number. Then 4n = 52, so n = 52 ÷ 4 = 13.", True),
        ("Let n be the number. Then 4n = 52, so n = 52 × 4 = 208.", False),
        ("Let x be the adult tickets. 9x + 5(40 - x) = 276, so 4x + 200 = 276, 4x = 76 and x = 19.", True),
        ("Let m be the months. 30 + 25m = 230, so 25m = 200 and m = 8.", True),  # m is not metres here
        ("Let f be the fee. f + 3 × 45 = 185, so f + 135 = 185 and f = $60.", False),
        ("L² = 6² + 8² = 36 + 64 = 100, so L = √100 = 10 m.", True),
        ("L² = 6² + 8² = 36 + 64 = 110, so L = √110 ≈ 10.5 m.", False),
    ],
)
def test_equations_and_powers(solution: str, ok: bool) -> None:
    assert (wrong(solution) == []) is ok


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("10:50 + 2 hours = 12:50.", True),
        ("9:00 am + 2 hours 15 minutes = 11:15 am.", True),
        ("9:00 am + 2 hours 15 minutes = 11:45 am.", False),
        ("A quarter past six plus one hour is a quarter past seven.", True),
        ("50 ÷ 12 = 4 remainder 2, so 5 minibuses.", True),
        ("50 ÷ 12 = 4 remainder 3, so 5 minibuses.", False),
        ("50 ÷ 12 = 4.17 minibuses.", True),  # rounded to the decimals written
        ("50 ÷ 12 = 4.2 minibuses.", True),
        ("50 ÷ 12 = 4.3 minibuses.", False),
        # from one time of day to another is a duration
        ("11:20 − 09:45 = 1:35, so the journey takes 1 h 35 min.", True),
        ("11:20 − 09:45 = 1:75, so the journey takes 1 h 75 min.", False),
        ("11:20 − 09:45 = 95 minutes.", True),
        ("11:20 − 09:45 = 1 h 35 min.", True),
        ("11:20 − 09:45 = 1.35 hours.", False),  # 1 h 35 min is not 1.35 h
        ("01:10 − 22:50 = 2 h 20 min.", True),  # past midnight
        ("5:00 − 9:00 = 8 hours.", True),  # no am/pm: a 12-hour clock
        ("22:00 − 08:00 = 14 hours.", True),
    ],
)
def test_clocks_remainders_and_rounding(solution: str, ok: bool) -> None:
    assert (wrong(solution) == []) is ok


def test_a_consistent_solution_to_another_question_is_not_an_arithmetic_error() -> None:
    question = "A coat cost $80. Its price was reduced to $60. By what percentage was the price reduced?"
    solution = "60 ÷ 80 = 0.75 = 75%. The new price is 75% of the old price."
    assert wrong(solution) == []  # every computation holds …
    assert answers_the_question(ProblemFacts(question, solution))  # … but it answers another question
    fixed = "80 - 60 = 20. 20 ÷ 80 = 0.25 = 25%, so the price was reduced by 25%."
    assert answers_the_question(ProblemFacts(question, fixed)) == ""


def test_evidence_says_what_the_value_is() -> None:
    (error,) = verify("7 x 36 = 212 apples.").errors
    assert error.line() == "7 × 36 = 212 (wrong: it is 252)"


def test_hidden_characters_are_undone() -> None:
    assert plain("Ig\u200bnore") == "Ignore" and plain("Evaluat\u03bfr") == "Evaluator"
    assert disguised("sc\u043ere") and not disguised("score")
    assert with_digits("one hour and fifty minutes") == "1 hour and 50 minutes"


def _cases() -> list[dict[str, object]]:
    """120 worked solutions written apart from the verifier (its source unseen): 85 sound, 35 with
    one wrong computation, in symbols, words, units, clocks, percents, fractions and equations,
    with harmless numbers (years, labels, step numbers) among them."""
    path = Path(__file__).parent / "data" / "verifier_cases.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: str(c["id"]))
def test_an_independent_corpus_finds_every_wrong_step_and_no_other(case: dict[str, object]) -> None:
    errors = verify(str(case["solution"])).errors
    if case["wrong"]:
        assert errors, f"missed: {case['wrong']}"
    else:
        assert not errors, [e.line() for e in errors]


@pytest.mark.parametrize(
    ("solution", "wrong"),
    [
        ("90 ÷ 600 × 100 = 15 %, so 15 % of the seats are empty.", []),
        ("90 ÷ 600 × 100 = 20 %, so 20 % of the seats are empty.", ["90 ÷ 600 × 100 = 20 %"]),
        ("Interest for one year = 3% of £2,400 = 0.03 × 2,400 = £72. For 4 years: £72 × 4 = £288.", []),
        ("Cost for 4 tickets = 4 × £5 = £21.", ["4 × £ 5 = £ 21"]),
        ("n + (n + 2) + (n + 4) = 78\n3n + 6 = 78\n3n = 72\nn = 24\nThe largest is 28.", []),
        ("n + (n + 2) + (n + 4) = 78\n3n + 6 = 78\n3n = 72\nn = 25\nThe largest is 29.", ["n = 25"]),
        ("65 × 30p = 1,950p = £19.50.", []),
        ("65 × 30p = 1,850p = £18.50.", ["65 × 30 p = 1850 p"]),
    ],
)
def test_percent_times_100_headings_lines_and_thousands(solution: str, wrong: list[str]) -> None:
    """A percentage written as 'a ÷ b × 100 = c %', a heading such as 'for one year =' (not the
    number 1), one computation per line, and thousands separators before a unit."""
    errors = [e.claim for e in verify(solution).errors]
    assert errors == wrong


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("Two and three quarters plus one and a half is four and a quarter.", True),
        ("Two and three quarters plus one and a half is four and a half.", False),
        ("Three and two thirds minus one and a third is two and a third.", True),
        ("Five and three eighths minus two and one eighth is three and a quarter.", True),
        ("Six and a third plus two thirds is seven.", True),
    ],
)
def test_worded_mixed_numbers_are_read(solution: str, ok: bool) -> None:
    found = verify(solution)
    assert found.checked
    assert (found.errors == []) is ok


@pytest.mark.parametrize(
    ("solution", "ok"),
    [("18 doubled becomes 36.", True), ("18 doubled becomes 38.", False), ("50 - 15 becomes 35.", True)],
)
def test_becomes_links_a_computation(solution: str, ok: bool) -> None:
    found = verify(solution)
    assert found.checked and (found.errors == []) is ok
