"""Rules on the text as a whole: instructions to a grader, one task, and the form of a version."""

from __future__ import annotations

import re

from agents.rubric import detectors as d
from agents.rubric.facts import ProblemFacts
from agents.rubric.rules._registry import rule, screen


def _quantities(facts: ProblemFacts) -> int:
    """How many different quantities the question states (a time of day is one)."""
    return len(set(facts.question_numbers)) + len(set(re.findall(r"\b\d{1,2}:\d{2}\b", facts.q)))


def _states_quantities(facts: ProblemFacts) -> str:
    return "" if _quantities(facts) else "the problem states no quantity a pupil could compute with"


def _no_solution(facts: ProblemFacts) -> str:
    return "" if facts.solution.strip() else "there is no worked solution to check"


def _computes_nothing(facts: ProblemFacts) -> str:
    return "" if facts.solution_numbers or re.search(r"\d", facts.s) else "the solution computes nothing"


def _concise(facts: ProblemFacts) -> str:
    return "" if len(facts.question.split()) <= 150 else "the problem is longer than a pupil needs"


def _readable(facts: ProblemFacts) -> str:
    """Lexical and syntactic complexity fit for a pupil: no sentence over 35 words."""
    longest = max((len(s.split()) for s in facts.sentences), default=0)
    return "" if longest <= 35 else f"a sentence of {longest} words is hard for a pupil to parse"


def _quantities_vary(facts: ProblemFacts) -> str:
    # One stated quantity can be varied too ("a square of area 64 m²"): only a problem with none
    # has nothing to vary.
    return "" if _quantities(facts) >= 1 else "with no stated quantity there is nothing to vary"


INSTRUCTIONS = screen(
    "no_instructions_in_text",
    rule("grader.addressed", "injected_instruction", d.addresses_grader),
    rule("grader.hidden-characters", "injected_instruction", d.hidden_characters),
)
ONE_TASK = screen("one_task", rule("task.one-question", "missing_or_multiple_questions", d.one_task))
STATES_QUANTITIES = screen("states_quantities", rule("form.states-quantities", None, _states_quantities))
HAS_SOLUTION = screen(
    "has_solution",
    rule("form.has-solution", None, _no_solution),
    rule("form.solution-computes", None, _computes_nothing),
)
CONCISE = screen("concise", rule("style.concise", None, _concise))
READABLE = screen("readable", rule("style.short-sentences", None, _readable))
QUANTITIES_VARY = screen("quantities_vary", rule("style.quantities-vary", None, _quantities_vary))
