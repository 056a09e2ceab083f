"""The offline screen's rules: each check of the panel is a screen of registered rules, each with an
id, the flaw type it detects, and examples it must fire on and sound versions its check must pass.

The screens keep the names the detectors had (``plausible``, ``relevant_data``…): each is called
with a version's facts and returns None (does not apply), ``""`` (passes) or the evidence found;
``find`` returns the evidence with the id of the rule that found it.
"""

from __future__ import annotations

from agents.rubric.rules._registry import PASSED, RULES, SCREENS, Example, Finding, Rule, Screen
from agents.rubric.rules._tally import Tally, Version, tally, to_markdown
from agents.rubric.rules.computation import ARITHMETIC, INVENTED, UNITS, WHOLE
from agents.rubric.rules.consistency import CONSISTENT
from agents.rubric.rules.magnitude import PLAUSIBLE
from agents.rubric.rules.meaning import ANSWERS, OPERATION
from agents.rubric.rules.proportion import BASE, PROPORTION
from agents.rubric.rules.relevance import RELEVANT
from agents.rubric.rules.text import (
    CONCISE,
    HAS_SOLUTION,
    INSTRUCTIONS,
    ONE_TASK,
    QUANTITIES_VARY,
    READABLE,
    STATES_QUANTITIES,
)

instructions = INSTRUCTIONS
arithmetic = ARITHMETIC
invented = INVENTED
one_task = ONE_TASK
answers_the_question = ANSWERS
whole_counts = WHOLE
operation_fits = OPERATION
units_consistent = UNITS
data_consistent = CONSISTENT
plausible = PLAUSIBLE
proportional = PROPORTION
percent_base = BASE
relevant_data = RELEVANT

__all__ = [
    "ANSWERS",
    "ARITHMETIC",
    "BASE",
    "CONCISE",
    "CONSISTENT",
    "HAS_SOLUTION",
    "INSTRUCTIONS",
    "INVENTED",
    "ONE_TASK",
    "OPERATION",
    "PASSED",
    "PLAUSIBLE",
    "PROPORTION",
    "QUANTITIES_VARY",
    "READABLE",
    "RELEVANT",
    "RULES",
    "SCREENS",
    "STATES_QUANTITIES",
    "UNITS",
    "WHOLE",
    "Example",
    "Finding",
    "Rule",
    "Screen",
    "Tally",
    "Version",
    "answers_the_question",
    "arithmetic",
    "data_consistent",
    "instructions",
    "invented",
    "one_task",
    "operation_fits",
    "percent_base",
    "plausible",
    "proportional",
    "relevant_data",
    "tally",
    "to_markdown",
    "units_consistent",
    "whole_counts",
]
