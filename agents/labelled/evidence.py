"""When a refusal *detects* a labelled flaw: judged against the labels, not taken on trust.

A refusal is a detection only when what refused it is evidence of the labelled flaw. Two rules,
both explicit and tested both ways (``tests/agents/test_validity_evidence.py``):

- **A model judge names the flaw's evidence.** Failing on one of the flaw's labelled levels is not
  enough: a judge that fails everything with the same sentence would "detect" every flaw. Its
  rationale must name the labelled evidence — a number the evidence holds (read as numbers are read
  everywhere: "two hundred" is 200, "1,200" is 1200; not 0, 1 or 2, which "step 1" or "both" say of
  any problem), or two of the evidence's content words (words
  of four letters or more that are neither function words nor the vocabulary every review uses,
  "problem", "answer", "solution", "correct" …, compared by their first five letters so that
  "scales" names "scaled"). Anything less is "refused for another reason".
- **The solver's answer is the answer key's.** A solver that disagrees with the stated solution has
  found *a* disagreement, not the flaw: a solver that always answers 12 disagrees with most stated
  solutions. It detects the flaw only when its answer equals the labelled answer — the final answer
  of the item's corrected version — and differs from the flawed solution's. An item with no
  corrected version has no answer key, so its solver detects nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.answers import FinalAnswer, agree, stated_answer
from agents.verify.expressions import tokens
from agents.verify.text import with_digits

_WORD = re.compile(r"[a-z]+")
_STEM = 5  # letters compared: "scales" and "scaled", "musicians" and "musician" are one word
# Words a review uses of any problem: naming them names no flaw.
# fmt: off
_GENERIC = frozenset({
    "about", "above", "after", "again", "against", "also", "answer", "answers", "because",
    "before", "being", "below", "between", "both", "cannot", "could", "does", "doing",
    "down", "during", "each", "every", "from", "further", "have", "having", "here",
    "into", "itself", "just", "made", "make", "makes", "many", "more", "most",
    "much", "must", "need", "needs", "number", "numbers", "only", "other", "over",
    "problem", "problems", "question", "questions", "same", "should", "since", "solution", "solutions",
    "some", "state", "stated", "states", "step", "steps", "such", "than", "that",
    "their", "them", "then", "there", "these", "they", "this", "those", "through",
    "under", "until", "very", "wants", "were", "what", "when", "where", "which",
    "while", "whole", "will", "with", "would", "your", "value", "values", "given",
    "gives", "correct", "wrong", "right", "result", "results", "true", "false", "flaw",
    "flawed", "error", "errors", "mistake", "issue", "level", "judge",
})
# fmt: on


def numbers_in(text: str) -> frozenset[float]:
    """The numbers ``text`` writes, in digits or in words, as floats."""
    found: set[float] = set()
    for token in tokens(with_digits(text)):
        if token.kind not in ("num", "frac", "mixed"):
            continue
        try:
            found.add(_value(token.text))
        except (ValueError, ZeroDivisionError):
            continue
    return frozenset(found)


def _value(text: str) -> float:
    whole, _, part = text.partition(" ")
    if part:  # a mixed number: 4 1/2
        return float(whole) + _value(part)
    top, _, bottom = text.partition("/")
    return float(top) / float(bottom) if bottom else float(top.replace(",", ""))


def content_stems(text: str) -> frozenset[str]:
    """The stems of the content words of ``text``: four letters or more, not generic."""
    words = _WORD.findall(text.lower())
    return frozenset(w[:_STEM] for w in words if len(w) >= 4 and w not in _GENERIC)


def names_evidence(text: str, evidence: Iterable[str]) -> bool:
    """Whether ``text`` (a judge's rationale) names one of the labelled ``evidence`` sentences: one
    of its numbers, or two of its content words."""
    said_numbers, said_words = _telling(numbers_in(text)), content_stems(text)
    for sentence in evidence:
        if said_numbers & numbers_in(sentence):
            return True
        if len(said_words & content_stems(sentence)) >= 2:
            return True
    return False


def _telling(numbers: frozenset[float]) -> frozenset[float]:
    return frozenset(n for n in numbers if n not in (0.0, 1.0, 2.0))


def answer_key(corrected_solution: str | None) -> FinalAnswer | None:
    """The labelled answer: the final answer the corrected version's solution states (None: no
    corrected version, or none it states that can be read)."""
    return stated_answer(corrected_solution) if corrected_solution else None


def solver_finds_the_flaw(
    solver: FinalAnswer | None, key: FinalAnswer | None, flawed: FinalAnswer | None
) -> bool:
    """The solver's answer equals the answer key and differs from the flawed solution's answer."""
    if solver is None or key is None:
        return False
    if agree(solver, key) is not True:
        return False
    return flawed is None or agree(solver, flawed) is False
