"""Deterministic repairs for the defects the offline checks find.

Repairs edit parsed spans, never text by search-and-replace: a wrong result is replaced at the
offset where it stands (``13 + 3 = 3`` becomes ``13 + 3 = 16``, not ``116 + 16 = 16``), and
every sentence the reviser writes names this problem's own quantities and story.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from agents.rubric.detectors import _INJECTION, _first_duration
from agents.rubric.facts import ProblemFacts
from agents.schemas import Problem
from agents.verify.expressions import Evaluator, NotArithmetic, tokens
from agents.verify.text import ZERO_WIDTH, disguised, plain

# "expression = result" in digits, as written: the result's span is what a repair may replace.
_CLAIM = re.compile(
    r"(?P<expr>(?<![\w.^])(?:\(\s*)*\d+(?:\.\d+)?(?:/\d+)?(?:\s*[-+×x*÷/]\s*(?:\(\s*)*\d+(?:\.\d+)?(?:/\d+)?(?:\s*\))*)+)"
    r"\s*=\s*\$?(?P<result>-?\d+(?:\.\d+)?(?:/\d+)?)(?![\d/^]|\.\d|\s?[×x*·]\s?10\b|[eE]\d)"
)


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


def format_number(value: Fraction) -> str:
    """12 → '12', 5/2 → '2.5', 1/3 → '0.33'."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.2f}".rstrip("0").rstrip(".")


def _evaluate(expression: str) -> Fraction | None:
    text = re.sub(r"(?<=[\d)])\s*[x*]\s*(?=[\d(])", " × ", expression)
    try:
        value = Evaluator(tokens(text, set())).run().value
    except (NotArithmetic, ZeroDivisionError, ValueError):
        return None
    return value if isinstance(value, Fraction) else None


def _fix_arithmetic(draft: Draft) -> None:
    """Replace each wrong result at its own span, right to left so earlier offsets stay valid."""
    edits = []
    for match in _CLAIM.finditer(draft.solution):
        actual = _evaluate(match["expr"])
        stated = Fraction(match["result"])
        if actual is not None and actual != stated:
            edits.append((match.span("result"), format_number(actual), match.group(0)))
    for (start, end), value, claim in reversed(edits):
        draft.solution = draft.solution[:start] + value + draft.solution[end:]
        draft.notes.append(
            f"'{claim}' is wrong: {claim.split('=')[0].strip()} is {value}. I correct that result."
        )


def _drop_instructions(draft: Draft) -> None:
    """Remove every sentence addressed to a grader or a model (hidden characters undone first)."""
    removed = 0
    for field in ("question", "solution"):
        text = getattr(draft, field)
        sentences = re.split(r"(?<=[.?!\]\)])\s+", text)
        kept = [s for s in sentences if not (_INJECTION.search(plain(s)) or disguised(s))]
        if len(kept) < len(sentences):
            removed += len(sentences) - len(kept)
            setattr(draft, field, ZERO_WIDTH.sub("", " ".join(kept)).strip())
    if removed:
        draft.notes.append(f"{removed} sentence(s) address the grader, not the pupil: I remove them.")


def _fix_duration(draft: Draft) -> None:
    """Say the duration stays the same and answer with it (in this problem's own words)."""
    facts = draft.facts
    duration = _first_duration(facts.q.lower())
    unit = re.search(r"\d+(?:\.\d+)? ?(seconds?|minutes?|hours?|days?)\b", facts.q)
    if duration is None or unit is None:
        return
    amount = f"{format_number(duration)} {unit.group(1)}"
    asked = facts.asks[-1] if facts.asks else facts.question
    if asked in draft.question:
        draft.question = draft.question.replace(
            asked, f"It takes the same time however many take part. {asked}", 1
        )
    draft.solution = (
        f"The time does not depend on how many take part: they all do it at the same time, so it still "
        f"takes {amount}. The answer is {amount}."
    )
    draft.notes.append(
        f"The solution scales the {amount} as if more participants changed it, but they all take part "
        f"at once. I say so in the question and answer {amount}."
    )


def _single_question(draft: Draft) -> None:
    asks = draft.facts.asks
    if len(asks) > 1:
        for extra in asks[1:]:
            draft.question = draft.question.replace(extra, "").strip()
        draft.notes.append(f"The text asks {len(asks)} things: I keep the first question, “{asks[0]}”.")


def _whole_count(draft: Draft) -> None:
    facts = draft.facts
    answer, asked = facts.final_answer, re.search(r"how many (\w+)", facts.target)
    if answer is None or answer.denominator == 1 or not asked:
        return
    up = re.search(r"\b(?:needed|need|must be bought|enough|all)\b", facts.target)
    whole = -(-answer.numerator // answer.denominator) if up else answer.numerator // answer.denominator
    noun = asked.group(1)
    draft.solution += (
        f" {noun.capitalize()} come whole, so the answer is {whole} {noun} "
        f"({'one more is needed for the rest' if up else 'the part left over is not enough for another'})."
    )
    draft.notes.append(
        f"{format_number(answer)} {noun} is not a whole number: I round {'up' if up else 'down'} to {whole}."
    )


# Which repairs answer which reported checks, in the order they are applied.
REPAIRS: tuple[tuple[frozenset[str], Callable[[Draft], None]], ...] = (
    (frozenset({"no_instructions_in_text"}), _drop_instructions),
    (frozenset({"no_false_proportionality"}), _fix_duration),
    (frozenset({"arithmetic_correct"}), _fix_arithmetic),
    (frozenset({"one_task"}), _single_question),
    (frozenset({"whole_counts"}), _whole_count),
)


def repair(problem: Problem, reported: set[str]) -> tuple[Problem, list[str]]:
    """Apply, in a fixed order, every repair that answers a reported check."""
    draft = Draft(problem.question, problem.solution, [])
    for answers, fix in REPAIRS:
        if answers & reported:
            fix(draft)
    return Problem(question=draft.question, solution=draft.solution), draft.notes
