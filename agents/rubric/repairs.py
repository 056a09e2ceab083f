"""Deterministic repairs for the defects the offline checks can detect."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agents.rubric.analysis import _INJECTION, ProblemFacts
from agents.rubric.arithmetic import format_number
from agents.schemas import Problem


@dataclass
class Draft:
    """The problem being repaired, and what the reviser says about each step."""

    question: str
    solution: str
    notes: list[str]

    @property
    def facts(self) -> ProblemFacts:
        """Fresh facts for the current text."""
        return ProblemFacts(self.question, self.solution)


def _drop_injection(draft: Draft) -> None:
    sentences = re.split(r"(?<=[.?!])\s+", draft.question)
    kept = [s for s in sentences if not _INJECTION.search(s)]
    if len(kept) < len(sentences) and kept:
        draft.question = " ".join(kept)
        draft.notes.append("Some sentences address the reader's tools, not the student: I remove them.")


def _fix_duration(draft: Draft) -> None:
    facts = draft.facts
    if not facts.false_proportionality or facts.duration is None:
        return
    amount, unit = facts.duration
    counts = [format_number(n) for n in facts.question_numbers if format_number(n) != amount]
    time_var, count_var = _variables(draft.question)
    first, _, rest = draft.question.partition(". ")
    draft.question = (
        f"{first}. The length of the piece is fixed and does not depend on how many take part. {rest}"
    )
    if f"Let {count_var}" not in draft.question:
        draft.question += f" Let {count_var} be the number of participants and {time_var} the time taken."
    draft.question += f" Also give an equation for {time_var} in terms of {count_var}."
    draft.solution = (
        f"The duration is a property of the piece, not of the number of participants, so the "
        f"equation is {time_var} = {amount} for every value of {count_var}. With {count_var} = "
        f"{counts[-1]} instead of {counts[0]}, the time is still {amount} {unit}. "
        f"The answer is {amount} {unit}."
    )
    draft.notes.append(
        "The question invites inverse proportion, but the piece takes the same time however many "
        f"play it. I say so, keep the variables, and answer {amount} {unit} with the equation "
        f"{time_var} = {amount}."
    )


def _variables(question: str) -> tuple[str, str]:
    """(time variable, count variable) as the problem names them, else T and P."""
    time = re.search(r"\b\$?([A-Z])\$?\s+(?:be\s+)?the\s+(?:\w+\s+)?time\b", question)
    count = re.search(r"\b\$?([A-Z])\$?\s+(?:be\s+)?the\s+number\b", question)
    return (time.group(1) if time else "T", count.group(1) if count else "P")


def _fix_arithmetic(draft: Draft) -> None:
    for claim in draft.facts.claims:
        if not claim.correct:
            fixed = claim.text.replace(claim.text.split("=")[-1].strip(), format_number(claim.actual))
            draft.solution = draft.solution.replace(claim.text, fixed)
            draft.notes.append(
                f"'{claim.text}' is wrong: {claim.expression} is {format_number(claim.actual)}."
            )


def _use_variables(draft: Draft) -> None:
    facts = draft.facts
    unused = sorted(facts.defined_variables - facts.used_variables)
    if unused and facts.final_answer is not None:
        equations = ", ".join(f"{v} = {v}" for v in unused)
        draft.question = re.sub(r"\s*Let [^.?!]*[.?!]?\s*$", "", draft.question).strip()
        draft.notes.append(
            f"Variables {', '.join(unused)} are defined but never used ({equations} says nothing): "
            "I drop them."
        )


def _generalise(draft: Draft) -> None:
    facts = draft.facts
    if facts.has_formula:
        return
    given = [format_number(n) for n in facts.question_numbers]
    for claim in reversed(facts.claims):  # the last claim computes the answer
        first = next(
            (g for g in given if re.search(rf"(?<![\d.]){re.escape(g)}(?![\d.])", claim.expression)), None
        )
        if first is None:
            continue
        general = re.sub(rf"(?<![\d.]){re.escape(first)}(?![\d.])", "n", claim.expression, count=1)
        draft.question += (
            f" Then write an expression for the result when {first} is replaced by any number n."
        )
        draft.solution += f" In general the result is {general}."
        draft.notes.append(
            f"To invite a general method I ask for the result with {first} replaced by n: {general}."
        )
        return


def _add_unit(draft: Draft) -> None:
    facts = draft.facts
    if facts.answer_has_unit or facts.duration is None or facts.final_answer is None:
        return
    draft.solution += f" The answer is {format_number(facts.final_answer)} {facts.duration[1]}."
    draft.notes.append("The answer lacks its unit: I state it.")


def _single_question(draft: Draft) -> None:
    asks = draft.facts.asks
    if len(asks) > 1:
        for extra in asks[1:]:
            draft.question = draft.question.replace(extra, "").strip()
        draft.notes.append("The text asks several things: I keep the first question only.")


# Which repairs answer which reported checks, in the order they are applied.
REPAIRS: tuple[tuple[frozenset[str], Callable[[Draft], None]], ...] = (
    (frozenset({"no_instructions_in_text"}), _drop_injection),
    (
        frozenset({"no_false_proportionality", "narrative", "solves_not_explains", "answerable"}),
        _fix_duration,
    ),
    (frozenset({"arithmetic_correct", "solution_matches"}), _fix_arithmetic),
    (frozenset({"single_question"}), _single_question),
    (frozenset({"variables_defined_and_used"}), _use_variables),
    (frozenset({"answer_has_unit"}), _add_unit),
    (frozenset({"invites_general_method", "representations"}), _generalise),
)


def repair(problem: Problem, reported: set[str]) -> tuple[Problem, list[str]]:
    """Apply, in a fixed order, every repair that answers a reported check."""
    draft = Draft(problem.question, problem.solution, [])
    for answers, fix in REPAIRS:
        if answers & reported:
            fix(draft)
    return Problem(question=draft.question, solution=draft.solution), draft.notes
