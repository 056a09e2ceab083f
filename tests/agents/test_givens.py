"""The givens of a question, and which of them a revision changed."""

from __future__ import annotations

from fractions import Fraction

import pytest

from agents.verify.givens import changed_givens, givens

BAND = (
    "A brass band of 48 players marches 3 km in 40 minutes. How long would it take a band of 24 "
    "players to march the same 3 km?"
)


def test_each_quantity_is_read_with_its_noun_as_written() -> None:
    assert [g.text for g in givens(BAND)] == ["48 players", "3 km", "40 minutes", "24 players", "3 km"]
    assert givens(BAND)[2].value == 40 and givens(BAND)[2].noun == "minutes"


def test_number_words_money_percent_fractions_and_clock_times_are_givens() -> None:
    question = "Nadia pays twelve pounds and £2.50 postage, gets 15% off, and eats 2 1/2 pies at 9:30 am."
    read = [(g.text, g.value) for g in givens(question)]
    assert read == [
        ("12 pounds", Fraction(12)),
        ("£2.50", Fraction(5, 2)),
        ("15%", Fraction(15)),
        ("2 1/2 pies", Fraction(5, 2)),
        ("9:30 am", Fraction(570)),
    ]


@pytest.mark.parametrize(
    ("after", "lines"),
    [
        (BAND.replace("48 players", "24 players", 1), ["given '48 players' became '24 players'"]),
        (BAND.replace(" in 40 minutes", ""), ["given '40 minutes' was removed"]),
        (BAND + " Each player carries 2 drums.", ["given '2 drums' was added"]),
        (
            BAND.replace("40 minutes", "40 seconds"),
            ["given '40 minutes' was removed", "given '40 seconds' was added"],
        ),
        # reworded, every quantity kept: nothing changed
        (
            "A band of forty-eight players marches 3 km in 40 minutes. If the band had 24 players, "
            "how long would the same 3 km take?",
            [],
        ),
    ],
)
def test_changed_givens_names_each_change(after: str, lines: list[str]) -> None:
    assert changed_givens(BAND, after) == lines


def test_a_question_with_no_numbers_has_no_givens() -> None:
    assert givens("Why does a heavier ball not fall faster?") == []
    assert changed_givens("Why?", "Why not?") == []
