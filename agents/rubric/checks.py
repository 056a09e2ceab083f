"""The offline panel's checks, grouped by Bloom level and Five Key.

Each check is a *flaw* detector (a failure means the version has a real defect a pupil would meet:
the judge's score drops below the pass mark) or a *style* check (a weakness worth fixing that does
not, alone, stop a version from passing). Which judges run a detector follows the validity set's
taxonomy (the Bloom levels that should catch each kind of flaw). No check rewards vocabulary:
"explain why", "Let x be" or an added equation earns nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from agents.rubric import detectors as d
from agents.rubric.facts import ProblemFacts
from agents.schemas import JudgeName

Severity = Literal["flaw", "style"]


@dataclass(frozen=True)
class CheckResult:
    """``ok is None`` means the check does not apply; ``evidence`` says what was found."""

    check: str
    ok: bool | None
    advice: str
    severity: Severity = "flaw"
    evidence: str = ""


Test = Callable[[ProblemFacts, ProblemFacts | None], str | None]


@dataclass(frozen=True)
class Check:
    """A named test of the problem and the edit that would satisfy it."""

    name: str
    test: Test
    advice: str
    severity: Severity = "flaw"

    def run(self, facts: ProblemFacts, reference: ProblemFacts | None) -> CheckResult:
        """Apply the test."""
        found = self.test(facts, reference)
        ok = None if found is None else not found
        return CheckResult(self.name, ok, self.advice, self.severity, found or "")


def _on_facts(detector: Callable[[ProblemFacts], str | None]) -> Test:
    return lambda facts, _: detector(facts)


def _intent_kept(facts: ProblemFacts, ref: ProblemFacts | None) -> str | None:
    if ref is None or ref.question == facts.question:
        return None
    given = set(ref.question_numbers)
    if not given or len(given & set(facts.question_numbers)) * 2 >= len(given):
        return ""
    return (
        "most of the original problem's quantities are gone: the revision changed the problem, not fixed it"
    )


def _quantities(facts: ProblemFacts) -> int:
    """How many different quantities the question states (a time of day is one)."""
    return len(set(facts.question_numbers)) + len(set(re.findall(r"\b\d{1,2}:\d{2}\b", facts.q)))


def _states_quantities(facts: ProblemFacts, _: ProblemFacts | None) -> str | None:
    return "" if _quantities(facts) else "the problem states no quantity a pupil could compute with"


def _has_solution(facts: ProblemFacts, _: ProblemFacts | None) -> str | None:
    if not facts.solution.strip():
        return "there is no worked solution to check"
    return "" if facts.solution_numbers or re.search(r"\d", facts.s) else "the solution computes nothing"


def _concise(facts: ProblemFacts, _: ProblemFacts | None) -> str | None:
    return "" if len(facts.question.split()) <= 150 else "the problem is longer than a pupil needs"


def _readable(facts: ProblemFacts, _: ProblemFacts | None) -> str | None:
    """Lexical and syntactic complexity fit for a pupil: no sentence over 35 words."""
    longest = max((len(s.split()) for s in facts.sentences), default=0)
    return "" if longest <= 35 else f"a sentence of {longest} words is hard for a pupil to parse"


def _quantities_vary(facts: ProblemFacts, _: ProblemFacts | None) -> str | None:
    # One stated quantity can be varied too ("a square of area 64 m²"): only a problem with none
    # has nothing to vary.
    return "" if _quantities(facts) >= 1 else "with no stated quantity there is nothing to vary"


INSTRUCTIONS = Check(
    "no_instructions_in_text",
    _on_facts(d.instructions),
    "Remove every sentence addressed to a grader or a model.",
)
ARITHMETIC = Check(
    "arithmetic_correct", _on_facts(d.arithmetic), "Correct the computations the solution states."
)
INVENTED = Check(
    "all_data_given", _on_facts(d.invented), "State every quantity the solution needs in the question."
)
ONE_TASK = Check("one_task", _on_facts(d.one_task), "Ask exactly one clear question.")
ANSWERS = Check(
    "answers_the_question",
    _on_facts(d.answers_the_question),
    "Make the solution answer what the question asks.",
)
WHOLE = Check("whole_counts", _on_facts(d.whole_counts), "Give counts of whole things as whole numbers.")
OPERATION = Check("operation_fits", _on_facts(d.operation_fits), "Use the operation the story describes.")
UNITS = Check(
    "units_consistent", _on_facts(d.units_consistent), "Convert quantities to one unit before combining them."
)
CONSISTENT = Check(
    "data_consistent", _on_facts(d.data_consistent), "Make the given data agree with each other."
)
PLAUSIBLE = Check(
    "plausible_quantities", _on_facts(d.plausible), "Use quantities that are possible in the real world."
)
PROPORTION = Check(
    "no_false_proportionality",
    _on_facts(d.proportional),
    "Do not scale what does not scale: say what stays the same and why.",
)
BASE = Check(
    "percent_of_the_right_whole",
    _on_facts(d.percent_base),
    "Take each percentage of the whole the story names.",
)
RELEVANT = Check(
    "relevant_data_only", _on_facts(d.relevant_data), "Leave the distractors out of the computation."
)
HAS_SOLUTION = Check("has_solution", _has_solution, "Give a worked solution with its computations.")
INTENT = Check("intent_kept", _intent_kept, "Keep the original problem's quantities and concept.", "style")

CHECKS: dict[JudgeName, tuple[Check, ...]] = {
    "remember": (
        Check("states_quantities", _states_quantities, "State the given quantities.", "style"),
        INTENT,
        INSTRUCTIONS,
    ),
    "understand": (
        ONE_TASK,
        INSTRUCTIONS,
        INVENTED,
        ANSWERS,
        Check("concise", _concise, "Shorten the problem to what a solver needs.", "style"),
    ),
    "apply": (HAS_SOLUTION, ARITHMETIC, UNITS, WHOLE, ANSWERS, BASE, OPERATION, RELEVANT),
    "analyze": (OPERATION, CONSISTENT, PROPORTION, RELEVANT, BASE, INVENTED),
    "evaluate": (PROPORTION, CONSISTENT, PLAUSIBLE, WHOLE, INVENTED, ONE_TASK),
    "create": (
        INTENT,
        INVENTED,
        Check("quantities_vary", _quantities_vary, "Use quantities that could be varied.", "style"),
    ),
    "holistic": (
        INSTRUCTIONS,
        ARITHMETIC,
        ANSWERS,
        PLAUSIBLE,
        PROPORTION,
        CONSISTENT,
        UNITS,
        RELEVANT,
        Check("readable", _readable, "Split long sentences; use words a pupil knows.", "style"),
    ),
}


def run_checks(judge: JudgeName, facts: ProblemFacts, reference: ProblemFacts | None) -> list[CheckResult]:
    """Every check of one judge."""
    return [check.run(facts, reference) for check in CHECKS[judge]]
