"""Verify every computation a solution states, in symbols or in words, with exact arithmetic.

A *claim* is two sides joined by ``=``, ``≈`` or a linking word (is, makes, gives, leaves, which
is, ...): ``7 × 36 = 252``, ``fourteen plus nine makes twenty-three``, ``180 cm = 1.8 m``,
``9:00 am + 2 hours 15 minutes = 11:15 am``, ``50 ÷ 12 = 4 remainder 2``. A linking word joins
sides only when the left one computes something (or both are quantities of one dimension), so
"the answer is 5" is not a claim. Equations in a variable (``4n = 52, so n = 13``) are solved from
their first statement and every later statement must agree. A side stated with d decimals may be
rounded to d decimals; ``≈`` allows 1 %.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from agents.verify.expressions import (
    Evaluator,
    NeedsVariable,
    NotArithmetic,
    Number,
    Quantity,
    Token,
    tokens,
    variables,
    with_word_ops,
)
from agents.verify.prose import clock_spans, dimensions, relations
from agents.verify.steps import Evidence, Kind, Step
from agents.verify.text import with_digits
from agents.verify.units import Unit, convertible, unit

_EXPRESSION = {"num", "frac", "mixed", "clock", "cur", "unit", "op", "lp", "rp", "of", "var"}
_WORD_EQ = {
    "is",
    "are",
    "make",
    "makes",
    "give",
    "gives",
    "equal",
    "equals",
    "leaves",
    "was",
    "come to",
    "comes to",
    "which is",
    "that is",
    "which makes",
    "which gives",
    "which leaves",
    "which equals",
    "become",
    "becomes",
    "became",
    "to get",
    "we get",
    "you get",
    "they get",
    "I get",
}


@dataclass
class Verification:
    """Every claim of a solution checked; ``results`` are the values its correct claims establish."""

    evidence: list[Evidence] = field(default_factory=list)
    results: list[tuple[int, Fraction]] = field(
        default_factory=list
    )  # (offset in the normalised text, value)

    steps: list[Step] = field(default_factory=list)  # every computation read, in order
    unverified: list[Step] = field(default_factory=list)  # relations read but not checkable
    unequal: list[Step] = field(default_factory=list)  # sides joined by a word, of different values
    depended: list[Step] = field(default_factory=list)  # unverified steps the final answer depends on
    chained: bool = False  # checked as a chain against the question (not each claim alone)

    @property
    def errors(self) -> list[Evidence]:
        """The claims that are wrong."""
        return [e for e in self.evidence if not e.ok]

    @property
    def checked(self) -> bool:
        """Whether anything could be checked at all."""
        return bool(self.evidence)

    @property
    def verified(self) -> bool:
        """The chain was checked (``verify`` had the question), every computation read is right and
        none is left unverified: what a screen may pass."""
        return self.chained and not self.errors and not self.unverified


@dataclass
class _Side:
    toks: list[Token]
    link: str  # the equality that precedes this side ("" for the first)
    remainder: Fraction | None = None
    labelled: bool = False  # a noun names what its number counts ("3 parts = 24")
    heading: bool = False  # after "per", "for", ...: "Price per 100 g = 3.60 ÷ 7.5" names, computes nothing
    alternative: bool = False  # after "or": "t = 4 or t = -1" gives a second root, not a contradiction
    truncated: bool = False  # "0.83166…": cut off, not rounded
    definition: bool = False  # one side of "1 m³ = 1000 litres": a unit's size, not a quantity

    @property
    def text(self) -> str:
        return " ".join(t.text for t in self.toks)


@lru_cache(maxsize=2048)
def verify(solution: str, question: str | None = None) -> Verification:
    """Check every claim the solution states; with the question, check the chain too.

    Without ``question`` each claim is checked alone. With it, :func:`agents.verify.chain.check`
    also checks that every number a step uses is given or computed by an earlier step, that the
    final answer is the last value computed, and lists the relations it cannot read as
    ``unverified``.
    """
    from agents.verify.chain import check  # the chain check reads this module's steps

    given = with_digits(question) if question is not None else ""
    text = normalised(solution, given)
    names = variables(text)
    found = Verification()
    env: dict[str, Fraction] = {}
    for chain in _chains(_line_breaks(text, tokens(text, names))):
        _check_chain(chain, env, found)
    if question is not None:
        check(given, text, found)
        found.chained = True
    return found


def normalised(solution: str, question: str = "") -> str:
    """The solution as the verifier reads it (its tokens' offsets refer to this text): digits for
    number words, prose relations and clock phrases as computations, worded operators as symbols."""
    prose = dimensions(clock_spans(relations(_ratios(with_digits(solution)), question)))
    return _spoken_times(with_word_ops(_clock_words(prose)))


def _line_breaks(text: str, toks: list[Token]) -> list[Token]:
    """A line break ends a computation ("… = 78" and "3n + 6 = 78" on the next line are two
    claims, not "78 3n"): a token that stands for the break is put between the lines."""
    out: list[Token] = []
    for token in toks:
        if out and "\n" in text[out[-1].end : token.start]:
            out.append(Token("word", "\n", out[-1].end, token.start))
        out.append(token)
    return out


_RATIO = re.compile(r"(?<![\d:.])(\d+(?:\.\d+)?)( : |:)(\d+(?:\.\d+)?)(?![\d:])")


def _ratios(text: str) -> str:
    """ "250 : 500 = 1 : 2" compares two ratios: each ``a : b`` is read as ``a / b`` (same length, so
    offsets stay). A clock time (9:15) is not a ratio."""

    def one(match: re.Match[str]) -> str:
        a, colon, b = match.groups()
        if colon == ":" and len(a) <= 2 and len(b) == 2:
            return match.group(0)
        return a + colon.replace(":", "/") + b

    return _RATIO.sub(one, text)


_SPAN = r"\d+ (?:hours?|minutes?)(?: (?:and )?\d+ minutes?)?"
_TIME = r"\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?"
_AFTER = re.compile(rf"(?<![\d.])\b({_SPAN}) (after|before) ({_TIME})")
_MORE = re.compile(
    rf"(?<![\d.])\b(\d+) more (minutes?|hours?) (?:brings?|takes?|gets?) (?:us|it|them|you|her|him|me) "
    rf"to ({_TIME})"
)


_SPOKEN = re.compile(r"(?<![\d.:])\b(\d{1,2}) ([0-5]\d)\b(?=( [+-] \d+ ?(?:hours?|h|minutes?|min)\b)?)")
_TO_HOUR = re.compile(r"(?<![\d.:])\b(5|10|20|25) (?:minutes )?to (\d{1,2})\b")
_CLOCK_LINK = re.compile(r"\b(?:is|are|was|makes|gives|comes to|equals)\s+$|=\s*$")


def _spoken_times(text: str) -> str:
    """Times of day said as words where a clock computation says them: "7 30 + 2 hours" (seven
    thirty plus two hours), and, linked to a result in a sentence that computes with a time of
    day, "is 9 45" or "is 10 to 10" (nine forty-five, ten to ten). Anywhere else the numbers are
    left as they are ("3 45" may be two counts; "5 to 10" a range)."""

    def operand(match: re.Match[str]) -> str:
        hour, minute, onward = match.groups()
        return f"{hour}:{minute}" if onward and int(hour) <= 23 else match.group(0)

    def result(match: re.Match[str]) -> str:
        hour, minute, _ = match.groups()
        linked = int(hour) <= 23 and _clock_said(text, match.start())
        return f"{hour}:{minute}" if linked else match.group(0)

    def to_hour(match: re.Match[str]) -> str:
        if not _clock_said(text, match.start()):
            return match.group(0)
        return f"{(int(match.group(2)) - 2) % 12 + 1}:{60 - int(match.group(1)):02d}"

    text = _SPOKEN.sub(operand, text)  # the operands first: the results are linked to them
    text = _SPOKEN.sub(result, text)
    return _TO_HOUR.sub(to_hour, text)


def _clock_said(text: str, at: int) -> bool:
    """A result linked ("is", "=") in a sentence that computes with a time of day before it."""
    start = max(text.rfind(mark, 0, at) for mark in (". ", "! ", "? ", "\n")) + 1
    before = text[start:at]
    return _CLOCK_LINK.search(before) is not None and re.search(rf"{_TIME}\s*[+-]", before) is not None


def _clock_words(text: str) -> str:
    """Clock arithmetic said in words: "2 hours after 7:45 is 9:45" is 7:45 + 2 hours = 9:45, and
    "20 more minutes brings us to 10:10" adds to the time of day reached just before."""
    text = _AFTER.sub(lambda m: f"{m.group(3)} {'+' if m.group(2) == 'after' else '-'} {m.group(1)}", text)

    def more(match: re.Match[str]) -> str:
        before = re.findall(_TIME, text[: match.start()])
        if not before:
            return match.group(0)
        return f"{before[-1]} + {match.group(1)} {match.group(2)} = {match.group(3)}"

    return _MORE.sub(more, text)


def _chains(toks: list[Token]) -> list[list[_Side]]:
    """Runs of expression tokens joined by equalities; anything else ends a run."""
    chains: list[list[_Side]] = []
    current: list[_Side] = []
    side = _Side([], "")
    index = 0
    while index < len(toks):
        token = toks[index]
        if token.kind == "eq":
            current.append(side)
            side = _Side([], " ".join(token.text.lower().lstrip(", ").split()))
        elif token.kind == "rem" and index + 1 < len(toks) and toks[index + 1].kind == "num":
            side.remainder = Fraction(toks[index + 1].text)
            index += 1
        elif token.kind in _EXPRESSION or (
            _compound_and(toks, index) and not _closes(current, side, toks, index)
        ):
            side.toks.append(token)
        elif _label(toks, index):
            side.labelled = True  # "240 texts × 5 cents": the noun names what is counted

        else:
            side.truncated = token.text.startswith("...") and bool(side.toks) and side.toks[-1].kind == "num"
            current.append(side)
            chains.append(current)
            word = token.text.lower() if token.kind == "word" else ""
            current, side = [], _Side([], "", heading=word in _HEADING, alternative=word == "or")
        index += 1
    current.append(side)
    chains.append(current)
    return [c for c in chains if len(c) >= 2]


_HEADING = {"for", "in", "of", "per", "on", "after", "over", "during", "each", "every"}


def _label(toks: list[Token], index: int) -> bool:
    """A noun between a number and an operator or equality labels the number ("3 apples + 4"),
    unless a preposition makes number and noun a heading ("Interest for 1 year = 3 % of …")."""
    heading = (
        toks[index + 1].kind == "eq" and index >= 2 and toks[index - 2].text.lower() in _HEADING
        if index < len(toks) - 1
        else False
    )
    return (
        not heading
        and toks[index].kind == "word"
        and toks[index].text.isalpha()
        and 0 < index < len(toks) - 1
        and toks[index - 1].kind in ("num", "frac", "mixed")
        and toks[index + 1].kind in ("op", "eq")
        and toks[index + 1].text not in ("%", "²", "³")
    )


def _compound_and(toks: list[Token], index: int) -> bool:
    """The "and" of "1 hour and 5 minutes" belongs to the quantity (a larger unit, then a smaller
    one of the same kind: "300 cm and 2.4 m" are two quantities)."""
    if _money_and(toks, index):
        return True
    if not (
        toks[index].text == "and"
        and 0 < index < len(toks) - 2
        and toks[index - 1].kind == "unit"
        and toks[index + 1].kind == "num"
        and toks[index + 2].kind == "unit"
    ):
        return False
    big, small = unit(toks[index - 1].text), unit(toks[index + 2].text)
    return (
        big is not None and small is not None and big.dimension == small.dimension and big.scale > small.scale
    )


def _money_and(toks: list[Token], index: int) -> bool:
    """The "and" of "$3 and 50 cents": an amount, then cents or pence of it."""
    if not (toks[index].text == "and" and 1 < index < len(toks) - 2 and toks[index - 2].kind == "cur"):
        return False
    small = unit(toks[index + 2].text)
    return (
        toks[index - 1].kind == "num"
        and toks[index + 1].kind == "num"
        and small is not None
        and small.dimension == "money"
        and small.scale < 1
    )


def _closes(current: list[_Side], side: _Side, toks: list[Token], index: int) -> bool:
    """The "and" of "2100 cm = 21 m and 90 cm = 0.9 m" joins two claims, not "21 m and 90 cm": the
    quantity before it already equals the side before its equality, and an equality follows the
    quantity after it (a compound that is a side of its own, "= 1 hour and 30 minutes = 90
    minutes", does not equal the side before without its second part)."""
    if not current or index + 3 >= len(toks) or toks[index + 3].kind != "eq":
        return False
    try:
        before, so_far = _evaluate(current[-1], {}), _evaluate(side, {})
    except NeedsVariable:
        return False
    if before is None or so_far is None:
        return False
    a, b = before[0], so_far[0]
    return convertible(a.unit, b.unit) and _in_unit(a, b.unit) == b.value


def _evaluate(side: _Side, env: dict[str, Fraction]) -> tuple[Quantity, int] | None:
    """The side's value and how many operators it applied; None if it is not an expression."""
    toks = _trim(side.toks)
    if not toks:
        return None
    evaluator = Evaluator(toks, env)
    try:
        return evaluator.run(), evaluator.operators
    except NeedsVariable:
        raise
    except (NotArithmetic, ZeroDivisionError, OverflowError, ValueError):
        return None


def _trim(toks: list[Token]) -> list[Token]:
    """Drop dangling operators and units at the edges ("3 × as many", "km. 150")."""
    toks = list(toks)
    while toks and toks[0].kind in ("op", "rp", "of", "unit") and toks[0].text not in ("√", "-", "$"):
        toks.pop(0)
    while toks and (
        toks[-1].kind in ("lp", "of", "cur")
        or (toks[-1].kind == "op" and toks[-1].text not in ("²", "³", "%"))
    ):
        toks.pop()
    return toks


def _check_chain(chain: list[_Side], env: dict[str, Fraction], found: Verification) -> None:
    previous: _Side | None = None
    units = {t.text for side in chain for t in side.toks if t.kind == "unit"}
    first = True
    for side in chain:
        if previous is not None and previous.toks and side.toks:
            side.definition = _unit_size(previous) or _unit_size(side)
            count = len(found.steps)
            _check_pair(previous, side, env, found, units, first)
            first = first and len(found.steps) == count  # a later side restates the one before
        if side.toks:
            previous = side


def _check_pair(
    left: _Side,
    right: _Side,
    env: dict[str, Fraction],
    found: Verification,
    units: set[str] | None = None,
    first: bool = True,
) -> None:
    if left.alternative and [t.kind for t in left.toks] == ["var"]:
        return
    try:
        a, b = _evaluate(left, env), _evaluate(right, env)
    except NeedsVariable as missing:
        _solve(left, right, str(missing), env)
        assigned = len(left.toks) == 1 and left.toks[0].kind == "var"  # "x = 9" names, computes nothing
        if str(missing) in env and not assigned:
            _check_pair(left, right, env, found, units)
        return
    if a is None or b is None:
        return
    (qa, ops_a), (qb, ops_b) = a, b
    if _unchecked(left, right, qa, qb, ops_a, ops_b, units or set()):
        value = qb.value if isinstance(qb.value, Fraction) else None
        if _same_value(qa, qb):
            # "1.5 hours, which is 1 hour 30 minutes": the same value restated, a link of the chain
            found.steps.append(_step(left, right, value, True, first=False, clock=qb.clock))
        elif _restated(left, qa, qb) and _rewritten(qa, qb):
            # "1.25 hours, which is 1 hour 25 minutes": one quantity said in other units, a
            # conversion that is wrong (the same units restated differently stay unequal, unread)
            actual = _in_unit(qa, qb.unit)
            shown = _duration(actual, qb) or f"{_show(actual)} {qb.unit.name if qb.unit else ''}".strip()
            claim = f"{left.text} {right.link} {right.text}"
            found.evidence.append(Evidence("conversion", claim, right.text, shown, False))
            found.steps.append(_step(left, right, value, False, first=False, claim=claim))
        elif _restated(left, qa, qb):
            found.unequal.append(_step(left, right, value, False, first=False))
        return
    if right.remainder is not None:
        _check_remainder(left, qa, qb, right.remainder, found)
        return
    evidence = _compare(left, right, qa, qb, ops_a + ops_b)
    solved = any(t.kind == "var" for t in left.toks)
    if evidence is None and solved and isinstance(qb.value, Fraction) and qa.value == qb.value:
        found.results.append((right.toks[0].start, qb.value))  # "x = 19": the solution's value
        found.steps.append(_step(left, right, qb.value, True, first=False))
    if evidence is not None:
        found.evidence.append(evidence)
        stated = qb.value if isinstance(qb.value, Fraction) else None
        found.steps.append(_step(left, right, stated, evidence.ok, first, evidence.claim, qb.clock))
        if evidence.ok and isinstance(qb.value, Fraction):
            found.results.append((right.toks[0].start, qb.value))


def _step(
    left: _Side,
    right: _Side,
    result: Fraction | None,
    ok: bool,
    first: bool,
    claim: str = "",
    clock: bool = False,
) -> Step:
    """One link of the chain: the numbers the left side uses and the value the right side states."""
    operands = tuple(_literal_value(t.text) for t in left.toks if t.kind in ("num", "frac", "mixed"))
    return Step(
        claim or f"{left.text} {right.link} {right.text}",
        operands,
        result,
        left.toks[0].start,
        right.toks[-1].end,
        ok,
        first and not any(t.kind == "var" for t in left.toks),
        clock=clock,
    )


def _literal_value(text: str) -> Fraction:
    whole, _, part = text.partition(" ")
    return Fraction(whole) + (Fraction(part) if part else 0)


def _unchecked(
    left: _Side, right: _Side, qa: Quantity, qb: Quantity, ops_a: int, ops_b: int, units: set[str]
) -> bool:
    """Two sides joined without a computation to check."""
    if (right.link in _WORD_EQ or left.heading) and ops_a == 0 and not _conversion(qa, qb):
        return True  # "the answer is 5": a linking word, not a computation
    if (
        ops_a == 0
        and qa.unit is None
        and (left.labelled or (ops_b == 0 and right.labelled and qb.unit is None))
    ):
        return True  # "3 parts = 24", "4 pints = 4 × 0.57": what a number of things stands for
    if (
        _bare_percent(left) != _bare_percent(right)
        and not (_percent(left) and _percent(right))
        and not (_decimal(left) or _decimal(right))
    ):
        return True  # "15 % is 60 pupils": a share of a whole the sentence leaves implicit
    return _in_chain_unit(qa, qb, units)  # "1 minute 20 seconds = 60 + 20 = 80 seconds"


def _restated(left: _Side, a: Quantity, b: Quantity) -> bool:
    """A quantity said again in a unit of its dimension ("1.5 hours, which is 1 hour 50 minutes"),
    not a unit's definition ("1 litre, that is 60 litres" after "1000 cm³ = 1 litre") nor a
    rounding ("23.8 litres, which is 24 litres to the nearest litre")."""
    if a.unit is None or b.unit is None or a.unit.dimension != b.unit.dimension or a.clock or b.clock:
        return False
    if left.definition or _unit_size(left):
        return False
    if not isinstance(a.value, Fraction) or not isinstance(b.value, Fraction):
        return False
    value = _in_unit(a, b.unit)
    return abs(float(value) - float(b.value)) > _tolerance_of(b.value) and not (
        isinstance(value, Fraction) and b.value in (math.floor(value), math.ceil(value))
    )


def _rewritten(a: Quantity, b: Quantity) -> bool:
    """The two sides write one quantity in different units ("1.25 hours" and "1 hour 25 minutes",
    "$3.50" and "350 cents"), not the same units again."""
    return a.unit != b.unit or a.units_seen != b.units_seen


def _unit_size(side: _Side) -> bool:
    """ "1 litre": one of a unit, as a conversion states it."""
    toks = _trim(side.toks)
    return [t.kind for t in toks] == ["num", "unit"] and toks[0].text == "1"


def _tolerance_of(value: Fraction) -> float:
    """Half a unit of the last decimal a stated value needs (0.05 for 2.3)."""
    places = 0
    while (value * 10**places).denominator != 1 and places < 6:
        places += 1
    return float(0.5 * 10**-places + 1e-9)


def _same_value(a: Quantity, b: Quantity) -> bool:
    """One value written twice (in one unit or two of one dimension)."""
    if a.clock != b.clock or not isinstance(a.value, Fraction) or not isinstance(b.value, Fraction):
        return False
    return _in_unit(a, b.unit) == b.value if convertible(a.unit, b.unit) else a.value == b.value


def _bare_percent(side: _Side) -> bool:
    """A side that is only a percentage ("15 %"), of no stated whole."""
    kinds = [t.kind for t in _trim(side.toks)]
    return kinds == ["num", "op"] and side.toks[-1].text == "%"


def _percent(side: _Side) -> bool:
    return any(t.text == "%" for t in side.toks)


def _decimal(side: _Side) -> bool:
    """A lone number below 1 or a plain ratio: the same share written without the percent sign."""
    toks = _trim(side.toks)
    if len(toks) == 1 and toks[0].kind in ("num", "frac"):
        value = Fraction(toks[0].text)
        return 0 < value <= 1
    return all(t.kind in ("num", "frac", "op") for t in toks) and any(t.text in ("÷", "/") for t in toks)


def _in_chain_unit(a: Quantity, b: Quantity, units: set[str]) -> bool:
    """One side has a unit, the other none, and the measured side in a unit of the chain is it."""
    measured, bare = (a, b) if b.unit is None else (b, a)
    if measured.unit is None or bare.unit is not None or not isinstance(measured.value, Fraction):
        return False
    for name in units:
        target = unit(name)
        if target is not None and target != measured.unit and convertible(measured.unit, target):
            converted = measured.value * measured.unit.scale / target.scale
            if abs(float(converted) - float(bare.value)) <= 1e-9 * max(1.0, abs(float(bare.value))):
                return True
    return False


def _conversion(a: Quantity, b: Quantity) -> bool:
    return convertible(a.unit, b.unit) and a.unit != b.unit


def _compare(left: _Side, right: _Side, a: Quantity, b: Quantity, operators: int) -> Evidence | None:
    claim = f"{left.text} {right.link} {right.text}"
    if b.clock and not b.meridiem and a.unit is not None and a.unit.dimension == "time" and operators:
        # "11:20 − 09:45 = 1:35": a worked-out duration written as hours:minutes (or minutes:seconds)
        minutes, seconds = _in_unit(a, unit("min")), _in_unit(a, unit("s"))
        shown = f"{int(minutes) // 60}:{int(minutes) % 60:02d}"
        return Evidence("clock", claim, right.text, shown, b.value in (minutes, seconds))
    if a.clock or b.clock:
        if not (a.clock and b.clock):
            return None
        ok = _same_clock(a, b)
        return Evidence("clock", claim, right.text, _clock_text(a), ok)
    compound = len(a.units_seen | b.units_seen) > 1 and a.unit is not None and b.unit is not None
    kind: Kind = "conversion" if (_conversion(a, b) or compound) and operators == 0 else "arithmetic"
    if a.unit is not None and b.unit is not None and a.unit.dimension != b.unit.dimension:
        return None  # "1000 m is 100 × 100 m" is fine; "3 hours is 150 km" is not a claim
    actual = _in_unit(a, b.unit) if convertible(a.unit, b.unit) else a.value
    tolerance = _tolerance(right, approximate=right.link == "≈")
    ok = abs(float(actual) - float(b.value)) <= tolerance
    if not ok and _converts_to_some_unit(a, b):
        ok = True  # "72 km/h = 72000 m ÷ 3600 s = 20": the same speed in m/s
    if not ok and _converted_by_factor(left, a, b):
        ok = True  # "1500 g ÷ 1000 = 1.5 kg": the division is the conversion
    if not ok and _percent(right) and not _percent(left) and any(t.text == "100" for t in left.toks):
        ok = abs(float(actual) - float(b.value) * 100) <= tolerance * 100  # "90 ÷ 600 × 100 = 15 %"
    if operators == 0 and kind == "arithmetic" and (ok or right.link in _WORD_EQ):
        return None  # "5 = 5", or two numbers joined by a word: nothing was computed
    return Evidence(kind, claim, right.text, _duration(actual, b) or _show(actual), ok)


def _duration(value: Number, b: Quantity) -> str:
    """A time stated in hours and minutes is shown so ("1 hour 35 minutes"), not as 19/12 hours."""
    if (
        b.unit is None
        or b.unit.dimension != "time"
        or len(b.units_seen) < 2
        or not isinstance(value, Fraction)
    ):
        return ""
    minutes = value * b.unit.scale / 60
    if minutes.denominator != 1 or minutes < 60:
        return ""
    hours, rest = divmod(int(minutes), 60)
    return f"{hours} hour{'s' * (hours != 1)} {rest} minute{'s' * (rest != 1)}"


def _converted_by_factor(left: _Side, a: Quantity, b: Quantity) -> bool:
    """The left side multiplies or divides by the factor between its unit and the right's, and the
    numbers agree: the operation *is* the unit conversion."""
    if not convertible(a.unit, b.unit) or a.unit == b.unit or a.unit is None or b.unit is None:
        return False
    factor = b.unit.scale / a.unit.scale
    numbers = {Fraction(t.text) for t in left.toks if t.kind == "num"}
    return (factor in numbers or 1 / factor in numbers) and (
        abs(float(a.value) - float(b.value)) <= 1e-9 * max(1.0, abs(float(b.value)))
    )


def _in_unit(q: Quantity, target: Unit | None) -> Number:
    if q.unit is None or target is None or not isinstance(q.value, Fraction):
        return q.value
    return q.value * q.unit.scale / target.scale


def _converts_to_some_unit(a: Quantity, b: Quantity) -> bool:
    """Whether one side, converted to a unit the other side's operands use, equals the other."""
    for single, other in ((a, b), (b, a)):
        if single.unit is None or not isinstance(single.value, Fraction):
            continue
        for name in _derived_units(other.units_seen):
            target = unit(name)
            if target is not None and target.dimension == single.unit.dimension:
                converted = single.value * single.unit.scale / target.scale
                if abs(float(converted) - float(other.value)) <= 1e-9 * max(1.0, abs(float(other.value))):
                    return True
    return False


def _derived_units(seen: set[str]) -> set[str]:
    names = set(seen)
    lengths = [n for n in seen if (u := unit(n)) is not None and u.dimension == "length"]
    times = {"s": "s", "sec": "s", "h": "h", "hour": "h", "min": "min"}
    for length in lengths:
        for name in seen:
            base = times.get(name)
            if base is not None:
                names.add(f"{length}/{base}")
    return names


def _tolerance(side: _Side, approximate: bool) -> float:
    """Rounding allowed for the stated value: half a unit of its last decimal (1 % for ≈)."""
    literal = re.search(r"\d+\.(\d+)", side.text)
    decimals = len(literal.group(1)) if literal and len(side.toks) <= 3 else 0
    # the boundary counts as rounding (32.125 written 32.12); the slack absorbs float error
    tolerance = (1.0 if side.truncated else 0.5) * 10**-decimals + 1e-9 if decimals else 1e-9
    if approximate:
        return max(tolerance, 0.01 * abs(_first_number(side)))
    return tolerance


def _first_number(side: _Side) -> float:
    for token in side.toks:
        if token.kind == "num":
            return float(token.text)
    return 0.0


def _same_clock(a: Quantity, b: Quantity) -> bool:
    period = 1440 if a.meridiem and b.meridiem else 720
    return (float(a.value) - float(b.value)) % period == 0


def _clock_text(q: Quantity) -> str:
    minutes = int(q.value) % 1440
    return f"{minutes // 60}:{minutes % 60:02d}"


def _show(value: Number) -> str:
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value.numerator)
        decimal = float(value)
        return (
            f"{value.numerator}/{value.denominator}"
            if abs(decimal * 1000 - round(decimal * 1000)) > 1e-9
            else f"{decimal:g}"
        )
    return f"{value:.4g}"


def _check_remainder(left: _Side, a: Quantity, b: Quantity, remainder: Fraction, found: Verification) -> None:
    divisor = re.search(r"÷\s*(\d+)(?!\.?\d)", left.text) or re.search(r"/\s*(\d+)(?!\.?\d)", left.text)
    if divisor is None or not isinstance(a.value, Fraction) or not isinstance(b.value, Fraction):
        return
    d = Fraction(divisor.group(1))
    dividend = a.value * d
    ok = b.value * d + remainder == dividend and 0 <= remainder < d
    actual = f"{int(dividend // d)} remainder {dividend - (dividend // d) * d}"
    found.evidence.append(
        Evidence("remainder", f"{left.text} = {b.value} remainder {remainder}", str(b.value), actual, ok)
    )
    if ok:
        found.results.append((left.toks[-1].end, b.value))
        found.results.append((left.toks[-1].end, remainder))
    found.steps.append(_step(left, left, b.value, ok, True, found.evidence[-1].claim))


def _solve(left: _Side, right: _Side, name: str, env: dict[str, Fraction]) -> None:
    """Solve a linear equation in ``name`` from its first statement (nothing if not linear)."""

    def f(x: Fraction) -> Fraction | None:
        trial = {**env, name: x}
        try:
            a, b = _evaluate(left, trial), _evaluate(right, trial)
        except NeedsVariable:
            return None
        if (
            a is None
            or b is None
            or not isinstance(a[0].value, Fraction)
            or not isinstance(b[0].value, Fraction)
        ):
            return None
        return a[0].value - b[0].value

    at0, at1, at2 = f(Fraction(0)), f(Fraction(1)), f(Fraction(2))
    if at0 is None or at1 is None or at2 is None or at1 == at0 or at2 - at1 != at1 - at0:
        return
    env[name] = -at0 / (at1 - at0)
