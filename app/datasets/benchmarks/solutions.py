"""The one convention an imported item's solution follows.

A solution is the working a solver writes, then one final sentence: "The answer is 460 magazines."
(the value, then the unit the question asks in; a sum of money as "$12"). Working comes from the
source where it has some (GSM8K's lines, without their calculator notes and "#### N" line; MATH's
worked text, its \\boxed{} answer restated). Where the source gives only the answer, the working
is the shortest one or two steps of the question's numbers that give it ("46 × 10 = 460."), if
there are any; else the final sentence stands alone.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from fractions import Fraction

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?")
_CALCULATOR = re.compile(r"<<[^>]*>>")
_GSM8K_ANSWER = re.compile(r"^\s*####\s*(.+?)\s*$", re.M)
_ASK = re.compile(r"\bhow\s+(many|much)\s+([a-z][a-z' -]*?)(?=\s+(?:do|does|did|are|is|was|were|will|"
                  r"would|can|could|should|has|have|had|must|in|on|at|for|to|than|remain|left)\b|[?.,]|$)",
                  re.I)  # fmt: skip
_MONEY_WORDS = re.compile(
    r"\b(?:money|cost|costs|spend|spent|pay|paid|earn|earned|dollars?|price|save)\b", re.I
)
_UNITS = (
    "dollars", "cents", "grams", "kilograms", "pounds", "ounces", "inches", "feet", "yards", "miles",
    "meters", "metres", "centimeters", "centimetres", "kilometers", "kilometres", "liters", "litres",
    "gallons", "cups", "hours", "minutes", "seconds", "days", "weeks", "months", "years",
)  # fmt: skip
_UNIT_WORD = re.compile(r"\b(" + "|".join(_UNITS) + r")\b", re.I)


def numbers(text: str) -> list[Fraction]:
    """The numbers written in ``text``, in order (thousands commas read, signs kept)."""
    return [Fraction(raw.replace(",", "")) for raw in _NUMBER.findall(text)]


def show(value: Fraction) -> str:
    """A number as a solver writes it: 460, 2.5, 1/3."""
    if value.denominator == 1:
        return str(value.numerator)
    as_decimal = round(float(value), 6)
    if Fraction(str(as_decimal)) == value:
        return f"{as_decimal:g}"
    return f"{value.numerator}/{value.denominator}"


def unit_of(question: str) -> str:
    """The unit the question asks its answer in: "magazines" for "how many magazines …", "$" for a
    sum of money written in dollars, a measure's unit ("pounds"), or "" when none is said."""
    ask = _ASK.search(question)
    if ask and ask.group(1).lower() == "many":
        return re.sub(r"^(?:more|fewer|less|of the|of|the)\s+", "", ask.group(2).strip(), flags=re.I)
    if "$" in question and (ask is None or _MONEY_WORDS.search(ask.group(0) + question[ask.end() :])):
        return "$"
    units = _UNIT_WORD.findall(question[ask.start() :] if ask else question) or _UNIT_WORD.findall(question)
    return units[-1].lower() if units else ""


def final_sentence(value: str, unit: str) -> str:
    """The answer with its unit, as a solver writes it: "The answer is $12." / "… 460 magazines."."""
    if unit == "$":
        return f"The answer is ${value.lstrip('$')}."
    return f"The answer is {value} {unit}.".replace(" .", ".")


def _combinations(given: list[Fraction]) -> Iterator[tuple[list[str], Fraction]]:
    """Every one- or two-step working of distinct given numbers, each step a line, with its value."""
    for a, b in itertools.permutations(range(len(given)), 2):
        for line, value in _step(given[a], given[b]):
            yield [line], value
    for a, b in itertools.permutations(range(len(given)), 2):
        for line, value in _step(given[a], given[b]):
            for third in given:  # the second step may use a number again: 26 - 10 = 16, 16 - 10 = 6
                for second, total in _step(value, third):
                    yield [line, second], total


def _step(a: Fraction, b: Fraction) -> Iterator[tuple[str, Fraction]]:
    """``a op b = value`` for each of the four operations (no division by zero)."""
    for op in ("+", "-", "×", "÷"):
        if op == "÷" and b == 0:
            continue
        value = a + b if op == "+" else a - b if op == "-" else a * b if op == "×" else a / b
        yield f"{show(a)} {op} {show(b)} = {show(value)}.", value


def working(question: str, answer: Fraction) -> str:
    """The shortest working that gives ``answer`` from the question's own numbers, or ""."""
    given = list(dict.fromkeys(numbers(question)))[:8]  # a story's first numbers; keeps the search small
    for lines, value in _combinations(given):
        if value == answer:
            return " ".join(lines)
    return ""


def from_answer(question: str, answer: Fraction) -> str:
    """A solution for a question whose source gives only its answer: working, then the answer."""
    step = working(question, answer)
    closing = final_sentence(show(answer), unit_of(question))
    return f"{step} {closing}" if step else closing


def from_gsm8k(question: str, solution: str) -> str:
    """GSM8K's working with its calculator notes and "#### N" line turned into the final sentence."""
    found = _GSM8K_ANSWER.search(solution)
    body = _GSM8K_ANSWER.sub("", _CALCULATOR.sub("", solution)).strip()
    if found is None:
        return body
    closing = final_sentence(found.group(1).replace(",", ""), unit_of(question))
    return f"{body}\n{closing}" if body else closing


def boxed(text: str) -> str | None:
    """The content of the last \\boxed{…} of a MATH solution (braces balanced), or None."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, begin = 0, start + len("\\boxed{")
    for index in range(begin, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth < 0:
            return text[begin:index]
    return None


def from_math(solution: str) -> str:
    """MATH's worked text, its boxed answer restated as the final sentence."""
    answer = boxed(solution)
    body = solution.strip()
    return f"{body}\n{final_sentence(answer, '')}" if answer else body
