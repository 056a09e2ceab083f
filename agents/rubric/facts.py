"""What the offline panel reads off a problem: its quantities, what it asks, what the solution does.

Everything here works on meaning the text states, never on vocabulary a writer could add: the
numbers given and their units, the question's target (a count, a time, a price, a difference),
the computations the solution states (checked by ``agents.verify``), where each number of the
solution comes from, and the solution's final answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from agents.verify.expressions import tokens
from agents.verify.text import plain, with_digits
from agents.verify.units import UNIT_PATTERN, Unit, unit
from agents.verify.verifier import Verification, verify

_NUMBER = re.compile(r"(?<![\w.:/])(\d+ \d+/\d+|\d+/\d+|\d+(?:\.\d+)?)(?![\w:/]|\.\d)")
_QUANTITY = re.compile(rf"([$£€])?\s?(\d+(?:\.\d+)?)\s?(%|{UNIT_PATTERN})?(?![\w])")
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z0-9$£€(])")
_TASK = re.compile(
    r"^(?:(?:also|then|and|now|next|finally),? )?(how|what|which|find|calculate|compute|determine|work out|give|"
    r"write|show|express|explain|say|justify|analy[sz]e|evaluate|compare|check|describe)\b",
    re.I,
)
JUSTIFY = re.compile(
    r"^(?:(?:also|then|and|now|finally),? )?(?:explain|justify|show (?:your|how|that|why)|give a reason|describe how|"
    r"check|say how|analy[sz]e|evaluate|compare)\b",
    re.I,
)
FORMAT = re.compile(
    r"^(?:give|write|express|round)\b.*\b(?:form|answer|nearest|places?|units?|decimal)\b", re.I
)
# Numbers a solution may use without the question giving them: unit factors, halves, percent.
CONSTANTS = {Fraction(n) for n in (0, 1, 2, 4, 7, 12, 24, 52, 60, 100, 365, 1000, 3600)} | {Fraction(1, 2)}
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})")
# Words that leave a quantity unstated: a solution that then states one has invented it.
VAGUE = re.compile(
    r"\b(?:some|a few|several|a number of|a certain|the same (?:percentage|amount|rate|number)|"
    r"(?:one|1) more [a-z]+|another [a-z]+)\b(?! (?:of|more|time))",
    re.I,
)


def as_fraction(text: str) -> Fraction:
    """'4 1/2' → 9/2, '0.75' → 3/4."""
    if " " in text:
        whole, part = text.split(" ", 1)
        return Fraction(whole) + Fraction(part)
    return Fraction(text)


@dataclass(frozen=True)
class Given:
    """A quantity the question states: its value and unit (None for counts)."""

    value: Fraction
    unit: Unit | None
    percent: bool = False


@dataclass(frozen=True)
class ProblemFacts:
    """Facts about one version of a problem (question and stated solution)."""

    question: str
    solution: str

    @cached_property
    def q(self) -> str:
        """The question with digits for number words and hidden characters removed."""
        return with_digits(self.question)

    @cached_property
    def s(self) -> str:
        """The solution, likewise."""
        return with_digits(self.solution)

    @cached_property
    def raw_text(self) -> str:
        """Question and solution as written, look-alike letters mapped (for instruction checks)."""
        return plain(self.question + "\n" + self.solution)

    @cached_property
    def sentences(self) -> list[str]:
        """The question split into sentences."""
        return [s.strip() for s in _SENTENCE.split(self.q) if s.strip()]

    @cached_property
    def asks(self) -> list[str]:
        """Sentences that ask something or set a task."""
        return [s for s in self.sentences if s.rstrip().endswith("?") or _TASK.match(s)]

    @cached_property
    def questions(self) -> list[str]:
        """The asks that are questions: a request to explain, check or justify, or to give the
        answer in some form, belongs to the question before it."""
        return [a for a in self.asks if not JUSTIFY.match(a) and not FORMAT.match(a)]

    @cached_property
    def target(self) -> str:
        """The (last) question, lower-case: what the solution must answer."""
        return self.questions[-1].lower() if self.questions else ""

    @cached_property
    def givens(self) -> list[Given]:
        """Quantities stated in the question, in order."""
        out = []
        for match in _QUANTITY.finditer(self.q):
            currency, number, suffix = match.groups()
            if re.match(r"\d{1,2}:\d{2}", self.q[match.start(2) : match.start(2) + 5]):
                continue
            name = currency or (suffix if suffix != "%" else None)
            out.append(Given(Fraction(number), unit(name), suffix == "%"))
        return out

    @cached_property
    def question_numbers(self) -> list[Fraction]:
        """Every number the question states (fractions and mixed numbers included)."""
        return [as_fraction(n) for n in _NUMBER.findall(self.q)]

    @cached_property
    def solution_numbers(self) -> list[Fraction]:
        """Every number the solution writes, in order."""
        return [as_fraction(n) for n in _NUMBER.findall(self.s)]

    @cached_property
    def verification(self) -> Verification:
        """Every computation the solution states, checked."""
        return verify(self.solution)

    @cached_property
    def final_sentence(self) -> str:
        """The solution's last sentence with a number in it (where it states its answer)."""
        parts = [p for p in re.split(r"(?<=[.!?])\s+", self.s.strip()) if p.strip()]
        numbered = [p for p in parts if re.search(r"\d", p)]
        return (numbered or parts or [""])[-1].lower()

    @cached_property
    def final_answer(self) -> Fraction | None:
        """The last number of the solution."""
        numbers = list(_NUMBER.findall(self.final_sentence))
        return (
            as_fraction(numbers[-1])
            if numbers
            else (self.solution_numbers[-1] if self.solution_numbers else None)
        )

    @cached_property
    def operators(self) -> set[str]:
        """The operations the solution's computations use (+, -, ×, ÷)."""
        ops = {t.text for t in tokens(self.s) if t.kind == "op"}
        ops |= {"÷"} if "/" in ops else set()
        return ops & {"+", "-", "×", "÷"}

    @cached_property
    def untraced(self) -> list[Fraction]:
        """Numbers the solution uses that the question neither gives nor lets it compute.

        Allowed: the question's numbers (also as percents ↔ decimals), clock parts, values the
        solution's own correct computations produce (from where they are stated on), unit factors
        and other small constants, and anything one operation away from numbers known by then
        (a remainder, "one more", 100 % − 20 %). When the question leaves a quantity vague
        ("some pencils", "one more quiz"), only stated and computed numbers count.
        """
        strict = bool(VAGUE.search(self.q))
        known = set(self.question_numbers) | _clock_parts(self.q)
        known |= {v / 100 for v in known} | {v * 100 for v in known}
        results = sorted(self.verification.results, key=lambda r: r[0])
        strangers = []
        for match in _NUMBER.finditer(self.s):
            value = as_fraction(match.group(1))
            known |= {v for at, v in results if at <= match.start()}
            scaled = value in known or value * 100 in known or value / 100 in known
            if scaled or value in CONSTANTS or (not strict and _one_step(value, known)):
                known.add(value)
                continue
            strangers.append(value)
            known.add(value)
        return strangers


def _clock_parts(text: str) -> set[Fraction]:
    parts: set[Fraction] = set()
    for hours, minutes in _CLOCK.findall(text):
        parts |= {Fraction(int(hours)), Fraction(int(minutes)), Fraction(60 - int(minutes))}
    return parts


_FACTORS = tuple(Fraction(n) for n in (2, 7, 12, 24, 52, 60, 100, 365, 1000, 3600))


def _one_step(value: Fraction, known: set[Fraction]) -> bool:
    """Whether ``value`` is one operation away from the numbers known so far: any operation on two
    of them (a remainder, a difference), ± 1, a unit factor (× 60, ÷ 100), or 100 − a percent."""
    for a in known:
        if value in (a + 1, a - 1, 100 - a) or any(value in (a * k, a / k) for k in _FACTORS):
            return True
        for b in known:
            if value in (a + b, a - b, a * b) or (b and value in (a / b, a // b, -(-a // b))):
                return True
    return False
