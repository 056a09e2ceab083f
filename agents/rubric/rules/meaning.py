"""Rules on what the story means: the answer to the question asked, the operation the story does."""

from __future__ import annotations

from agents.rubric import answers, operations, roles, stated, world
from agents.rubric import detectors as d
from agents.rubric.rules._registry import rule, screen

ANSWERS = screen(
    "answers_the_question",
    rule("answer.time-of-day", "answer_mismatch", d.time_of_day, decides=d.time_asked),
    rule("answer.other-of-a-pair", "answer_mismatch", d.other_of_a_pair),
    rule("answer.money-as-percent", "answer_mismatch", d.money_as_percent),
    rule("answer.negation-dropped", "answer_mismatch", d.negation_dropped),
    rule("answer.change-for-result", "answer_mismatch", roles.change_for_result),
    rule("answer.drifts", "answer_mismatch", stated.answer_drifts),
    rule("answer.role", "answer_mismatch", answers.answer_role),
    rule("answer.price-for-saving", "answer_mismatch", answers.price_for_saving),
    rule("answer.unit-asked", "answer_mismatch", answers.unit_asked),
    rule("answer.difference", "answer_mismatch", d.difference_asked),
    rule("answer.percentage", "answer_mismatch", d.percentage_asked),
    rule("answer.measure-unit", "answer_mismatch", d.measure_unit, decides=d.measure_asked),
    rule("answer.asked-noun", "answer_mismatch", d.asked_noun),
    requires=d.asks_and_answers,
)
OPERATION = screen(
    "operation_fits",
    rule("operation.before-taken-away", "wrong_operation", d.before_taken_away),
    rule("operation.never-subtracts", "wrong_operation", d.never_subtracts),
    rule("operation.never-divides", "wrong_operation", d.never_divides),
    rule("operation.rate-direction", "wrong_operation", world.rate_direction),
    rule("operation.map-scale", "wrong_operation", world.map_scale),
    rule("operation.perimeter-or-area", "wrong_operation", world.perimeter_or_area),
    rule("operation.groups-added", "wrong_operation", roles.groups_added),
    rule("operation.containers-needed", "wrong_operation", roles.containers_needed),
    rule("operation.ratio-direction", "wrong_operation", roles.ratio_direction),
    rule("operation.mismatch", "wrong_operation", operations.operation_mismatch),
    rule("operation.unequal-groups-added", "wrong_operation", d.unequal_groups_added),
    requires=d.solution_and_question,
)
