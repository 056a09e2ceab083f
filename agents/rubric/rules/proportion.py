"""Rules on proportions the story does not have, and percentages of the wrong whole."""

from __future__ import annotations

from agents.labelled.labels import FlawType
from agents.rubric import detectors as d
from agents.rubric import roles, scaling, world
from agents.rubric.rules._registry import rule, screen

_SCALES: FlawType = "false_proportionality"
PROPORTION = screen(
    "no_false_proportionality",
    rule("proportion.parallel-duration", _SCALES, d.parallel_duration),
    rule("proportion.area-scaling", _SCALES, d.area_scaling),
    rule("proportion.same-amount", _SCALES, scaling.same_amount),
    rule("proportion.shared-inverted", _SCALES, scaling.shared_inverted),
    rule("proportion.sprint", _SCALES, d.sprint),
    rule("proportion.temperatures-added", _SCALES, world.temperatures_added),
    rule("proportion.mixture-outside", _SCALES, world.mixture_outside),
    rule("proportion.growth-by-age", _SCALES, world.growth_scaled_by_age),
    rule("proportion.age-ratio-kept", _SCALES, world.age_ratio_kept),
    rule("proportion.does-not-scale", _SCALES, scaling.does_not_scale),
)
_BASE: FlawType = "percent_or_fraction_base"
BASE = screen(
    "percent_of_the_right_whole",
    rule("percent.change-base", _BASE, roles.percent_change_base),
    rule("percent.inclusive-price", _BASE, roles.inclusive_price),
    rule("percent.share-of-named-part", _BASE, roles.share_of_named_part),
    rule("percent.wrong-whole", _BASE, d.percent_of_wrong_whole),
    clean=d.percent_given,
)
