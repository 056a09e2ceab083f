"""Rules on given data that contradict each other."""

from __future__ import annotations

from agents.labelled.labels import FlawType
from agents.rubric import detectors as d
from agents.rubric import limits, relations, roles, stated, wholes, world
from agents.rubric.rules._adapt import on_question
from agents.rubric.rules._registry import rule, screen

_FLAW: FlawType = "contradictory_data"
CONSISTENT = screen(
    "data_consistent",
    rule("data.parts-after-whole", _FLAW, on_question(wholes.parts_after_whole)),
    rule("data.percent-shares", _FLAW, on_question(d.percent_shares)),
    rule("data.fraction-shares", _FLAW, on_question(d.fraction_shares)),
    rule("data.time-window", _FLAW, on_question(d.time_window)),
    rule("data.span-said", _FLAW, on_question(d.span_said)),
    rule("data.had-gave-left", _FLAW, on_question(d.had_gave)),
    rule("data.stated-speed", _FLAW, on_question(d.stated_speed)),
    rule("data.rectangle", _FLAW, on_question(d.rectangle)),
    rule("data.angle-sums", _FLAW, on_question(world.angle_sums)),
    rule("data.mean-and-total", _FLAW, on_question(world.mean_and_total)),
    rule("data.triangle-inequality", _FLAW, on_question(limits.triangle_inequality)),
    rule("data.listed-parts", _FLAW, on_question(wholes.listed_parts)),
    rule("data.right-triangle", _FLAW, on_question(wholes.right_triangle)),
    rule("data.times-as-many", _FLAW, on_question(wholes.times_as_many_stated)),
    rule("data.change-agrees", _FLAW, roles.change_agrees),
    rule("data.stated-twice", _FLAW, lambda f: stated.stated_twice(f.q)),
    rule("data.contradiction", _FLAW, relations.contradiction),
)
