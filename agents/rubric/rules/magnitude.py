"""Rules on quantities the world does not allow: a 48 kg cat, 28 hours in a day, a probability of
1.3, a hen laying 12 eggs a day, 95 °C weather."""

from __future__ import annotations

from agents.labelled.labels import FlawType
from agents.rubric import detectors as d
from agents.rubric import limits, magnitudes, world
from agents.rubric.rules._adapt import on_question
from agents.rubric.rules._registry import rule, screen

_FLAW: FlawType = "impossible_quantity"
PLAUSIBLE = screen(
    "plausible_quantities",
    rule("magnitude.subject-limit", _FLAW, d.sentence_limits),
    rule("magnitude.probability", _FLAW, on_question(d.probability)),
    rule("magnitude.weather", _FLAW, on_question(d.weather)),
    rule("magnitude.pace", _FLAW, world.impossible_pace),
    rule("magnitude.body-rate", _FLAW, world.impossible_body),
    rule("magnitude.computed", _FLAW, d.computed),
    rule("magnitude.negative-given", _FLAW, limits.negative_given),
    rule("magnitude.negative-amount", _FLAW, limits.negative_amount),
    rule("magnitude.part-beyond-whole", _FLAW, limits.part_beyond_whole),
    rule("magnitude.beyond-capacity", _FLAW, on_question(limits.beyond_capacity)),
    rule("magnitude.hours-beyond-a-day", _FLAW, on_question(limits.hours_beyond_a_day)),
    rule("magnitude.boiling-water", _FLAW, limits.boiling_water),
    rule("magnitude.thing-measure", _FLAW, magnitudes.impossible_thing),
)
