"""Which operation a relation in the story calls for, checked against the one the solution uses.

"3 times as many" multiplies, a rise of 11 degrees adds, "cut into 4 equal pieces … each" divides,
"how many can she buy with $48" divides the money by the price, "how long to empty 150 litres at 2.5
litres a minute" divides the amount by the rate, a speed is a distance over a time, and a number of
years is never added to an amount of money. Each detector reads the computation the solution writes
with the story's own numbers, returns ``""`` when it finds nothing (or does not apply), and
otherwise a sentence a writer can act on.
"""

from __future__ import annotations

import re
from fractions import Fraction

from agents.rubric.facts import ProblemFacts, show

_NUM = r"(\d+(?:\.\d+)?)"
_MONEY = r"[$£€]"


def _term(value: str) -> str:
    """A number as a term of the solution's working (not a digit of a longer number)."""
    return rf"(?<![\d.]){re.escape(show(Fraction(value)))}(?![\d]|\.\d)"


def _uses(s: str, left: str, op: str, right: str) -> bool:
    """``left op right`` written in the solution, money signs and units between allowed."""
    unit = r"(?: ?[a-z]{1,6})?"
    return bool(re.search(rf"{_MONEY}?{left}{unit} ?{op} ?{_MONEY}?{right}", s))


def _either(s: str, a: str, op: str, b: str) -> bool:
    return _uses(s, a, op, b) or _uses(s, b, op, a)


# ---- "N times as many" multiplies -------------------------------------------------------------------

_TIMES_AS = re.compile(rf"\b{_NUM} times (?:as (?:many|much|long|far|heavy|old|tall)|more)\b")


def times_as_many(f: ProblemFacts) -> str:
    """'Ann has 3 times as many stamps as Ben' is 3 × Ben's, never Ben's + 3."""
    for factor in _TIMES_AS.findall(f.q.lower()):
        n = _term(factor)
        if _either(f.s, r"\d+(?:\.\d+)?", r"\+", n) and not _either(f.s, r"\d+(?:\.\d+)?", "[×*]", n):
            times = show(Fraction(factor))
            return f"'{times} times as many' multiplies by {times}; the solution adds it"
    return ""


# ---- a rise adds, a fall subtracts --------------------------------------------------------------------

_RISE = re.compile(
    r"\b(?:rose|risen|rises|rise|increased|increases|went up|goes up|climbed|warmed(?: up)?|grew) "
    rf"by {_NUM}\b"
)
_FALL = re.compile(
    rf"\b(?:fell|fallen|falls|dropped|drops|decreased|decreases|went down|goes down|cooled) by {_NUM}\b"
)


def change_direction(f: ProblemFacts) -> str:
    """A temperature that rose by 11 degrees is 11 higher: the solution must not subtract the 11
    (nor add a fall)."""
    q, s = f.q.lower(), f.s
    for amount in _RISE.findall(q):
        n = _term(amount)
        if re.search(rf"-\s?{n}", s) and not re.search(rf"\+\s?{n}", s) and len(_RISE.findall(q)) == 1:
            return f"a rise of {show(Fraction(amount))} is added; the solution subtracts it"
    for amount in _FALL.findall(q):
        n = _term(amount)
        if re.search(rf"\+\s?{n}", s) and not re.search(rf"-\s?{n}", s) and len(_FALL.findall(q)) == 1:
            return f"a fall of {show(Fraction(amount))} is subtracted; the solution adds it"
    return ""


# ---- cut into N equal pieces: each is the whole ÷ N ---------------------------------------------------

_INTO = re.compile(
    rf"\b(?:cut|sawn|sawed|split|divided|shared|broken|folded|chopped|sliced) (?:equally )?into {_NUM} "
    r"(?:equal |same-sized |identical )?"
    r"(?:pieces|parts|lengths|portions|slices|strips|shares|bits|sections)\b"
)


def into_equal_parts(f: ProblemFacts) -> str:
    """'A 3.6 m plank sawn into 4 equal pieces — how long is each' divides by 4; multiplying by 4
    gives something longer than the plank."""
    found = _INTO.search(f.q.lower())
    if not found or not re.search(r"\beach\b|\bone (?:piece|part|slice|share|portion)\b", f.target):
        return ""
    n = _term(found.group(1))
    if _either(f.s, r"\d+(?:\.\d+)?", "[×*]", n) and not re.search(rf"[÷/] ?{n}", f.s):
        return (
            f"each of {show(Fraction(found.group(1)))} equal parts is the whole divided by "
            f"{show(Fraction(found.group(1)))}; the solution multiplies"
        )
    return ""


# ---- how many can be bought with an amount: money ÷ price ---------------------------------------------

_BUY_WITH = re.compile(rf"\bhow many\b[^?]*\b(?:buy|afford|get|purchase)\b[^?]*\bwith {_MONEY}{_NUM}")
_PRICE_EACH = re.compile(rf"{_MONEY}{_NUM} (?:each|a piece|apiece|per \w+)|\bcosts? {_MONEY}{_NUM}\b")


def bought_with(f: ProblemFacts) -> str:
    """'How many $6 tickets can he buy with $48' is 48 ÷ 6, never 48 − 6."""
    asked = _BUY_WITH.search(f.target)
    prices = [a or b for a, b in _PRICE_EACH.findall(f.q.lower())]
    if not asked or len(prices) != 1:
        return ""
    money, price = _term(asked.group(1)), _term(prices[0])
    for op, name in ((r"-", "subtracts"), (r"\+", "adds"), ("[×*]", "multiplies")):
        if _either(f.s, money, op, price) and not _uses(f.s, money, "[÷/]", price):
            return (
                f"how many can be bought is the money divided by the price "
                f"({show(Fraction(asked.group(1)))} ÷ {show(Fraction(prices[0]))}); the solution {name}"
            )
    return ""


# ---- an amount emptied or filled at a rate: amount ÷ rate ---------------------------------------------

_RATE = re.compile(rf"{_NUM} ?([a-z]+) (?:per|a|an|each|every) (second|minute|hour|day)\b")


def time_from_rate(f: ProblemFacts) -> str:
    """'How long to empty 150 litres at 2.5 litres a minute' is 150 ÷ 2.5 minutes; their product is
    litres squared per minute, not a time."""
    if not re.search(r"\bhow long\b|\bhow many (?:seconds|minutes|hours|days)\b", f.target):
        return ""
    q = f.q.lower()
    for rate, thing, _ in _RATE.findall(q):
        amounts = [
            a
            for a in re.findall(rf"{_NUM}[- ]?{re.escape(thing.rstrip('s'))}s?\b", q)
            if Fraction(a) != Fraction(rate)
        ]
        for amount in amounts:
            if _either(f.s, _term(amount), "[×*]", _term(rate)):
                return (
                    f"the time is the amount divided by the rate ({show(Fraction(amount))} ÷ "
                    f"{show(Fraction(rate))}); the solution multiplies them"
                )
    return ""


# ---- speed is distance over time -------------------------------------------------------------------------

_DISTANCE = re.compile(rf"{_NUM} ?(?:km|kilometres|kilometers|miles|m|metres|meters)\b(?!/)")
_DURATION = re.compile(rf"{_NUM} ?(?:hours?|h|minutes?|mins?|seconds?|s)\b")


def speed_from_product(f: ProblemFacts) -> str:
    """'12 km in 1.5 hours — what is her speed' is 12 ÷ 1.5; 12 × 1.5 is not a speed."""
    if not re.search(r"\b(?:speed|how fast|pace)\b", f.target):
        return ""
    q = f.q.lower()
    distances, durations = _DISTANCE.findall(q), _DURATION.findall(q)
    if len(distances) != 1 or len(durations) != 1:
        return ""
    d, t = _term(distances[0]), _term(durations[0])
    if _either(f.s, d, "[×*]", t) and not _either(f.s, d, "[÷/]", t):
        return "a speed is the distance divided by the time; the solution multiplies them"
    return ""


# ---- years added to money ----------------------------------------------------------------------------

_SPAN = re.compile(rf"\b{_NUM} (?:years|months|weeks|days)\b")


def duration_added_to_money(f: ProblemFacts) -> str:
    """'£72 a year for 4 years' is 72 × 4: adding the 4 years to the £72 mixes a time with money."""
    for span in _SPAN.findall(f.q.lower()):
        n = _term(span)
        if re.search(rf"{_MONEY}\d+(?:\.\d+)? ?\+ ?{n}|(?<![$£€\d.]){n} ?\+ ?{_MONEY}", f.s):
            return f"{show(Fraction(span))} is a number of years, months, weeks or days; it is added to money"
    return ""


def operation_mismatch(f: ProblemFacts) -> str:
    """The first relation whose operation the solution gets wrong."""
    for check in (
        times_as_many,
        change_direction,
        into_equal_parts,
        bought_with,
        time_from_rate,
        speed_from_product,
        duration_added_to_money,
    ):
        found = check(f)
        if found:
            return found
    return ""
