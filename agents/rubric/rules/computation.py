"""Rules on what the solution computes: arithmetic, numbers from nowhere, units, whole counts."""

from __future__ import annotations

from agents.rubric import detectors as d
from agents.rubric import dimensions, roles, stated, world
from agents.rubric.rules._registry import rule, screen

ARITHMETIC = screen(
    "arithmetic_correct",
    rule("arithmetic.computation", "arithmetic_symbolic", d.wrong_computations),
    rule("arithmetic.listed-sum", "arithmetic_worded", stated.listed_sum),
    requires=d.solution_given,
)
INVENTED = screen(
    "all_data_given",
    rule("givens.untraced-number", "missing_data", d.untraced_numbers),
    rule("givens.missing-measure", "missing_data", world.missing_measure),
    rule("givens.stated-premise", "missing_data", roles.stated_premise),
    rule("givens.assumed", "missing_data", d.assumed),
    requires=d.solution_given,
)
UNITS = screen(
    "units_consistent",
    rule("units.hours-minutes-decimal", "unit_mismatch", d.hours_minutes_as_decimals),
    rule("units.minutes-decimal", "unit_mismatch", world.minutes_as_decimals),
    rule("units.length-products", "unit_mismatch", world.length_products),
    rule("units.rate-other-unit", "unit_mismatch", roles.rate_in_other_unit),
    rule("units.count-added-to-money", "unit_mismatch", roles.count_added_to_money),
    rule("units.mixed", "unit_mismatch", d.mixed_units),
    rule("units.chain", "unit_mismatch", dimensions.unit_chain),
    requires=d.solution_given,
)
WHOLE = screen(
    "whole_counts",
    rule("count.fractional", "fractional_count", d.fractional_count),
    requires=d.count_asked,
)
