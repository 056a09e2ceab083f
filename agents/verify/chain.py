"""The chain of a solution's computations, checked as a whole rather than line by line.

Every number a step uses is given in the question, a known constant (60 minutes, 100 %, 7 days), or
computed by an earlier step (or one silent operation away from those). A step that uses a number
from nowhere while an earlier result close to it is used by nothing is an *uncarried correction*:
``14 × 8.65 = 121.1`` fixed, then ``120.10 + 12 = 132.10`` still adds the old total; each line is
true alone, the chain is not. The stated final answer must be the last value computed, not a
value a later step went on from. What cannot be read or traced is listed as unverified, never
passed as checked.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import TYPE_CHECKING

from agents.verify.expressions import parse_clock, tokens, variables
from agents.verify.givens import givens
from agents.verify.steps import Evidence, Step
from agents.verify.units import CURRENCY, UNIT_PATTERN

if TYPE_CHECKING:
    from agents.verify.verifier import Verification

# Numbers a solution may use unasked: unit factors, halves and quarters, π.
CONSTANTS = frozenset(
    Fraction(v)
    for v in (
        *range(0, 11),
        12, 14, 24, 28, 30, 31, 52, 60, 90, 100, 180, 360, 365, 366, 1000, 3600, "3.6",
        "1/2", "1/3", "1/4", "3/4", "1/10", "1/100", "1/1000", "1/60", "3.14", "3.142", "3.1416", "22/7",
    )
)  # fmt: skip
_FACTORS = tuple(Fraction(v) for v in (10, 100, 1000, 60, 3600, 24, 7, 12, 52, 365, 4))
_SMALL = frozenset(Fraction(n) for n in range(2, 11))  # "3 parts = 45, so 1 part = 15"
_CLOSE = Fraction(1, 5)  # an uncarried correction differs from the value it stands for by under 20 %
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9$£€(])|\n+")
_CHECKING = re.compile(r"\s*(?:check(?:ing)?|to check|as a check)\b", re.I)
_RELATION = re.compile(
    r"(?:\bwhich|\bthat) (?:is|makes|gives|leaves|equals|comes to)\b|\bbec(?:omes?|ame)\b|"
    r"\b(?:twice|double|triple|half|\d+(?:\.\d+)? (?:times|×)|\d+/\d+) as (?:many|much|long|old|far|tall)\b|"
    r"(?:,? (?:which|that) (?:is|are) )?\b(?:a little |much |far )?"
    r"(?:more|less|fewer|older|younger|greater|smaller) than\b|"
    r"\bfrom \d{1,2}:\d\d\b[^.]*?\bto \d{1,2}:\d\d",
    re.I,
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def check(question: str, text: str, found: Verification) -> None:
    """Check the chain of ``found.steps`` against the question's givens (both texts normalised)."""
    given = question_numbers(question)
    _trace(given, text, found)
    clocks = {Fraction(parse_clock(t.text).value) for t in tokens(question, set()) if t.kind == "clock"}
    _final_answer(given, text, found, clocks)
    _unread_relations(given, text, found)
    found.depended = depended(text, found)


def depended(text: str, found: Verification) -> list[Step]:
    """The unverified steps the final answer depends on: the answer's value traced back through the
    steps that compute it (a step computing a value the trace needs adds its operands), to any
    unverified step that states one of those values or that states the answer itself. With no
    answer to trace, every unverified step (none can be shown not to matter)."""
    at, answer, _, _ = _answer(text)
    if answer is None:
        return list(found.unverified)
    pool = [s for s in [*found.steps, *found.unverified] if s.result is not None and s.start < at]
    needed, traced = {answer}, [False] * len(pool)
    grown = True
    while grown:
        grown = False
        for index, step in enumerate(pool):
            if not traced[index] and step.result in needed:
                traced[index], grown = True, True
                needed |= set(step.operands)
    ids = {id(step) for step, used in zip(pool, traced, strict=True) if used}
    return [u for u in found.unverified if id(u) in ids or u.start < at <= u.end]


def question_numbers(question: str) -> set[Fraction]:
    """Every number the question gives, with the forms a solution uses without computing them:
    a percent the question states as one as a decimal and as a multiplier (15 % → 0.15, 1.15,
    0.85; a number not written as a percent is not one: 7 is no 0.07), a rate (1/12 of a job done
    in 12 minutes), a unit fraction of a fraction (1/8 of 3/8), a clock time's parts and the minutes
    to its next hour, a duration in hours and minutes in either unit (1 h 50 min → 11/6, 110)."""
    values: set[Fraction] = set()
    percents: set[Fraction] = set()
    found = tokens(question, variables(question))
    for token, after in zip(found, [*found[1:], None], strict=True):
        if token.kind in ("num", "frac", "mixed"):
            values.add(_value(token.text))
            if after is not None and after.text == "%":
                percents.add(_value(token.text))
        elif token.kind == "clock":
            values |= _clock_parts(Fraction(parse_clock(token.text).value))
    for hours, minutes in _DURATION.findall(question):
        values |= {int(hours) + Fraction(int(minutes), 60), Fraction(int(hours) * 60 + int(minutes))}
    values |= _totals(question)
    shares = {v / 100 for v in percents}
    derived = {1 + p for p in shares} | {1 - p for p in shares} | {1 / v for v in values if v}
    derived |= {Fraction(1, v.denominator) for v in values if v.denominator > 1}
    return values | shares | derived


def _totals(question: str) -> set[Fraction]:
    """The total of each kind of quantity the question lists ("12, 15, 9 and 14 points" → 50): what
    "the four scores add up to 50" states without writing the sum out."""
    kinds: dict[str, list[Fraction]] = {}
    for given in givens(question):
        if given.noun and given.noun != "%":
            kinds.setdefault(given.noun, []).append(given.value)
    return {sum(listed, Fraction(0)) for listed in kinds.values() if len(listed) > 2}


_DURATION = re.compile(r"(?<![\d.])(\d+) ?(?:hours?|h) (?:and )?(\d+) ?(?:minutes?|min)\b")


def _clock_parts(minutes: Fraction) -> set[Fraction]:
    """A time of day, its hour and minutes, and the minutes to the next hour (9:15 → 45)."""
    hour, minute = divmod(int(minutes) % 1440, 60)
    return {minutes, Fraction(hour), Fraction(hour % 12), Fraction(minute), Fraction(60 - minute)}


def _value(text: str) -> Fraction:
    whole, _, part = text.partition(" ")
    return Fraction(whole) + (Fraction(part) if part else 0)


def _trace(given: set[Fraction], text: str, found: Verification) -> None:
    """Every number a step uses comes from the question, a constant, or an earlier step."""
    computed: set[Fraction] = set()
    steps = sorted(found.steps, key=lambda s: s.start)
    for index, step in enumerate(steps):
        if step.first and not _CHECKING.match(text[_sentence_start(text, step.start) :]):
            for operand in step.operands:
                if not _traceable(operand, given, computed):
                    _orphan(operand, step, steps[:index], text, found)
        if step.result is not None:
            computed |= _clock_parts(step.result) if step.clock else {step.result}


def _traceable(value: Fraction, given: set[Fraction], computed: set[Fraction]) -> bool:
    """Given, constant, computed, or one silent operation away from given and computed values."""
    known = given | computed
    if value in known or value in CONSTANTS or _rounded(value, computed):
        return True
    if any(value in (a * k, a / k) for a in known for k in _FACTORS):
        return True
    if value.denominator == 1 and any(a.denominator == 1 and abs(value - a) == 1 for a in known):
        return True  # the next whole number tried ("15 × 35 = 525 is too long")
    return any(_one_operation(value, a, b) for a in known for b in known | _SMALL)


def _one_operation(value: Fraction, a: Fraction, b: Fraction) -> bool:
    """``value`` is a + b, a − b, a × b, a ÷ b, or a ÷ b rounded to a whole number."""
    if value in (a + b, a - b, a * b):
        return True
    return b != 0 and (value == a / b or (value.denominator == 1 and value in (a // b, -(-a // b))))


def _rounded(value: Fraction, computed: set[Fraction]) -> bool:
    """A computed value rounded to a whole number or to the decimals ``value`` is written with."""
    places = next((p for p in range(1, 7) if (value * 10**p).denominator == 1), 0)
    slack = Fraction(1, 2 * 10**places) if places else Fraction(0)
    return any(value in (math.floor(v), math.ceil(v)) or abs(v - value) <= slack for v in computed)


def _orphan(operand: Fraction, step: Step, earlier: list[Step], text: str, found: Verification) -> None:
    """A number from nowhere: a stale result when an earlier result near it is used by nothing."""
    stale = next((s for s in reversed(earlier) if _dangling(s, text) and _near(operand, s.result)), None)
    written = _written(operand, step.claim)
    if stale is not None:
        shown = _show(stale.result)
        found.evidence.append(
            Evidence(
                "chain",
                step.claim,
                written,
                shown,
                False,
                f"uses {written}, which neither the question gives nor an earlier step computes: "
                f"the earlier step {stale.claim} computes {shown} and no later step uses it "
                f"(a corrected value not carried to its later use)",
            )
        )
        return
    found.unverified.append(
        Step(
            step.claim,
            step.operands,
            step.result,
            step.start,
            step.end,
            step.ok,
            step.first,
            f"uses {written}, which neither the question gives nor an earlier step computes",
        )
    )


def _written(value: Fraction, claim: str) -> str:
    """The number as the step writes it ("120.10", not 120.1)."""
    return next((n for n in _NUMBER.findall(claim) if Fraction(n) == value), _show(value))


def _dangling(step: Step, text: str) -> bool:
    """A result that nothing after its step writes again (no later step uses it)."""
    if step.result is None:
        return False
    later = {_number_value(n) for n in _NUMBER.findall(text[step.end :])}
    return step.result not in later


def _near(value: Fraction, result: Fraction | None) -> bool:
    if result is None or result == 0 or value == result:
        return False
    return abs(value - result) <= _CLOSE * abs(result)


def _final_answer(given: set[Fraction], text: str, found: Verification, clocks: set[Fraction]) -> None:
    """The answer stated last is the last value computed, not a value a later step went on from,
    and a value the chain has (a time of day it gives or reaches, for a time)."""
    start, answer, noun, clock = _answer(text)
    steps = sorted((s for s in found.steps if s.result is not None), key=_at)
    before = [s for s in steps if s.end <= start]  # ``start``: where the answer's number ends
    if answer is None or not before or answer == before[-1].result:
        return
    source = next((s for s in reversed(before) if s.result == answer), None)
    onward = [s for s in before if source is not None and _goes_on(s, source, answer, given)]
    if source is not None and onward and _same_quantity(onward[-1], noun, text):
        found.evidence.append(
            Evidence(
                "answer",
                f"answer {_show(answer)}",
                _show(answer),
                _show(onward[-1].result),
                False,
                f"the final answer copies {_show(answer)} from an intermediate step ({source.claim}), "
                f"but the chain goes on from it to {onward[-1].claim}",
            )
        )
    elif source is None and (
        _unreached(answer, start, given, found, clocks)
        if clock
        else _unfounded(answer, start, text, given, found)
    ):
        found.evidence.append(
            Evidence(
                "answer",
                f"answer {_show(answer)}",
                _show(answer),
                _show(before[-1].result),
                False,
                f"the final answer {_show(answer)} is no value the chain computes: its last step "
                f"{before[-1].claim} computes {_show(before[-1].result)}",
            )
        )


def _unfounded(answer: Fraction, at: int, text: str, given: set[Fraction], found: Verification) -> bool:
    """The answer is no value the chain has. The chain has what the question gives, what a step
    before the answer computes (or a relation states), and each number the solution writes on the
    way that is a constant or one operation on values it has already ("so she has 40 euros left"),
    each taken in the order written. The answer must be one of these, one of them rounded or in
    another unit, or one operation on two of them: "60 − 22 = 38. There are 36 rolls left." states
    an answer nothing computes. The small part of a compound quantity ("4 m 65 cm") is not read."""
    written = list(_WRITTEN.finditer(text, 0, at))
    own = next((m for m in reversed(written) if m.end() == at), None)
    if own is not None and _COMPOUND.search(text, 0, own.start()):
        return False
    steps = [*found.steps, *found.unverified]
    known = {s.result for s in steps if s.result is not None and s.start < at} | given
    known |= {value for offset, value in found.results if offset < at}
    for match in written:
        value = _number_value(match.group(0))
        if match is not own and (value in CONSTANTS or _founded(value, known)):
            known.add(value)
    return not _founded(answer, known)


def _unreached(
    answer: Fraction, at: int, given: set[Fraction], found: Verification, clocks: set[Fraction]
) -> bool:
    """A time of day as the answer that the chain does not reach: not a time the question gives or a
    step reaches, nor one of those moved by a duration the chain has (minutes, or hours as minutes),
    on a 12-hour clock. "7:30 + 2 hours = 9:30. It ends at 10:30." answers a time nothing reaches."""
    steps = [s for s in [*found.steps, *found.unverified] if s.result is not None and s.start < at]
    times = clocks | {s.result for s in steps if s.clock and s.result is not None}
    spans = {s.result for s in steps if not s.clock and s.result is not None} | given
    moves = {Fraction(0)} | spans | {d * 60 for d in spans}
    return not any((answer - t - m) % 720 == 0 or (answer - t + m) % 720 == 0 for t in times for m in moves)


def _founded(value: Fraction, known: set[Fraction]) -> bool:
    """One of the known values, one rounded or in another unit, or one operation on two of them."""
    if value in known:
        return True
    scaled = {a * k for a in known for k in _FACTORS} | {a / k for a in known for k in _FACTORS}
    if value in scaled or _rounded(value, known | scaled):
        return True
    return any(_one_operation(value, a, b) or (b > 0 and value == a % b) for a in known for b in known)


_WRITTEN = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d/]|\.\d)")
_COMPOUND = re.compile(rf"\d\s?(?:{UNIT_PATTERN})\s+(?:and\s+)?\Z")


def _goes_on(step: Step, source: Step, value: Fraction, given: set[Fraction]) -> bool:
    """A later step adds to or takes from the value the answer copies, and finds something new (a
    check that computes a given back, "3000 + 600 = 3600", goes nowhere)."""
    return (
        step.start >= source.end
        and value in step.operands
        and step.result not in given
        and re.search(r"\d\s*[-+]\s*\d", step.claim) is not None
    )


def _stale_answer(answer: Fraction, before: list[Step], given: set[Fraction]) -> bool:
    """An answer near the last result that neither rounds it nor adds one more whole item to it:
    the old value of a corrected result ("121.1", then "the total is $120.10")."""
    last = before[-1]
    result = last.result
    if result is None or last.clock or answer in given or not _near(answer, result):
        return False
    computed = {s.result for s in before if s.result is not None}
    if _traceable(answer, given, computed):
        return False
    # a constant added or taken ("the largest is 24 + 4"), but no 1 off a decimal (121.1 − 1)
    return not any(
        answer in (a + c, a - c) and (c != 1 or a.denominator == 1)
        for a in given | computed
        for c in CONSTANTS
    )


def _at(step: Step) -> int:
    return step.start


def _went_on(source: Step, before: list[Step], value: Fraction) -> bool:
    """A later step of the chain uses the value the answer copies."""
    return any(s.start >= source.end and value in s.operands for s in before)


_NOUN = re.compile(r"^\s*([a-z]{3,})")


def _same_quantity(last: Step, noun: str, text: str) -> bool:
    """The last step does not name another kind of thing than the answer ("21 children" when the
    answer counts adult tickets)."""
    after = _NOUN.match(text[last.end : last.end + 30].lower())
    return not (noun and after and after.group(1) != noun and after.group(1) not in _LINKING)


_LINKING = frozenset({"and", "so", "the", "which", "that", "then", "for", "left", "altogether", "in", "each"})


def _answer(text: str) -> tuple[int, Fraction | None, str, bool]:
    """Where the answer sentence's last number ends, that number (a clock time in minutes), and the noun
    after it. A closing check ("Check: 28 + 8 = 36") is not the answer."""
    offset, spans = 0, []
    for part in _SENTENCE.split(text):
        at = text.find(part, offset)
        offset = at + len(part)
        if re.search(r"\d", part) and not _CHECKING.match(part):
            spans.append((at, part))
    if not spans:
        return 0, None, "", False
    at, sentence = spans[-1]
    for token in reversed(tokens(sentence, set())):
        if token.kind == "clock":
            return at + token.end, Fraction(parse_clock(token.text).value), "", True
        if token.kind in ("num", "frac", "mixed"):
            noun = _NOUN.match(sentence[token.end :].lower())
            return at + token.end, _value(token.text), noun.group(1) if noun else "", False
    return at, None, "", False


def _unread_relations(given: set[Fraction], text: str, found: Verification) -> None:
    """A relation in words ("which is", "twice as many as", "becomes") with a number right after
    it that no step covers and that is no value the chain has (or is one operation from): read, but
    not checked. A comparison ("which is more than £15") is checked; a restatement whose two values
    differ ("1.5 hours, which is 1 hour 50 minutes") is never passed."""
    compared: dict[int, Fraction] = {}  # where a checked comparison's number ends: its left value
    for match in _RELATION.finditer(text):
        number = _NEAR_NUMBER.match(text, match.end())
        if _COMPARES.search(match.group(0)) and number is None:
            # "3 times as many as Mia, which is 18": the value it claims ends the sentence
            found_number = _LATER_NUMBER.search(text, match.end(), _sentence_end(text, match.end()))
            number = found_number
        reason = _unread(match, number, given, found, compared) if number is not None else ""
        start = _sentence_start(text, match.start())
        if not reason or number is None or any(u.start == start for u in found.unverified):
            continue  # read, or its sentence is listed already
        claim = text[start : _sentence_end(text, number.end())].strip()
        stated = Fraction(number.group(1))  # the value the relation states: a later step may use it
        found.unverified.append(Step(claim, (), stated, start, number.end(), reason=reason))


def _unread(
    match: re.Match[str],
    number: re.Match[str],
    given: set[Fraction],
    found: Verification,
    compared: dict[int, Fraction],
) -> str:
    """Why the relation is not verified ("" when it is)."""
    said = f"a relation in words ('{match.group(0).strip(', ')}') not read"
    if any(u.start <= match.start() < u.end for u in found.unequal):
        return said + ": its two sides differ"
    if any(s.start <= number.start(1) < s.end or s.start <= match.start() < s.end for s in found.steps):
        return ""
    if _worded_step(match, found):
        return ""
    value = Fraction(number.group(1))
    holds = _comparison(match, number, found, compared)
    if holds is not None:
        return "" if holds else f"'{match.group(0).strip(', ')}' {_show(value)} does not hold"
    if _COMPARES.search(match.group(0)):
        return said  # "twice as many as Mia, which is 18": Mia's number was not read
    before = {s.result for s in found.steps if s.end <= match.start() and s.result is not None}
    return "" if _traceable(value, given, before) else said


# the number a relation states: right after it, or after at most three words ("which is about $9")
_LATER_NUMBER = re.compile(rf"(?:{CURRENCY})?\s?(\d+(?:\.\d+)?)")
_COMPARES = re.compile(r"\bas (?:many|much|long|old|far|tall)\b|\bthan\b")
_NEAR_NUMBER = re.compile(rf"(?:\s+[A-Za-z]+){{0,3}}?\s*(?:{CURRENCY})?\s?(\d+(?:\.\d+)?)")
_MORE = {"more", "greater", "larger", "longer", "heavier", "older", "over", "above"}


def _worded_step(match: re.Match[str], found: Verification) -> bool:
    """The relation says in words what the step just before it computes: "8 − 4 = 4 years younger
    than Hannah", "36 ÷ 12 = 3 times as many": its difference or factor is that step's result (one
    unit or noun between them, no link such as "which is" that would make it a comparison)."""
    said = _MORE_THAN.search(match.group(0))
    at = match.start() + (said.start() if said else 0)
    return any(
        s.result is not None and _UNIT_GAP.fullmatch(match.string, s.end, at) is not None
        for s in found.steps
        if s.end <= at
    )


_UNIT_GAP = re.compile(r"\s?[A-Za-z²³/]*,?\s?")  # "8 m long, which is": a unit or a word
# between a compared number and the next comparison of the same value: " m and ", ", but "
_JOINED = re.compile(r"(?:\s?[^\s\d,.;]{1,3})?,?\s+(?:and|but|or)\s+(?:a little |much |far )?")
_MORE_THAN = re.compile(r"(more|less|fewer|greater|smaller|larger|longer|shorter|older|younger) than")


def _comparison(
    match: re.Match[str], number: re.Match[str], found: Verification, compared: dict[int, Fraction]
) -> bool | None:
    """Whether "<left>, which is (not) more/less than N" holds; None when the relation is no
    comparison of a value the text states just before it. The left value is the result of the step
    that ends just before the link ("14 × 3 = $42, which is more than $40"), a number written there
    ("a 14th would make $42, which is more than $40"), or, for a sentence whose subject is a pronoun
    ("This is not more than £40"), the last result the chain computed before it; a comparison
    joined to a checked one by "and", "but" or "or" ("more than 3 m and more than 5 m") has its
    left value. "not" or "no" in the link denies the comparison."""
    said = _MORE_THAN.search(match.group(0))
    if said is None:
        return None
    text, at = match.string, match.start() + said.start()
    value = Fraction(number.group(1))
    joined = next((left for end, left in compared.items() if _JOINED.fullmatch(text, end, at)), None)
    if joined is not None:
        compared[number.end()] = joined
        return joined > value if said.group(1) in _MORE else joined < value
    link = _LINK.search(text, 0, at)
    if link is None:
        return None
    steps = [s for s in found.steps if s.result is not None and s.end <= link.start()]
    step = next((s for s in steps if _UNIT_GAP.fullmatch(text, s.end, link.start())), None)
    if step is not None and step.result is not None:
        left = step.result
    elif link["n"] is not None:
        if not re.search(r",|\b(?:which|that|is|are|was|were)\b", link.group(0)):
            return None  # "5 more than on Monday, which is 23": the 5 is the difference, not a value compared
        left = Fraction(link["n"])
    elif link["pronoun"] is not None and steps and steps[-1].result is not None:
        start = _sentence_start(text, at)
        if text[start : link.start()].strip() or steps[-1].end > start:
            return None  # the pronoun opens its own sentence and refers to the one before
        left = steps[-1].result
    else:
        return None
    compared[number.end()] = left
    holds = left > value if said.group(1) in _MORE else left < value
    return holds is not bool(link["not"] or link["denied"])


# What joins a value to the comparison made of it: "$42, which is", "36 m², which is not", "This is
# not", "$35, no", with "a little", "much", "far" before the comparative.
_LINK = re.compile(
    r"(?:(?<![\d.])(?P<n>\d+(?:\.\d+)?)(?:\s?[^\s\d,.;]{1,3})?,?\s*"
    r"(?:(?:which|that)\s+(?:is|was|are|were)(?P<not>\s+not|n't|\s+no)?\s+)?"
    r"|(?<![^\s,])(?:,\s*)?(?:(?:which|that)\s+(?:is|was|are|were)|(?P<pronoun>[Tt]his|[Tt]hat|[Ii]t)\s+"
    r"(?:is|was))(?P<denied>\s+not|n't|\s+no)?\s+)"
    r"(?:a little |much |far )?$"
)


def _sentence_start(text: str, at: int) -> int:
    marks = [text.rfind(mark, 0, at) for mark in (". ", "! ", "? ", "\n")]
    return max(marks) + 1 if max(marks) >= 0 else 0


def _sentence_end(text: str, at: int) -> int:
    ends = [i for i in (text.find(mark, at) for mark in (". ", "! ", "? ", "\n")) if i >= 0]
    return min(ends) + 1 if ends else len(text)


def _number_value(text: str) -> Fraction:
    return Fraction(text)


def _show(value: Fraction | None) -> str:
    if value is None:
        return "?"
    if value.denominator == 1:
        return str(value.numerator)
    decimal = float(value)
    return f"{decimal:g}" if abs(decimal * 1000 - round(decimal * 1000)) < 1e-9 else f"{value}"
