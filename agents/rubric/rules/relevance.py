"""Rules on distractors a solution should have left out."""

from __future__ import annotations

from agents.labelled.labels import FlawType
from agents.rubric import detectors as d
from agents.rubric import roles, selection, world
from agents.rubric.rules._adapt import on_texts
from agents.rubric.rules._registry import rule, screen

_FLAW: FlawType = "irrelevant_data_used"
RELEVANT = screen(
    "relevant_data_only",
    rule("relevance.stop-in-moving-time", _FLAW, on_texts(d.stop_in_moving_time)),
    rule("relevance.hypotenuse-as-height", _FLAW, on_texts(d.hypotenuse_as_height)),
    rule("relevance.height-in-floor", _FLAW, on_texts(d.height_in_floor)),
    rule("relevance.payments", _FLAW, on_texts(d.payments)),
    rule("relevance.other-kinds", _FLAW, on_texts(d.other_kinds)),
    rule("relevance.third-length-around", _FLAW, on_texts(d.third_length_around)),
    rule("relevance.unlike-sum", _FLAW, world.unlike_sum),
    rule("relevance.unused-roles", _FLAW, roles.unused_roles),
    rule("relevance.wrong-alternative", _FLAW, selection.wrong_alternative),
    rule("relevance.clock-part-used", _FLAW, selection.clock_part_used),
    rule("relevance.declined-used", _FLAW, selection.declined_used),
    requires=lambda f: bool(f.s.strip()),
)
