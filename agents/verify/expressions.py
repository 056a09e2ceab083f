"""Tokens and exact evaluation of the arithmetic a solution writes (no eval: a small parser).

Quantities are exact fractions (``3/4`` written without spaces is one number, so ``6 ÷ 3/4`` is 8),
carry a unit where one is written, and a clock time is minutes after midnight. Square roots of
non-squares are the only floats.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from agents.verify.units import CURRENCY, UNIT_PATTERN, Unit, unit

Number = Fraction | float

_TOKEN = re.compile(
    rf"""
    (?P<clock>\b\d{{1,2}}:\d{{2}}(?:\s?[ap]\.?m\.?)?)
  | (?P<mixed>\b\d+\s\d+/\d+\b(?!\.\d))
  | (?P<frac>\b\d+/\d+\b(?!\.\d))
  | (?P<num>\d+(?:\.\d+)?)
  | (?P<cur>{CURRENCY})
  | (?P<unit>(?:{UNIT_PATTERN})(?![\w/]))
  | (?P<eq>=|≈|(?:,\s*)?\b(?:which\s+is|that\s+is|which\s+(?:makes|gives|leaves|equals))\b|"""
    rf"""\b(?:comes?\s+to|is|are|makes?|gives?|equals?|leaves|was|becomes?|became|to\s+get|"""
    rf"""(?:we|you|they|I)\s+get)\b)
  | (?P<op>[+\-×÷/^²³√%])
  | (?P<lp>\()
  | (?P<rp>\))
  | (?P<of>\bof\b)
  | (?P<rem>\bremainder\b|(?<=\d\s)r(?=\s?\d))
  | (?P<var>(?<![A-Za-z])[a-zA-Z](?![A-Za-z]))
  | (?P<word>[^\s\d]+)
    """,
    re.X,
)
# A whole decimal as one captured number: never the integer part of one ("19" of "19.6", when what
# follows 19.6 does not fit the pattern and the engine backs off) nor its tail ("6" of "19.6" after
# a word boundary at the point).
NUMBER = r"(?<!\d)(?<!\d\.)(\d+(?:\.\d+)?)(?!\.?\d)"
_N = NUMBER
_GROUPS = (
    r"(?:boxes|bags|packs|packets|rows|groups|teams|lots|sets|crates|trays|jars|bottles|cartons|tables|"
    r"shelves|baskets|plates|pages|tins|cases|bunches|handfuls)"
)
WORD_OPS = [
    # operations named before their numbers: "the sum of 12 and 5", "taking 5 from 12"
    (re.compile(rf"\bthe sum of {_N} and {_N}", re.I), r"\1 + \2"),
    (re.compile(rf"\bthe product of {_N} and {_N}", re.I), r"\1 × \2"),
    (re.compile(rf"\bthe difference between {_N} and {_N}", re.I), r"\1 - \2"),
    (
        re.compile(rf"\b(?:taking|take|subtracting|subtract|removing) {_N} (?:away )?from {_N}", re.I),
        r"\2 - \1",
    ),
    (re.compile(rf"\b(?:adding|add) {_N} to {_N}", re.I), r"\2 + \1"),
    (re.compile(rf"\b(?:adding|add) {_N} and {_N}", re.I), r"\1 + \2"),
    (re.compile(rf"\b(?:dividing|divide) {_N} by {_N}", re.I), r"\1 ÷ \2"),
    (re.compile(rf"\b(?:multiplying|multiply) {_N} by {_N}", re.I), r"\1 × \2"),
    (re.compile(rf"\b{_N} divided into (?:groups|parts|shares|piles) of {_N}", re.I), r"\1 ÷ \2"),
    (re.compile(rf"\b(?:double|doubling) {_N}", re.I), r"2 × \1"),
    (re.compile(rf"\b(?:triple|tripling|treble) {_N}", re.I), r"3 × \1"),
    # "5 more than 12" is 12 + 5; "5 less than 12", "5 fewer than 12" is 12 - 5
    (re.compile(rf"\b{_N} more than {_N}(?= (?:is|are|makes?|gives?|equals?)\b)", re.I), r"\2 + \1"),
    (
        re.compile(rf"\b{_N} (?:less|fewer) than {_N}(?= (?:is|are|makes?|gives?|equals?)\b)", re.I),
        r"\2 - \1",
    ),
    # "12 and 5 more is 18", "12 apples and then 5 more, which makes 18"
    (
        re.compile(
            rf"\b{_N} ((?:[a-z]+ ){{0,2}})and (?:then |another |gets |buys |finds |adds )?{_N} more\b", re.I
        ),
        r"\1 \2+ \3",
    ),
    # "14 add 9 is 23"
    (re.compile(r"(?<=\d) (?:add|and add) (?=\d)", re.I), " + "),
    # "4 boxes of 6 eggs": equal groups
    (re.compile(rf"\b{_N} {_GROUPS} of {_N}\b", re.I), r"\1 × \2"),
    (re.compile(r"\bplus\b", re.I), "+"),
    (re.compile(r"\b(?:minus|take away)\b", re.I), "-"),
    (re.compile(r"\b(?:times|multiplied by|lots of|groups of)\b", re.I), "×"),
    (re.compile(r"(?<=\d) (?:is )?tripled\b", re.I), " × 3"),
    (re.compile(r"(?<=\d) (?:is )?doubled\b", re.I), " × 2"),
    (re.compile(r"(?<=\d) (?:is )?halved\b", re.I), " ÷ 2"),
    (re.compile(r"\btwice (?=\d)", re.I), "2 × "),
    (re.compile(rf"\b{_N} dozen\b", re.I), r"\1 × 12"),
    (
        re.compile(
            r"\b(?:divided by|shared (?:out )?(?:equally )?(?:among|between)|"
            r"split (?:equally )?(?:among|between))\b",
            re.I,
        ),
        "÷",
    ),
    (re.compile(r"\b(\d+) (\d+) (?=are\b|make\b|makes\b)", re.I), r"\1 × \2 "),  # "eight twelves are 96"
    # "forty and twenty together, which is sixty": a sum in words
    (re.compile(r"\b(\d+(?:\.\d+)?) and (\d+(?:\.\d+)?) together\b", re.I), r"\1 + \2"),
    # "twenty-five and eighteen make forty-one"
    (
        re.compile(
            r"\b(\d+(?:\.\d+)?) and (\d+(?:\.\d+)?) "
            r"(?=(?:make|makes|come to|comes to|equal|equals|give|gives) \d)",
            re.I,
        ),
        r"\1 + \2 ",
    ),
]


@dataclass(frozen=True)
class Token:
    """One token of normalised text, with its place in that text."""

    kind: str
    text: str
    start: int
    end: int


_DEFINED = re.compile(r"\blet\s+([a-zA-Z])\s+(?:be|denote|represent|stand for)\b", re.I)
# "Let the number be n"; letters a formula multiplies ("A = b × h ÷ 2": b and h are not units)
_NAMED_LAST = re.compile(r"\blet\s+the\s+(?:\w+\s+){1,4}?be\s+([a-zA-Z])\b(?![\w'])", re.I)
_FORMULA = re.compile(r"(?<![\w.])([a-zA-Z])\s*[×÷]\s*([a-zA-Z])(?![\w.])")
_ASSIGNED = re.compile(r"(?:^|[.,;:(→⇒]\s*|\b(?:and|so|then|check)\s+)([a-zA-Z])\s*=", re.M)


def variables(text: str) -> set[str]:
    """Letters the text uses as variables ("Let n be ...", "so m = ...")."""
    named = set(_DEFINED.findall(text)) | set(_ASSIGNED.findall(text)) | set(_NAMED_LAST.findall(text))
    return named | {letter for pair in _FORMULA.findall(text) for letter in pair}


def with_word_ops(text: str) -> str:
    """Worded operators as symbols ("plus" → "+"); applying it twice changes nothing more, so token
    offsets can be read against its result."""
    for pattern, replacement in WORD_OPS:
        text = pattern.sub(replacement, text)
    return text


def tokens(text: str, names: set[str] | None = None) -> list[Token]:
    """Normalised text (digits, symbols) as tokens; worded operators become symbols first.

    A single letter is a unit only right after a number and when the text does not use it as a
    variable (``25m`` is 25 metres unless ``m`` is defined: "so m = 8").
    """
    text = with_word_ops(text)
    names = variables(text) if names is None else names
    out: list[Token] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "word"
        word = match.group(0)
        if (
            kind == "unit"
            and len(word) == 1
            and (word in names or not out or out[-1].kind not in ("num", "frac"))
        ):
            kind = "var"
        if kind == "var" and word not in names:
            kind = "word"  # an article, a pronoun, a label: not a variable of this solution
        out.append(Token(kind, word, match.start(), match.end()))
    return out


@dataclass
class Quantity:
    """A value with its unit (None when unitless); ``clock`` for times of day."""

    value: Number
    unit: Unit | None = None
    clock: bool = False
    meridiem: bool = False  # the clock time said am/pm (or was 13:00-23:59)
    units_seen: set[str] = field(default_factory=set)


class NotArithmetic(ValueError):
    """The tokens are not an expression we can evaluate."""


class NeedsVariable(NotArithmetic):
    """The expression uses a variable that has no value."""


def parse_clock(text: str) -> Quantity:
    """``9:05 pm`` → 1265 minutes after midnight."""
    hours, rest = text.split(":", 1)
    minutes, meridiem = int(rest[:2]), rest[2:].strip().lower().replace(".", "")
    value = int(hours) % 12 * 60 + minutes if meridiem else int(hours) * 60 + minutes
    if meridiem == "pm":
        value += 720
    return Quantity(Fraction(value), clock=True, meridiem=bool(meridiem) or int(hours) > 12)


class Evaluator:
    """Recursive descent over expression tokens; variables take values from ``env``."""

    def __init__(self, toks: list[Token], env: dict[str, Fraction] | None = None) -> None:
        self.toks, self.i, self.env = toks, 0, env or {}
        self.operators = 0

    def run(self) -> Quantity:
        if not self.toks:
            raise NotArithmetic("empty")
        result = self.expr()
        if self.i != len(self.toks):
            raise NotArithmetic(f"unexpected {self.toks[self.i].text!r}")
        return result

    def peek(self, *texts: str) -> bool:
        return self.i < len(self.toks) and (
            self.toks[self.i].text in texts or self.toks[self.i].kind in texts
        )

    def take(self) -> Token:
        token = self.toks[self.i]
        self.i += 1
        return token

    def expr(self) -> Quantity:
        left = self.term()
        while self.peek("+", "-"):
            op = self.take().text
            self.operators += 1
            left = _add(left, self.term(), op == "-")
        return left

    def term(self) -> Quantity:
        left = self.factor()
        while True:
            if self.peek("×", "÷", "/", "of"):
                op = self.take().text
                self.operators += 1
                right = self.factor()
                left = _div(left, right) if op in ("÷", "/") else _mul(left, right)
            elif self.peek("num", "frac", "mixed", "var", "lp", "√") and _implicit(self.toks[self.i - 1]):
                self.operators += 1
                left = _mul(left, self.factor())
            else:
                return left

    def factor(self) -> Quantity:
        if self.peek("-"):
            self.take()
            inner = self.factor()
            return Quantity(-inner.value, inner.unit)
        base = self.atom()
        while self.peek("²", "³", "^", "%"):
            op = self.take().text
            self.operators += 1
            if op == "%":
                base = Quantity(_exact(base.value) / 100)
            elif op == "^":
                exponent = self.atom().value
                base = Quantity(_power(base.value, exponent), base.unit)
            else:
                base = Quantity(_power(base.value, 2 if op == "²" else 3), base.unit)
        return base

    def atom(self) -> Quantity:
        if self.i >= len(self.toks):
            raise NotArithmetic("dangling operator")
        token = self.take()
        if token.kind == "cur":
            amount = self.atom()
            return self.cents(Quantity(amount.value, unit("$"), units_seen={"$"}))
        if token.text == "√":
            self.operators += 1
            inner = self.atom()
            return Quantity(_sqrt(inner.value))
        if token.kind == "lp":
            inner = self.expr()
            if not self.peek("rp"):
                raise NotArithmetic("unclosed parenthesis")
            self.take()
            return inner
        if token.kind == "var":
            if token.text not in self.env:
                raise NeedsVariable(token.text)
            return Quantity(self.env[token.text])
        if token.kind == "clock":
            return parse_clock(token.text)
        if token.kind in ("num", "frac", "mixed"):
            return self.quantity(_literal(token.text))
        raise NotArithmetic(f"not arithmetic: {token.text!r}")

    def quantity(self, value: Fraction) -> Quantity:
        """A number, its unit, and any compound continuation (1 hour 45 minutes, 1 m 20 cm)."""
        if not self.peek("unit"):
            return Quantity(value)
        first = unit(self.take().text)
        total = Quantity(value, first, units_seen={first.name} if first else set())
        while first is not None and first.dimension in ("time", "length", "mass") and self._compound_next():
            if self.peek("and"):
                self.take()
            amount = _literal(self.take().text)
            extra = unit(self.take().text)
            if extra is None or extra.dimension != first.dimension:
                raise NotArithmetic("mixed compound quantity")
            total = Quantity(
                _exact(total.value) + amount * extra.scale / first.scale,
                first,
                units_seen=total.units_seen | {extra.name},
            )
        return total

    def cents(self, amount: Quantity) -> Quantity:
        """An amount of money and the cents or pence that follow it ("$3 and 50 cents")."""
        j = self.i + (1 if self.peek("and") else 0)
        small = unit(self.toks[j + 1].text) if self._compound_next() else None
        if small is None or small.dimension != "money" or small.scale >= 1:
            return amount
        self.i = j + 2
        cents = _literal(self.toks[j].text) * small.scale
        return Quantity(
            _exact(amount.value) + cents, amount.unit, units_seen=amount.units_seen | {small.name}
        )

    def _compound_next(self) -> bool:
        j = self.i + (1 if self.peek("and") else 0)
        return (
            j + 1 < len(self.toks)
            and self.toks[j].kind in ("num", "frac")
            and self.toks[j + 1].kind == "unit"
        )


def _implicit(previous: Token) -> bool:
    """Juxtaposition multiplies after a number, a variable or a closing parenthesis (4n, 5(40 - x))."""
    return previous.kind in ("num", "var", "rp", "frac")


def _literal(text: str) -> Fraction:
    if " " in text:
        whole, part = text.split(" ", 1)
        return Fraction(whole) + Fraction(part)
    return Fraction(text)


def _exact(value: Number) -> Fraction:
    if isinstance(value, float):
        raise NotArithmetic("irrational value in an exact operation")
    return value


def _power(value: Number, exponent: Number) -> Number:
    if isinstance(value, Fraction) and isinstance(exponent, Fraction) and exponent.denominator == 1:
        if abs(exponent) > 12:
            raise NotArithmetic("exponent too large")
        return value ** int(exponent)
    return float(float(value) ** float(exponent))


def _sqrt(value: Number) -> Number:
    if value < 0:
        raise NotArithmetic("square root of a negative number")
    if isinstance(value, Fraction):
        num, den = math.isqrt(value.numerator), math.isqrt(value.denominator)
        if num * num == value.numerator and den * den == value.denominator:
            return Fraction(num, den)
    return math.sqrt(float(value))


def _combine_units(left: Quantity, right: Quantity) -> set[str]:
    return left.units_seen | right.units_seen


def _add(left: Quantity, right: Quantity, subtract: bool) -> Quantity:
    """Sum or difference; a clock plus a duration is a clock; convertible units are converted."""
    seen = _combine_units(left, right)
    if left.clock and right.unit is not None and right.unit.dimension == "time":
        minutes = _exact(right.value) * right.unit.scale / 60
        return Quantity(
            _exact(left.value) + (-minutes if subtract else minutes), clock=True, meridiem=left.meridiem
        )
    if left.clock and right.clock and subtract:
        # From one time of day to another is a duration in minutes, past midnight if need be; two
        # times said without am/pm are read on a 12-hour clock ("5:00 − 9:00" is 8 hours).
        span = _exact(left.value - right.value) % 1440
        if not (left.meridiem or right.meridiem) and span > 720:
            span -= 720
        return Quantity(span, unit("min"), units_seen=seen | {"min"})
    r_value: Number = right.value
    if left.unit is not None and right.unit is not None and left.unit.dimension == right.unit.dimension:
        r_value = _exact(right.value) * right.unit.scale / left.unit.scale
    total = left.value - r_value if subtract else left.value + r_value
    return Quantity(total, left.unit or right.unit, units_seen=seen)


def _mul(left: Quantity, right: Quantity) -> Quantity:
    kept = left.unit if right.unit is None else (right.unit if left.unit is None else None)
    return Quantity(left.value * right.value, kept, units_seen=_combine_units(left, right))


def _div(left: Quantity, right: Quantity) -> Quantity:
    if right.value == 0:
        raise NotArithmetic("division by zero")
    value = (
        _exact(left.value) / _exact(right.value)
        if isinstance(left.value, Fraction) and isinstance(right.value, Fraction)
        else float(left.value) / float(right.value)
    )
    kept = left.unit if right.unit is None else None
    return Quantity(value, kept, units_seen=_combine_units(left, right))
