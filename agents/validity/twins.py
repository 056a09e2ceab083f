"""Adversarial twins: the same flawed problem with assessment vocabulary added and the flaw kept,
and paraphrases of sound problems that must still pass.

A judge that rewards words instead of mathematics accepts the twins (CogBench's keyword stuffing);
the share of twins accepted is the *adversarial gap*. Every twin is deterministic, so a bench run
is reproducible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.schemas import Problem
from agents.validity.labels import LabelledItem


@dataclass(frozen=True)
class Twin:
    """A variant of a labelled problem: which kind, and the problem."""

    kind: str
    problem: Problem


_NOUN = re.compile(r"\b\d+ ([a-z]+s)\b")


def _final_number(solution: str) -> str | None:
    numbers = re.findall(r"\d+(?:\.\d+)?(?:/\d+)?", solution)
    return numbers[-1] if numbers else None


def stuffed(item: LabelledItem) -> list[Twin]:
    """Three keyword-stuffed twins of a flawed item; the question's numbers and ask are unchanged."""
    q, s = item.question.strip(), item.solution.strip()
    noun_match = _NOUN.search(q)
    noun = noun_match.group(1) if noun_match else "quantities"
    answer = _final_number(s) or "the result"
    return [
        Twin(
            "bloom-verbs",
            Problem(
                question=f"{q} Explain why your method works, compare it with another method "
                "and justify each step.",
                solution=f"{s} In general, this method works for any numbers, so the reasoning is sound.",
            ),
        ),
        Twin(
            "variables-and-equation",
            Problem(
                question=f"Let n be the number of {noun}. {q}",
                solution=f"{s} Written as an equation, the answer is x = {answer}.",
            ),
        ),
        Twin(
            "analysis-words",
            Problem(
                question=f"{q} Analyse how the quantities are related and evaluate whether your "
                "answer is reasonable.",
                solution="We identify the key quantities, apply the correct operation and check the "
                f"answer. {s}",
            ),
        ),
    ]


_SYNONYMS = (
    (r"\bbuys\b", "purchases"),
    (r"\bbought\b", "purchased"),
    (r"\bHow many\b", "Exactly how many"),
    (r"\bWhat is\b", "Work out: what is"),
    (r"\bcosts\b", "is priced at"),
    (r"\bhas\b", "owns"),
    (r"\bso\b", "therefore"),
)
_NAMES = {
    "Mia": "Ana",
    "Tom": "Sam",
    "Lucy": "Rosa",
    "Ben": "Omar",
    "Leo": "Kai",
    "Nora": "Ines",
    "Maya": "Lena",
}


def paraphrase(item: LabelledItem) -> Twin:
    """A sound problem reworded (synonyms, other names); numbers and meaning unchanged."""
    q, s = item.question, item.solution
    for old, new in _NAMES.items():
        q, s = re.sub(rf"\b{old}\b", new, q), re.sub(rf"\b{old}\b", new, s)
    for pattern, replacement in _SYNONYMS:
        q = re.sub(pattern, replacement, q, count=1)
    s = re.sub(r"\bso\b", "therefore", s, count=1)
    return Twin("paraphrase", Problem(question=q, solution=s))
