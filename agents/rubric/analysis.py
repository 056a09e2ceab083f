"""Facts the offline panel reads off a problem's text: numbers, questions, variables, red flags."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from agents.rubric.arithmetic import Claim, find_claims

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?")
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_ASKS = re.compile(r"^(how|what|which|find|calculate|compute|determine|write|express|show)\b", re.I)
_DEFINED = re.compile(r"\blet\s+\$?([A-Za-z])\$?\s+(?:be|denote|represent|stand for)\b", re.I)
_NAMED_NUMBER = re.compile(r"\b(?:a|any) number \$?([A-Za-z])\$?(?![A-Za-z])", re.I)
_MORE_DEFINED = re.compile(r"\band\s+\$?([A-Za-z])\$?\s+(?:be\s+|denote\s+)?the\b", re.I)
_SYMBOL_BEFORE_OP = re.compile(r"(?<![A-Za-z])([A-Za-z])\s*[=+\-*/×]\s*[\dA-Za-z(]")
_SYMBOL_AFTER_OP = re.compile(r"[=+\-*/×]\s*([A-Za-z])(?![A-Za-z])")
_TIME_UNIT = re.compile(r"\b(seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b", re.I)
_INJECTION = re.compile(
    r"ignore (all |any |the |your |previous |prior )*(instructions|rules)|score (this|it) \d+|"
    r"system prompt|you are now|disregard (the|your) (rules|instructions)|respond only with",
    re.I,
)
_EXPLAINS_FLAW = re.compile(
    r"\b(flaw(ed)?|cannot be (determined|answered|solved)|not enough information|unrealistic|"
    r"the (question|problem) is (wrong|ambiguous|invalid))\b",
    re.I,
)
# Tasks whose duration is fixed by the task, not by how many take part in it.
_FIXED_TASK = re.compile(
    r"\b(play|perform|sing|bake|boil|cook|dry|ripen|grow|watch|listen to|read aloud|sail|fly)\w*\b", re.I
)
_FIXED_ACK = re.compile(
    r"does not depend|doesn't depend|regardless of|independent of|fixed (length|duration)|same (length|time)",
    re.I,
)
_COUNT_NOUN = re.compile(
    r"how many (people|persons|students|children|workers|players|musicians|cars|buses|boxes|apples)", re.I
)
_RELATIONS = re.compile(
    r"\b(each|per|every|times|total|twice|half|ratio|rate|share[ds]?|equally|more than|less than|"
    r"fewer|proportional|depends?|altogether|remain(s|ing)?|left)\b",
    re.I,
)
CONCEPT_WORDS = re.compile(
    r"\b(ratio|rate|proportion\w*|fraction|percent\w*|area|perimeter|volume|speed|average|mean|"
    r"equation|expression|variable|sum|product|difference|multipl\w+|divi\w+|add\w*|subtract\w*)\b",
    re.I,
)


def numbers(text: str) -> list[float]:
    """Every number written with digits."""
    return [float(n.replace(",", "")) for n in NUMBER.findall(text)]


@dataclass(frozen=True)
class ProblemFacts:
    """What can be checked without understanding language."""

    question: str
    solution: str

    @cached_property
    def sentences(self) -> list[str]:
        """The question split into sentences."""
        return [s.strip() for s in _SENTENCE.split(self.question) if s.strip()]

    @cached_property
    def asks(self) -> list[str]:
        """Sentences that ask something."""
        return [s for s in self.sentences if s.endswith("?") or _ASKS.match(s)]

    @cached_property
    def question_numbers(self) -> list[float]:
        """Numbers given in the question."""
        return numbers(self.question)

    @cached_property
    def solution_numbers(self) -> list[float]:
        """Numbers used in the solution."""
        return numbers(self.solution)

    @cached_property
    def claims(self) -> list[Claim]:
        """Checkable arithmetic claims in the solution."""
        return find_claims(self.solution)

    @cached_property
    def defined_variables(self) -> set[str]:
        """Letters introduced with 'Let X be ...'."""
        text = self.question + " " + self.solution
        found = set(_DEFINED.findall(text))
        if found:
            found |= set(_MORE_DEFINED.findall(text))
        return found | set(_NAMED_NUMBER.findall(text))

    @cached_property
    def used_variables(self) -> set[str]:
        """Letters used in formulas (next to =, +, −, ×, /)."""
        text = self.question + " " + self.solution
        hits = _SYMBOL_BEFORE_OP.findall(text) + _SYMBOL_AFTER_OP.findall(text)
        return {h for h in hits if h not in {"a", "A", "x", "I"}}

    @property
    def injection(self) -> bool:
        """Text that tries to instruct the reader (a judge) rather than pose mathematics."""
        return bool(_INJECTION.search(self.question) or _INJECTION.search(self.solution))

    @property
    def explains_flaw(self) -> bool:
        """The 'solution' talks about a defect instead of solving."""
        return bool(_EXPLAINS_FLAW.search(self.solution))

    @property
    def asks_duration(self) -> bool:
        """The question asks how long something takes."""
        return bool(re.search(r"\bhow (long|much time)\b", self.question, re.I))

    @property
    def false_proportionality(self) -> bool:
        """A fixed-duration task asked about as if more participants made it faster or slower."""
        if not (self.asks_duration and _FIXED_TASK.search(self.question)):
            return False
        if _FIXED_ACK.search(self.question):
            return False
        return len(set(self.question_numbers)) >= 3 and self.duration is not None

    @cached_property
    def duration(self) -> tuple[str, str] | None:
        """The first duration given in the question, as (number, unit)."""
        match = re.search(rf"({NUMBER.pattern})\s+{_TIME_UNIT.pattern}", self.question, re.I)
        return (match.group(1), match.group(2)) if match else None

    @property
    def final_answer(self) -> float | None:
        """The last number in the solution."""
        return self.solution_numbers[-1] if self.solution_numbers else None

    @property
    def fractional_count(self) -> bool:
        """A 'how many people' question answered with a non-whole number."""
        answer = self.final_answer
        return bool(_COUNT_NOUN.search(self.question)) and answer is not None and answer != int(answer)

    @property
    def answer_has_unit(self) -> bool:
        """A duration question answered with a time unit."""
        return not self.asks_duration or bool(_TIME_UNIT.search(self.solution))

    @property
    def states_relations(self) -> bool:
        """The text names how quantities relate (per, each, total, =, ...)."""
        return bool(_RELATIONS.search(self.question) or "=" in self.solution)

    @property
    def has_formula(self) -> bool:
        """A variable, expression or equation is used or asked for."""
        text = self.question + " " + self.solution
        return bool(self.used_variables) or bool(
            re.search(r"\b(equation|expression|formula|in terms of)\b", text, re.I)
        )
