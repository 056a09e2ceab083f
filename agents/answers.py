"""Does a stated solution end with the answer the question has? The solver's answer against it.

The stated solution's final answer is read with the verifier's tokenizer: the first number after
its last mention of "answer", else the last number it writes, with the unit (or currency) written
beside it. Two answers agree when they are equal after converting units, within the rounding of
the less precise one (half a unit of its last written decimal). Anything that cannot be compared —
no number on one side, a time of day, units of different dimensions — is *not* a mismatch: the
check only ever refuses a version on a clear numeric disagreement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from agents.schemas import Solution
from agents.verify.expressions import Token, tokens
from agents.verify.text import with_digits
from agents.verify.units import Unit, convertible, unit

_NUMBERS = {"num", "frac", "mixed"}
_ANSWER = re.compile(r"\banswers?\b", re.I)
_PERCENT_UNITS = {"%", "percent", "per cent", "percentage", "percentage points"}


@dataclass(frozen=True)
class FinalAnswer:
    """A final answer as a number: its value, its unit as written, and the rounding it allows."""

    value: float
    unit_text: str  # "" when none is written
    percent: bool
    tolerance: float  # half a unit of the last written decimal, in the answer's own unit
    text: str

    @property
    def unit(self) -> Unit | None:
        """The unit, when it is one we know."""
        return unit(self.unit_text or None)


def stated_answer(solution: str) -> FinalAnswer | None:
    """The final numeric answer a written solution states (None: it states none we can read)."""
    text = with_digits(solution)
    toks = tokens(text)
    numbers = [i for i, t in enumerate(toks) if t.kind in _NUMBERS | {"clock"}]
    if not numbers:
        return None
    markers = list(_ANSWER.finditer(text))
    after = [i for i in numbers if markers and toks[i].start >= markers[-1].end()]
    index = after[0] if after else numbers[-1]
    if toks[index].kind == "clock":
        return None  # a time of day: the solver reports those as words, not numbers
    return _read(toks, index, text)


def _read(toks: list[Token], i: int, text: str) -> FinalAnswer:
    token = toks[i]
    before = toks[i - 1] if i > 0 else None
    after = toks[i + 1] if i + 1 < len(toks) else None
    value = _fraction(token.text)
    negative = before is not None and before.text == "-"
    if negative and (i < 2 or toks[i - 2].kind not in _NUMBERS | {"rp", "var"}):
        value, token = -value, Token(token.kind, token.text, before.start if before else 0, token.end)
    currency = before is not None and before.kind == "cur"
    suffix = after is not None and (after.kind == "unit" or after.text == "%")
    name = after.text if suffix and after is not None else (before.text if currency and before else "")
    start = before.start if currency and before is not None else token.start
    end = after.end if suffix and after is not None else token.end
    percent = name == "%"
    return FinalAnswer(
        float(value), "" if percent else name, percent, _half_unit(token.text), text[start:end]
    )


def solver_answer(solution: Solution) -> FinalAnswer | None:
    """The solver's answer as a number (None when it gave no single number)."""
    if solution.value is None:
        return None
    written = solution.unit.strip()
    percent = written.lower() in _PERCENT_UNITS
    return FinalAnswer(
        solution.value,
        "" if percent else written,
        percent,
        _half_unit(repr(solution.value).removesuffix(".0")),
        solution.answer,
    )


def agree(solver: FinalAnswer, stated: FinalAnswer) -> bool | None:
    """Whether two answers are the same number (None: they cannot be compared)."""
    mine, theirs = solver.unit, stated.unit
    if mine is not None and theirs is not None:
        if convertible(mine, theirs):
            factor = float(mine.scale / theirs.scale)
            return _close(solver.value * factor, stated, solver.tolerance * factor)
        if solver.unit_text.lower() != stated.unit_text.lower():
            return None  # dollars against minutes: the two read different quantities
    candidates = [solver.value]
    if solver.percent != stated.percent:  # 0.25 and 25 % are one answer written two ways
        candidates += [solver.value * 100, solver.value / 100]
    return any(_close(v, stated, solver.tolerance) for v in candidates)


def mismatch(solution: Solution, stated_solution: str) -> str | None:
    """An evidence line when the solver's answer and the stated solution's answer clearly differ;
    it names the two numbers compared (the solver's ``value`` and unit, the solution's answer)."""
    solver, stated = solver_answer(solution), stated_answer(stated_solution)
    if solver is None or stated is None or agree(solver, stated) is not False:
        return None
    return f"solver: the question's answer is {_as_written(solver)}; the solution says {stated.text}"


def inconsistent(solution: Solution) -> str | None:
    """Why a solver's reply contradicts itself (its ``answer`` words and its ``value`` are different
    numbers: '40 minutes' with value 12.5), or None when they agree or cannot be compared.

    Consistent when any number written in ``answer`` agrees with ``value`` ("80 minutes (1 h 20 min)"
    holds 80): only a reply none of whose numbers is its value is refused, a number written in
    another unit than the value's compared as it stands ("40 minutes" with 12.5 dollars: refused).
    """
    solver = solver_answer(solution)
    if solver is None:
        return None
    text = with_digits(solution.answer)
    toks = tokens(text)
    written = [_read(toks, i, text) for i, t in enumerate(toks) if t.kind in _NUMBERS]
    verdicts = [agree(solver, number) for number in written]
    if not verdicts or True in verdicts:
        return None
    # a number in another unit than the value's ("40 minutes" against 12.5 dollars) is no unit
    # conversion away from it: its written value is compared as it stands
    if False not in verdicts and any(_close(solver.value, n, solver.tolerance) for n in written):
        return None
    return (
        f"the answer {_one_line(solution.answer)!r} and the value {_as_written(solver)} are different numbers"
    )


def _as_written(answer: FinalAnswer) -> str:
    """A solver's value with its unit: 12.5 minutes, 40 %, 7."""
    number = f"{answer.value:g}" if abs(answer.value) < 1e15 else repr(answer.value)
    if answer.percent:
        return f"{number} %"
    return f"{number} {answer.unit_text}".strip()


def _close(value: float, stated: FinalAnswer, solver_tolerance: float) -> bool:
    slack = max(stated.tolerance, solver_tolerance, 1e-9 * max(1.0, abs(stated.value)))
    return abs(value - stated.value) <= slack


def _fraction(text: str) -> Fraction:
    if " " in text:  # a mixed number: 4 1/2
        whole, part = text.split(" ", 1)
        return Fraction(whole) + Fraction(part)
    return Fraction(text)


def _half_unit(written: str) -> float:
    """Rounding a written number allows: half a unit of its last decimal (an integer: 0.5)."""
    if "/" in written or "e" in written.lower():
        return 1e-9  # a fraction is exact; a float in exponent form is precise enough
    decimals = written.split(".", 1)[1] if "." in written else ""
    return 0.5 / float(10 ** len(decimals))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:120] or "(no answer)"
