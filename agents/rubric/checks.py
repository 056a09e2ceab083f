"""The offline panel's verifiable checks, grouped by Bloom level and Five Key."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agents.rubric.analysis import CONCEPT_WORDS, ProblemFacts
from agents.schemas import JudgeName


@dataclass(frozen=True)
class CheckResult:
    """``ok is None`` means the check does not apply to this problem."""

    check: str
    ok: bool | None
    advice: str


@dataclass(frozen=True)
class Check:
    """A named test of the problem and the edit that would satisfy it."""

    name: str
    test: Callable[[ProblemFacts, ProblemFacts | None], bool | None]
    advice: str

    def run(self, facts: ProblemFacts, reference: ProblemFacts | None) -> CheckResult:
        """Apply the test."""
        return CheckResult(self.name, self.test(facts, reference), self.advice)


def _intent_kept(facts: ProblemFacts, ref: ProblemFacts | None) -> bool:
    if ref is None:
        return False  # nothing to compare with: intent cannot be confirmed
    given = set(ref.question_numbers)
    return not given or len(given & set(facts.question_numbers)) * 2 >= len(given)


def _claims_correct(facts: ProblemFacts, _: ProblemFacts | None) -> bool | None:
    return all(c.correct for c in facts.claims) if facts.claims else None


def _numbers_used(facts: ProblemFacts, _: ProblemFacts | None) -> bool | None:
    given = set(facts.question_numbers)
    if not given or not facts.solution:
        return None
    return len(given - set(facts.solution_numbers)) <= 1


def _variables_consistent(facts: ProblemFacts, _: ProblemFacts | None) -> bool | None:
    defined, used = facts.defined_variables, facts.used_variables
    if not defined and not used:
        return None
    return defined <= used and used <= defined


CHECKS: dict[JudgeName, tuple[Check, ...]] = {
    "remember": (
        Check(
            "states_quantities",
            lambda f, _: bool(f.question_numbers),
            "State the given quantities with digits.",
        ),
        Check("intent_kept", _intent_kept, "Keep the original problem's quantities and concept."),
        Check(
            "no_instructions_in_text",
            lambda f, _: not f.injection,
            "Remove text addressed to the reader's tools.",
        ),
    ),
    "understand": (
        Check("single_question", lambda f, _: len(f.asks) == 1, "Ask exactly one clear question."),
        Check(
            "variables_defined_and_used",
            _variables_consistent,
            "Use every variable you define, and define every one you use.",
        ),
        Check(
            "concise",
            lambda f, _: len(f.question.split()) <= 150,
            "Shorten the problem to what a solver needs.",
        ),
        Check(
            "no_instructions_in_text",
            lambda f, _: not f.injection,
            "Remove text addressed to the reader's tools.",
        ),
    ),
    "apply": (
        Check(
            "has_solution", lambda f, _: bool(f.solution_numbers), "Give a worked solution with its numbers."
        ),
        Check(
            "solves_not_explains",
            lambda f, _: not f.explains_flaw,
            "Solve the problem instead of describing its flaw.",
        ),
        Check("arithmetic_correct", _claims_correct, "Correct the arithmetic in the solution."),
        Check("answer_has_unit", lambda f, _: f.answer_has_unit, "State the answer with its unit."),
    ),
    "analyze": (
        Check("relations_stated", lambda f, _: f.states_relations, "State how the quantities relate."),
        Check("given_numbers_used", _numbers_used, "Use every given quantity, or drop the ones not needed."),
        Check(
            "shows_working",
            lambda f, _: bool(f.claims) or "=" in f.solution,
            "Show the computation as an equation.",
        ),
    ),
    "evaluate": (
        Check(
            "no_false_proportionality",
            lambda f, _: not f.false_proportionality,
            "Say that the task's duration does not depend on the number of participants.",
        ),
        Check(
            "whole_counts",
            lambda f, _: not f.fractional_count,
            "Make counts of people or objects whole numbers.",
        ),
        Check(
            "answerable",
            lambda f, _: bool(f.asks) and not f.explains_flaw,
            "Pose a question that can be answered from the text.",
        ),
    ),
    "create": (
        Check(
            "invites_general_method",
            lambda f, _: f.has_formula,
            "Ask for an equation or expression that works for other values.",
        ),
        Check(
            "alternative_values",
            lambda f, _: len(set(f.question_numbers)) >= 2,
            "Use at least two quantities that could be varied.",
        ),
        Check("intent_kept", _intent_kept, "Keep the original problem's quantities and concept."),
    ),
    "holistic": (
        Check(
            "concepts",
            lambda f, _: bool(CONCEPT_WORDS.search(f.question + " " + f.solution)) or bool(f.claims),
            "Name or use the mathematical concept explicitly.",
        ),
        Check(
            "prerequisites",
            lambda f, _: bool(f.claims) or "=" in f.solution,
            "Show the operations a solver needs.",
        ),
        Check("representations", lambda f, _: f.has_formula, "Add an equation or expression."),
        Check(
            "alternative_values",
            lambda f, _: len(set(f.question_numbers)) >= 2,
            "Use quantities that could be varied.",
        ),
        Check(
            "narrative",
            lambda f, _: not f.false_proportionality and len(f.question.split()) >= 8,
            "Make the story realistic and consistent with the mathematics.",
        ),
        Check(
            "solution_matches",
            lambda f, _: _claims_correct(f, None) is not False and not f.explains_flaw,
            "Make the stated solution answer the question correctly.",
        ),
    ),
}
FIVE_KEYS = ("concepts", "prerequisites", "representations", "alternative_values", "narrative")


def run_checks(judge: JudgeName, facts: ProblemFacts, reference: ProblemFacts | None) -> list[CheckResult]:
    """Every check of one judge."""
    return [check.run(facts, reference) for check in CHECKS[judge]]
