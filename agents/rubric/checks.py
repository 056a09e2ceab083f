"""The offline panel's checks, grouped by Bloom level and Five Key.

Each check is a *flaw* detector (a failure means the version has a real defect a pupil would meet:
the judge's score drops below the pass mark) or a *style* check (a weakness worth fixing that does
not, alone, stop a version from passing). Which judges run a detector follows the validity set's
taxonomy (the Bloom levels that should catch each kind of flaw). No check rewards vocabulary:
"explain why", "Let x be" or an added equation earns nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from agents.rubric import rules as r
from agents.rubric.facts import ProblemFacts
from agents.rubric.rules import Finding, Screen
from agents.schemas import JudgeName

Severity = Literal["flaw", "style"]


@dataclass(frozen=True)
class CheckResult:
    """``ok is None`` means the check does not apply; ``evidence`` says what was found, and ``rule``
    names the rule that found it (agents.rubric.rules; "" when nothing was found)."""

    check: str
    ok: bool | None
    advice: str
    severity: Severity = "flaw"
    evidence: str = ""
    rule: str = ""


Test = Callable[[ProblemFacts, ProblemFacts | None], Finding | None]


@dataclass(frozen=True)
class Check:
    """A named test of the problem and the edit that would satisfy it."""

    name: str
    test: Test
    advice: str
    severity: Severity = "flaw"

    def run(self, facts: ProblemFacts, reference: ProblemFacts | None) -> CheckResult:
        """Apply the test: once per version (and reference), however many judges run the check."""
        return _run(self, facts, reference)


@lru_cache(maxsize=4096)
def _run(check: Check, facts: ProblemFacts, reference: ProblemFacts | None) -> CheckResult:
    """A check's result depends on nothing but the version and its reference, so the judges that
    share a check (and the holistic judge's second look at every judge's checks) share its result."""
    found = check.test(facts, reference)
    ok = None if found is None else not found
    evidence, rule = (found.evidence, found.rule) if found else ("", "")
    return CheckResult(check.name, ok, check.advice, check.severity, evidence, rule)


def _screened(screen: Screen, advice: str, severity: Severity = "flaw") -> Check:
    return Check(screen.check, lambda facts, _: screen.find(facts), advice, severity)


def _intent_kept(facts: ProblemFacts, ref: ProblemFacts | None) -> Finding | None:
    """A revision keeps most of the original's quantities: it compares two versions, so it is a
    check of the revision, not a rule of the screen (which reads one version)."""
    if ref is None or ref.question == facts.question:
        return None
    given = set(ref.question_numbers)
    if not given or len(given & set(facts.question_numbers)) * 2 >= len(given):
        return Finding("", "")
    return Finding(
        "revision.intent-kept",
        "most of the original problem's quantities are gone: the revision changed the problem, not fixed it",
    )


INSTRUCTIONS = _screened(
    r.instructions,
    "Remove every sentence addressed to a grader or a model.",
)
ARITHMETIC = _screened(r.arithmetic, "Correct the computations the solution states.")
INVENTED = _screened(r.invented, "State every quantity the solution needs in the question.")
ONE_TASK = _screened(r.one_task, "Ask exactly one clear question.")
ANSWERS = _screened(
    r.answers_the_question,
    "Make the solution answer what the question asks.",
)
WHOLE = _screened(r.whole_counts, "Give counts of whole things as whole numbers.")
OPERATION = _screened(r.operation_fits, "Use the operation the story describes.")
UNITS = _screened(r.units_consistent, "Convert quantities to one unit before combining them.")
CONSISTENT = _screened(r.data_consistent, "Make the given data agree with each other.")
PLAUSIBLE = _screened(r.plausible, "Use quantities that are possible in the real world.")
PROPORTION = _screened(
    r.proportional,
    "Do not scale what does not scale: say what stays the same and why.",
)
BASE = _screened(
    r.percent_base,
    "Take each percentage of the whole the story names.",
)
RELEVANT = _screened(r.relevant_data, "Leave the distractors out of the computation.")
HAS_SOLUTION = _screened(r.HAS_SOLUTION, "Give a worked solution with its computations.")
INTENT = Check("intent_kept", _intent_kept, "Keep the original problem's quantities and concept.", "style")

CHECKS: dict[JudgeName, tuple[Check, ...]] = {
    "remember": (
        _screened(r.STATES_QUANTITIES, "State the given quantities.", "style"),
        INTENT,
        INSTRUCTIONS,
    ),
    "understand": (
        ONE_TASK,
        INSTRUCTIONS,
        INVENTED,
        ANSWERS,
        _screened(r.CONCISE, "Shorten the problem to what a solver needs.", "style"),
    ),
    "apply": (HAS_SOLUTION, ARITHMETIC, UNITS, WHOLE, ANSWERS, BASE, OPERATION, RELEVANT),
    "analyze": (OPERATION, CONSISTENT, PROPORTION, RELEVANT, BASE, INVENTED),
    "evaluate": (PROPORTION, CONSISTENT, PLAUSIBLE, WHOLE, INVENTED, ONE_TASK),
    "create": (
        INTENT,
        INVENTED,
        _screened(r.QUANTITIES_VARY, "Use quantities that could be varied.", "style"),
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
        _screened(r.READABLE, "Split long sentences; use words a pupil knows.", "style"),
    ),
}


def run_checks(judge: JudgeName, facts: ProblemFacts, reference: ProblemFacts | None) -> list[CheckResult]:
    """Every check of one judge."""
    return [check.run(facts, reference) for check in CHECKS[judge]]
