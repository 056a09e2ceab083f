"""Which checks *match* which flaw types: the bench counts a detection only when one of them fired.

A flawed version refused for a reason that is not its flaw (a unit check firing on a missing-data
problem) was refused, but its flaw was not detected: the bench reports it apart, as "refused for
another reason". The table is explicit, one row per check of the offline panel (a style check
matches no flaw), and for the verifier's gate one row per kind of evidence line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.rubric.checks import CHECKS

# The offline panel's flaw checks (agents/rubric/checks.py) → the flaw types each one is a test of.
# One check, one concern: a check whose finding would only be a side effect of a flaw (a stated
# "plausible" count that a fractional count also breaks) is not listed for it.
CHECK_FLAWS: dict[str, frozenset[str]] = {
    "no_instructions_in_text": frozenset({"injected_instruction"}),
    "arithmetic_correct": frozenset({"arithmetic_symbolic", "arithmetic_worded"}),
    "all_data_given": frozenset({"missing_data"}),
    "one_task": frozenset({"missing_or_multiple_questions"}),
    "answers_the_question": frozenset({"answer_mismatch"}),
    "whole_counts": frozenset({"fractional_count"}),
    "operation_fits": frozenset({"wrong_operation"}),
    "units_consistent": frozenset({"unit_mismatch"}),
    "data_consistent": frozenset({"contradictory_data"}),
    "plausible_quantities": frozenset({"impossible_quantity"}),
    "no_false_proportionality": frozenset({"false_proportionality"}),
    "percent_of_the_right_whole": frozenset({"percent_or_fraction_base"}),
    "relevant_data_only": frozenset({"irrelevant_data_used"}),
    # a solution with no computation at all is a defect of its own, none of the taxonomy's types
    "has_solution": frozenset(),
}

# The verifier's gate: a computation of the stated solution found wrong is evidence of an
# arithmetic flaw only.
GATE_ARITHMETIC: frozenset[str] = frozenset({"arithmetic_symbolic", "arithmetic_worded"})
# The solver's line ("solver: the question's answer is …; the solution says …"): the stated final
# answer differs from an independent solution of the question. It matches the flaws whose defining
# harm is a wrong final answer; it says nothing of missing data, contradictions, impossible or
# fractional quantities, several questions or text aimed at the grader.
GATE_SOLVER: frozenset[str] = frozenset(
    {
        "arithmetic_symbolic",
        "arithmetic_worded",
        "wrong_operation",
        "irrelevant_data_used",
        "unit_mismatch",
        "answer_mismatch",
        "percent_or_fraction_base",
        "false_proportionality",
    }
)

_CHECK_ID = re.compile(r"\[(\w+)\]")
_KNOWN = frozenset(check.name for checks in CHECKS.values() for check in checks)


def findings(rationale: str) -> tuple[str, ...]:
    """The check ids an offline judge's rationale reports as failed ("Found: [check] …"), in order."""
    found = [name for name in _CHECK_ID.findall(rationale) if name in _KNOWN]
    return tuple(dict.fromkeys(found))


def check_matches(check: str, flaw_types: Iterable[str]) -> bool:
    """Whether ``check`` is a test of one of ``flaw_types``."""
    return bool(CHECK_FLAWS.get(check, frozenset()) & set(flaw_types))


def gate_matches(line: str, flaw_types: Iterable[str]) -> bool:
    """Whether one line of the gate's evidence is evidence of one of ``flaw_types``. A step the
    verifier could not check ("unverified: …", which refuses for the offline screen) is evidence of
    no flaw: the screen refused because it could not check, not because it found the flaw."""
    if line.startswith("unverified:"):
        return False
    kinds = GATE_SOLVER if line.startswith("solver:") else GATE_ARITHMETIC
    return bool(kinds & set(flaw_types))
