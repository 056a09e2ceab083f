"""A finished run judged against its labelled item: repaired only when it passed, its chain checks,
its answer is the correction's and its givens are the original's or the correction's."""

from __future__ import annotations

import pytest

from agents.labelled.repair import RepairKey, classify, same_givens
from agents.schemas import Problem
from tests.helpers.repair_items import CORRECTED, FLAWED, ITEM, QUESTION


def key() -> RepairKey:
    made = RepairKey.of_item(ITEM)
    assert made is not None
    return made


def test_the_corrected_version_passed_is_repaired() -> None:
    repair = classify(key(), "screened", CORRECTED)
    assert repair.verdict == "repaired" and repair.repaired and repair.reasons == ()
    assert repair.answer == "33"  # a count: "rolls" is no unit
    assert classify(key(), "accepted", CORRECTED).repaired


def test_a_reworded_story_with_its_givens_in_another_order_is_repaired() -> None:
    reworded = Problem(
        question="15 rolls are sold from a bakery's 4 trays of 12 rolls. How many rolls remain?",
        solution="The trays hold 4 × 12 = 48 rolls. After selling, 48 − 15 = 33 rolls remain.",
    )
    assert classify(key(), "screened", reworded).verdict == "repaired"


def test_the_flawed_original_passed_unchanged_is_never_repaired() -> None:
    # a missing-data problem whose solution assumes the missing number: the key's answer, no repair
    missing = Problem(
        question="A baker makes some trays of 12 rolls and sells 15 rolls. How many rolls are left?",
        solution="4 × 12 = 48 rolls; 48 − 15 = 33 rolls are left.",
    )
    made = RepairKey.of(missing, CORRECTED, "33 rolls")
    assert made is not None
    same = Problem(question=" ".join(missing.question.split(" ")), solution=missing.solution + "\n")
    repair = classify(made, "screened", same)
    assert repair.verdict == "unrevised" and not repair.repaired
    assert repair.reasons[0] == "the final version is the flawed original, unrevised: nothing was repaired"
    # passed unchanged with its wrong answer: accepted but wrong comes first
    assert classify(key(), "screened", FLAWED).verdict == "accepted_but_wrong"


def test_a_plausible_repair_with_the_wrong_answer_is_accepted_but_wrong() -> None:
    wrong = Problem(question=QUESTION, solution="4 × 12 = 48 rolls; 48 − 12 = 36 rolls are left.")
    repair = classify(key(), "screened", wrong)
    assert repair.verdict == "accepted_but_wrong" and not repair.repaired
    assert repair.reasons == ("the final answer is 36; the key is 33",)


def test_a_changed_given_is_not_a_repair_even_with_the_right_answer() -> None:
    other = Problem(
        question="A baker makes 6 trays of 8 rolls and sells 15 rolls. How many rolls are left?",
        solution="6 × 8 = 48 rolls; 48 − 15 = 33 rolls are left.",
    )
    repair = classify(key(), "screened", other)
    assert repair.verdict == "givens_changed" and not repair.repaired
    assert "given '4 trays' became '6 trays'" in repair.reasons[0]


def test_the_givens_of_the_correction_count_as_well_as_the_original() -> None:
    missing = "A baker makes some trays of 12 rolls and sells 15 rolls. How many rolls are left?"
    original = Problem(question=missing, solution="12 − 15 … the rolls cannot be counted.")
    made = RepairKey.of(original, CORRECTED, "33 rolls")
    assert made is not None
    assert classify(made, "screened", CORRECTED).repaired  # the correction's added given
    assert not same_givens(missing, QUESTION)


def test_a_right_answer_on_a_chain_the_verifier_cannot_check_is_unverified() -> None:
    broken = Problem(question=QUESTION, solution="4 × 12 = 50 rolls, less 15 sold: 33 rolls are left.")
    repair = classify(key(), "screened", broken)
    assert repair.verdict == "unverified" and not repair.repaired
    assert repair.reasons[0].startswith("the verifier did not check the solution's chain whole")


def test_answers_are_compared_after_converting_units() -> None:
    minutes = Problem(
        question="A film lasts 1.5 hours. How many minutes is that?", solution="1.5 × 60 = 90 minutes."
    )
    made = RepairKey.of(minutes, minutes, "90 minutes")
    assert made is not None
    hours = Problem(question=minutes.question, solution="It is 1.5 hours, or 1.5 × 60 = 90 minutes: 1.5 h.")
    assert classify(made, "screened", hours).verdict == "repaired"
    seconds = Problem(question=minutes.question, solution="1.5 × 60 = 90 seconds.")
    assert classify(made, "screened", seconds).verdict == "accepted_but_wrong"


@pytest.mark.parametrize(
    ("outcome", "verdict"),
    [
        ("exhausted", "gave_up"),
        ("error", "undecided"),
        ("needs_review", "undecided"),
        ("cancelled", "undecided"),
    ],
)
def test_a_run_that_did_not_pass_is_never_repaired(outcome: str, verdict: str) -> None:
    repair = classify(key(), outcome, CORRECTED)
    assert repair.verdict == verdict and not repair.repaired
    assert repair.decided is (verdict == "gave_up")


def test_the_key_is_the_labelled_answer_before_a_trailing_check() -> None:
    question = "After a 20% discount, a video game costs €48. What was its price before the discount?"
    corrected = Problem(
        question=question,
        solution="The sale price is 80% of the original, so 48 ÷ 0.8 = €60. Check: 60 − 12 = €48.",
    )
    labelled = RepairKey.of(corrected, corrected, "€60")
    assert labelled is not None and labelled.answer.value == 60
    unlabelled = RepairKey.of(corrected, corrected)  # the corrected solution's last number: the check's
    assert unlabelled is not None and unlabelled.answer.value == 48


def test_an_item_without_a_readable_key_is_not_measured() -> None:
    clock = ITEM.model_copy(
        update={"corrected": Problem(question=QUESTION, solution="It ends at 8:35 p.m."), "answer": None}
    )
    assert RepairKey.of_item(clock) is None
    assert RepairKey.of_item(ITEM.model_copy(update={"corrected": None})) is None
