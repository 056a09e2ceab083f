"""Dimensional analysis of the solution's computation chain.

Every number the solution computes with gets the unit the text gives it: the unit written beside
it, else the unit of the question's quantity of that value (when the question gives that value
once), else the unit its own earlier computation produced. Units are carried through each step
as exponents of length, mass, time and money with an exact scale (km is 1000 m, a minute 60 s),
so a step is checked for what it *means*, not for its words:

* a sum or a difference joins quantities of one kind (minutes are not added to pounds);
* a stated result has the dimension its operands give (litres × litres per minute is no time,
  metres per second² × seconds × kilograms is no speed);
* a stated result is the operands' value in the stated unit (45 km ÷ 30 minutes is 1.5 km per
  *minute*, so "= 1.5 km/h" forgets a conversion; 1 m² is 10 000 cm², not 100).

A step with a number whose unit cannot be told is left alone, and so is a result that differs
from its operands only by one "per time" (a wage per hour written as a bare £8): only a
difference no misread rate explains is reported.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from fractions import Fraction

from agents.rubric.facts import ProblemFacts, show
from agents.verify.expressions import variables
from agents.verify.units import UNIT_PATTERN, unit

Dims = tuple[int, int, int, int]  # exponents of length, mass, time, money
NONE: Dims = (0, 0, 0, 0)
_BASE = {
    "length": ((1, 0, 0, 0), Fraction(1)),
    "mass": ((0, 1, 0, 0), Fraction(1)),
    "time": ((0, 0, 1, 0), Fraction(1)),
    "money": ((0, 0, 0, 1), Fraction(1)),
    "area": ((2, 0, 0, 0), Fraction(1)),
    "volume": ((3, 0, 0, 0), Fraction(1, 1000)),  # in litres: a litre is a thousandth of a cubic metre
    "speed": ((1, 0, -1, 0), Fraction(1)),
}
_NAMES = {(1, 0, 0, 0): "a length", (0, 1, 0, 0): "a mass", (0, 0, 1, 0): "a time", (0, 0, 0, 1): "money"}


@dataclass(frozen=True)
class Measure:
    """A value in base units (m, g, s, dollar) and its dimension."""

    value: Fraction
    dims: Dims


def _add(a: Dims, b: Dims, sign: int = 1) -> Dims:
    return (a[0] + sign * b[0], a[1] + sign * b[1], a[2] + sign * b[2], a[3] + sign * b[3])


def _simple(name: str) -> tuple[Dims, Fraction] | None:
    """A single unit's dimension and scale (None for temperatures, angles, or no unit)."""
    found = unit(name)
    if found is None or found.dimension not in _BASE:
        return None
    dims, factor = _BASE[found.dimension]
    return dims, found.scale * factor


_UNIT = rf"(?:{UNIT_PATTERN})(?![\w])"
_SQUARE = r"square (?:metres?|meters?|centimetres?|centimeters?|kilometres?|kilometers?)"
_PER = r"(?:\s?/\s?|\s(?:per|an?|each|every|for each|for every|for one|for 1)\s)"
# A quantity as written: currency, number, then a unit or a rate ("£8 an hour", "0.6 g/cm³").
_TERM = re.compile(
    rf"([$£€])?\s?(\d+(?:\.\d+)?)"
    rf"(?:\s?(m/s²|{_UNIT}|{_SQUARE})(²|³)?)?"
    rf"(?:{_PER}({_SQUARE}|(?:{UNIT_PATTERN})(?:³|²)?(?![\w/])|(?!\d)[a-z]+))?"
)


def _square(name: str) -> str:
    return re.sub(r"^square (\w+?)s?$", r"\1", name)


def _unit_of(
    currency: str | None, name: str | None, power: str | None, per: str | None
) -> tuple[Dims, Fraction] | None:
    """The dimension and scale a written quantity has; None where it cannot be told."""
    dims, scale = NONE, Fraction(1)
    if currency:
        dims, scale = (0, 0, 0, 1), Fraction(1)
        if name:
            return None  # "£3 kg": a price per kilogram badly written
    elif name == "m/s²":
        dims, scale = (1, 0, -2, 0), Fraction(1)
    elif name:
        base = _simple(_square(name))
        if base is None:
            return None
        dims, scale = base
        times = 2 if name.startswith("square") or power == "²" else 3 if power == "³" else 1
        dims, scale = (dims[0] * times, dims[1] * times, dims[2] * times, dims[3] * times), scale**times
    if per:
        power_per = 3 if per.endswith("³") else 2 if per.endswith("²") or per.startswith("square") else 1
        base = _simple(_square(per.rstrip("²³")))
        if base is not None:
            per_dims, per_scale = base
            per_dims = tuple(d * power_per for d in per_dims)  # type: ignore[assignment]
            dims, scale = _add(dims, per_dims, -1), scale / per_scale**power_per
        elif unit(per) is not None:
            return None  # per degree, per cent: nothing to carry
        # per a counted thing ("£2 each", "5p for each text"): the unit of the numerator
    return dims, scale


@dataclass(frozen=True)
class _Written:
    value: Fraction
    unit: tuple[Dims, Fraction] | None  # None: the text writes no unit
    start: int
    end: int


def _written(text: str) -> list[_Written]:
    out = []
    for match in _TERM.finditer(text):
        currency, number, name, power, per = match.groups()
        if re.match(r"\d{1,2}:\d{2}", text[match.start(2) : match.start(2) + 5]):
            continue
        if match.start(2) and text[match.start(2) - 1] in ".:/":
            continue
        measured = _unit_of(currency, name, power, per) if (currency or name or per) else None
        end = match.end() if measured is not None else match.end(2)
        out.append(_Written(Fraction(number), measured, match.start(2), end))
    return out


def question_units(f: ProblemFacts) -> dict[Fraction, tuple[Dims, Fraction]]:
    """The unit of each value the question states once (or always with one unit)."""
    seen: dict[Fraction, set[tuple[Dims, Fraction]]] = {}
    text = _compounds(re.sub(r"\b\d{1,2}:\d{2}\b", " ", f.q))
    for written in _written(text):
        if written.unit is None:
            after = text[written.end : written.end + 20]
            if re.match(r"\s?%", after):
                continue
            # a bare number names a count ("120 mugs"): dimensionless
            noun = re.match(r"\s([a-z]+)(?![\w/²³°])", after)
            kind = (NONE, Fraction(1)) if noun and unit(noun.group(1)) is None else None
            if kind is None:
                seen.setdefault(written.value, set()).add((NONE, Fraction(-1)))  # unknown
                continue
            seen.setdefault(written.value, set()).add(kind)
        else:
            per_many = _PER_MANY.match(text, written.end)
            per = _simple(per_many.group(2)) if per_many else None
            # "5.6 litres of fuel per 100 km": litres per km, ÷ 100 ("per 0 km" is no rate)
            if per_many and per is not None and Fraction(per_many.group(1)):
                (dims, scale), (per_dims, per_scale) = written.unit, per
                rate = (_add(dims, per_dims, -1), scale / (per_scale * Fraction(per_many.group(1))))
                seen.setdefault(written.value, set()).add(rate)
                continue
            seen.setdefault(written.value, set()).add(_per_before(text, written))
    return {v: next(iter(units)) for v, units in seen.items() if len(units) == 1 and next(iter(units))[1] > 0}


# "5.6 litres of fuel per 100 km": a rate over a number of units
_PER_MANY = re.compile(rf"(?: of [a-z]+)? (?:per|for every|every) (\d+(?:\.\d+)?) ?({UNIT_PATTERN})\b")
# "Each kg earns 80p", "every litre costs £1.20": the rate's "per" written before its number
_PER_BEFORE = re.compile(rf"\b(?:each|every|per|one|a) ({UNIT_PATTERN})\b(?:\s[a-z]+){{1,2}}\s*$", re.I)


def _per_before(text: str, written: _Written) -> tuple[Dims, Fraction]:
    assert written.unit is not None
    found = _PER_BEFORE.search(text[max(0, written.start - 30) : written.start].rstrip("$£€ "))
    per = _simple(found.group(1)) if found else None
    if per is None:
        return written.unit
    (dims, scale), (per_dims, per_scale) = written.unit, per
    return _add(dims, per_dims, -1), scale / per_scale


# ---- the solution's steps ---------------------------------------------------------------------

_OP = re.compile(r"\s*([+\-×÷*])\s*|\s+(/)\s+|(?<=\d)(/)(?=\s?\d)|\s+(of)\s+")
_CLAUSE = re.compile(r"\.(?!\d)|[;:](?!\d)|\n|,\s+(?=[a-zA-Z])|\bso\b|\bthen\b|\band\b")
# "2 h 15 min", "1 hour and 45 minutes", "1 m 20 cm": one quantity, written in its smaller unit.
_COMPOUND = re.compile(rf"(\d+(?:\.\d+)?)\s?({_UNIT})(?:,?\s(?:and\s)?)(\d+(?:\.\d+)?)\s?({_UNIT})")
# "2.5 hours is 150 minutes": a conversion said with a linking word.
_LINKED = re.compile(rf"(\d(?:\.\d+)?\s?(?:{_UNIT})[²³]?)\s+(?:is|are|equals|makes|gives)\s+(?=\d)")
_DRAWN = re.compile(r"\b(?:map|scale|plan|model|drawing|diagram|represents?)\b")


def _compounds(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        big, small = unit(match.group(2)), unit(match.group(4))
        if big is None or small is None or big.dimension != small.dimension or big.scale <= small.scale:
            return match.group(0)
        total = Fraction(match.group(1)) * big.scale / small.scale + Fraction(match.group(3))
        return f"{show(total)} {match.group(4)}"

    return _COMPOUND.sub(one, text)


@dataclass(frozen=True)
class Step:
    """One claim ``a op b … = result`` with what its operands can mean."""

    claim: str
    readings: list[tuple[Measure | None, str]]  # each reading's value with units, and any clash
    bare: Fraction | None  # the arithmetic on the numbers alone
    stated: _Written  # the result as written
    operands: int
    explicit: bool  # every operand's unit is written beside it
    left_unit: tuple[Dims, Fraction] | None  # a lone operand's written unit
    remainder: bool = False  # "50 ÷ 12 = 4 remainder 2": the result is a whole part
    # "2500 ÷ 100 = 25 m²" after "= 2500 cm²": a quantity scaled by a bare power of ten into another
    # unit of its kind (its value, its unit, the factor)
    rescaled: tuple[Fraction, tuple[Dims, Fraction], Fraction] | None = None

    @property
    def computed(self) -> Measure | None:
        """The first reading's value (the one that trusts every unit looked up)."""
        return self.readings[0][0] if self.readings else None


# Bare numbers a solution often uses as counts or factors even where the question gives the same
# value with a unit ("100 × 15 s" for 100 lots of 100 m; "30 ÷ 2" for twice as many walkers).
_FACTORS = {Fraction(n) for n in (10, 24, 52, 60, 100, 365, 1000, 3600)}


def _ambiguous(term: _Written, looked_up: bool) -> bool:
    return looked_up and (term.value in _FACTORS or (term.value.denominator == 1 and term.value <= 12))


Units = dict[Fraction, tuple[Dims, Fraction]]


def _multiplier(ops: list[str], index: int) -> bool:
    """A factor of a product, or a divisor: where a bare count (twice, 20 lots of) may stand."""
    before = ops[index - 1] if index > 0 else ""
    after = ops[index] if index < len(ops) else ""
    return before in ("×", "*", "of", "÷", "/") or after in ("×", "*", "of")


def _kinds(
    term: _Written, lookup: Units, rates: Units, factor: bool, said: Units
) -> list[tuple[Dims, Fraction] | None]:
    """What one operand can be: its written unit (a bare "£8" of "£8 an hour" is the rate), else
    the unit looked up for its value, or a plain count when that value is often one and the
    solution does not itself say it with that unit ("the film lasts 2 hours, so $36 × 2")."""
    kind = term.unit
    rate = rates.get(term.value)
    if kind is not None and rate is not None and rate[0] != kind[0] and _numerator(rate[0], kind[0]):
        return [rate]
    if kind is not None:
        return [kind]
    found = lookup.get(term.value)
    own = said.get(term.value)  # the unit the solution writes this value with elsewhere
    if found is None:
        return [None]
    if found[0] == NONE and own is not None and own[0] != NONE:
        return [found, own]  # "$2.20 for 2 kg, which is $2.20 ÷ 2": the solution says what 2 is
    if factor and _ambiguous(term, True) and found[0] != NONE and own != found:
        return [found, (NONE, Fraction(1))]
    return [found]


def _evaluate(
    terms: list[_Written], ops: list[str], lookup: Units, rates: Units, said: Units
) -> list[tuple[Measure | None, str]]:
    """Every reading of the operands, each evaluated with × and ÷ before + and −."""
    # only a factor of a product or quotient may be a bare count: a term added or subtracted is
    # a quantity of the sum's kind
    factor = [_multiplier(ops, i) for i in range(len(terms))]
    options = [_kinds(term, lookup, rates, factor[i], said) for i, term in enumerate(terms)]
    readings: list[list[tuple[Dims, Fraction] | None]] = [[]]
    for choice in options:
        readings = [[*r, c] for r in readings for c in choice][:16]
    return [_reading(terms, ops, kinds) for kinds in readings]


def _reading(
    terms: list[_Written], ops: list[str], kinds: list[tuple[Dims, Fraction] | None]
) -> tuple[Measure | None, str]:
    measures = [
        None if k is None else Measure(t.value * k[1], k[0]) for t, k in zip(terms, kinds, strict=True)
    ]
    groups: list[Measure | None] = []
    signs: list[str] = []
    current = measures[0]
    for op, measure in zip(ops, measures[1:], strict=True):
        if op in "+-":
            groups.append(current)
            signs.append(op)
            current = measure
        elif current is None or measure is None:
            current = None
        elif op in ("×", "*", "of"):
            current = Measure(current.value * measure.value, _add(current.dims, measure.dims))
        elif measure.value == 0:
            return None, ""
        else:
            current = Measure(current.value / measure.value, _add(current.dims, measure.dims, -1))
    groups.append(current)
    total = groups[0]
    for sign, measure in zip(signs, groups[1:], strict=True):
        if total is None or measure is None:
            total = None
            continue
        if total.dims != measure.dims:
            if total.dims != NONE and measure.dims != NONE:
                said = (
                    f"adds {_name(total.dims)} to {_name(measure.dims)}"
                    if sign == "+"
                    else f"takes {_name(measure.dims)} from {_name(total.dims)}"
                )
                return None, said
            total = None
            continue
        total = Measure(
            total.value + measure.value if sign == "+" else total.value - measure.value, total.dims
        )
    return total, ""


def _bare(terms: list[_Written], ops: list[str]) -> Fraction | None:
    """The arithmetic on the numbers alone, × and ÷ first."""
    groups: list[Fraction] = []
    signs: list[str] = []
    current = terms[0].value
    for op, term in zip(ops, terms[1:], strict=True):
        if op in "+-":
            groups.append(current)
            signs.append(op)
            current = term.value
        elif op in ("×", "*", "of"):
            current *= term.value
        elif term.value == 0:
            return None
        else:
            current /= term.value
    groups.append(current)
    total = groups[0]
    for sign, value in zip(signs, groups[1:], strict=True):
        total = total + value if sign == "+" else total - value
    return total


def _numerator(rate: Dims, written: Dims) -> bool:
    """The written unit is the rate's without its "per …" ("£" of "£ per m²")."""
    gap = _add(rate, written, -1)
    return all(g <= 0 for g in gap) and any(w > 0 for w in written)


def _name(dims: Dims) -> str:
    return _NAMES.get(dims, "a quantity of another kind")


_EXPR = re.compile(
    rf"(?:[$£€]?\s?\d+(?:\.\d+)?(?:\s?(?:{_UNIT}|%)[²³]?)?(?:\s?/\s?(?:{_UNIT})[²³]?)?)"
    rf"(?:(?:\s*[+\-×÷*/]\s*|\s+of\s+)[$£€]?\s?\d+(?:\.\d+)?(?:\s?(?:{_UNIT}|%)[²³]?)?(?:\s?/\s?(?:{_UNIT})[²³]?)?)*"
)


def steps(f: ProblemFacts) -> list[Step]:
    """Every ``a op b = c`` the solution writes (no brackets), with units carried along."""
    lookup = question_units(f)
    rates = {v: u for v, u in lookup.items() if u[0] != NONE and sum(abs(x) for x in u[0]) > 1}
    known: Units = {}
    out: list[Step] = []
    text = re.sub(r"\b\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?", " CLOCK ", f.s)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = _LINKED.sub(r"\1 = ", _compounds(text))
    # the unit the solution itself gives a value, where it never also counts with it ("100 times")
    written_units: dict[Fraction, set[tuple[Dims, Fraction] | None]] = {}
    for w in _written(text):
        counts = w.unit is None and re.match(r"\s?[a-z]", text[w.end : w.end + 2])
        if w.unit is not None or counts:
            written_units.setdefault(w.value, set()).add(w.unit)
    said: Units = {}
    for value, kinds in written_units.items():
        only = next(iter(kinds)) if len(kinds) == 1 else None
        if only is not None:
            said[value] = only
    names = variables(text)
    letters = re.compile(rf"\d\s?(?:{'|'.join(sorted(names))})\b") if names else None
    for clause in _CLAUSE.split(text):
        if not clause or "=" not in clause or "(" in clause or (letters and letters.search(clause)):
            continue
        sides = clause.split("=")
        lefts: list[str] = []
        rights: list[str] = []
        for index, side in enumerate(sides):
            found = [] if "CLOCK" in side else list(_EXPR.finditer(side))  # a time of day is no quantity
            lefts.append(found[-1].group(0) if index == 0 and found else found[0].group(0) if found else "")
            single = found and not _OP.search(found[0].group(0).strip())
            rights.append(side[found[0].start() :].strip() if single else "")  # a result is one quantity
        for index in range(len(sides) - 1):
            step = _step(lefts[index], rights[index + 1], {**lookup, **known}, rates, said)
            if step is None:
                continue
            if step.stated.unit is None:  # "45 ÷ 30 = 1.5, so the speed is 1.5 km/h": its unit, said next
                step = _unit_said_next(step, text[text.find(clause) + len(clause) :])
            out.append(step)
            if step.stated.unit is not None:
                known[step.stated.value] = step.stated.unit
            elif step.computed is not None and step.stated.value and not step.remainder:
                scale = step.computed.value / step.stated.value if step.computed.dims != NONE else Fraction(1)
                known[step.stated.value] = (step.computed.dims, scale)
    return out


def _unit_said_next(step: Step, rest: str) -> Step:
    """The step with the unit its result is given in the next clause that restates it."""
    for clause in _CLAUSE.split(rest)[:3]:
        for written in _written(clause or ""):
            if written.value == step.stated.value and written.unit is not None:
                return dataclasses.replace(step, stated=dataclasses.replace(step.stated, unit=written.unit))
    return step


def _step(left: str, right: str, lookup: Units, rates: Units, said: Units) -> Step | None:
    if not left or not right:
        return None
    pieces = [p for p in _OP.split(left) if p is not None]
    terms_text, ops = pieces[0::2], pieces[1::2]
    terms: list[_Written] = []
    for piece in terms_text:
        written = _written(piece.strip())
        if len(written) != 1:
            return None
        terms.append(written[0])
    for i, piece in enumerate(terms_text):
        if piece.strip().endswith("%"):
            terms[i] = _Written(terms[i].value / 100, (NONE, Fraction(1)), 0, 0)
    stated = _written(right)
    if not stated or stated[0].start > 2 or re.match(r"[^%]*\d\s?%", right):
        return None
    explicit = all(t.unit is not None for t in terms)
    rescaled = _rescaled(terms, ops, lookup)
    return Step(
        f"{left} = {right.strip()}",
        _evaluate(terms, ops, lookup, rates, said),
        _bare(terms, ops),
        stated[0],
        len(terms),
        explicit,
        terms[0].unit if len(terms) == 1 else None,
        bool(re.match(r"[^a-z]*\d(?:\.\d+)?\s*(?:remainder|r\s?\d)", right)),
        rescaled,
    )


def _power_of_ten(value: Fraction) -> bool:
    if value.denominator != 1 or value < 10:
        return False
    n = value.numerator
    while n % 10 == 0:
        n //= 10
    return n == 1


def _rescaled(
    terms: list[_Written], ops: list[str], lookup: Units
) -> tuple[Fraction, tuple[Dims, Fraction], Fraction] | None:
    """A measured quantity multiplied or divided by a bare power of ten that the question does not
    give ("2500 ÷ 100" where 2500 is in cm²): a writer's unit conversion, whatever its factor."""
    if len(terms) != 2 or ops[0] not in ("×", "*", "÷", "/"):
        return None
    quantity, factor = terms
    measured = quantity.unit or lookup.get(quantity.value)
    if (
        measured is None
        or measured[0] == NONE
        or factor.unit is not None
        or factor.value in lookup
        or not _power_of_ten(factor.value)
    ):
        return None
    return quantity.value, measured, factor.value if ops[0] in ("×", "*") else 1 / factor.value


def _close(a: Fraction, b: Fraction, written: str) -> bool:
    decimals = re.search(r"\.(\d+)", written)
    slack = Fraction(1, 2 * 10 ** len(decimals.group(1))) if decimals else Fraction(0)
    return abs(a - b) <= slack + abs(b) * Fraction(1, 10**9)


def unit_chain(f: ProblemFacts) -> str:
    """The first step whose units do not fit under any reading of its numbers, said as a writer
    can act on it."""
    drawn = bool(_DRAWN.search(f.q.lower()))
    timed = bool(_PER_TIME.search(f.q.lower()) or _PER_TIME.search(f.s.lower()))
    for step in steps(f):
        found = unit_chain_step(step, drawn, timed)
        if found:
            return found
    return ""


# A rate per unit of time, somewhere in the text: only then may a result that is one time short
# of its operands be a wage or a fare per hour written as a bare amount.
_PER_TIME = re.compile(
    r"\b(?:per|an?|each|every|for each|for every)\s(?:single\s|working\s|school\s)?"
    r"(?:hour|minute|min|second|day|night|evening|morning|week|weekend|fortnight|month|year|"
    r"term|session|lesson|shift|visit|lap)s?\b|"
    r"/\s?(?:h|hr|hour|min|minute|s|sec|day|week|month|year)\b|"
    r"\b(?:hourly|daily|nightly|weekly|monthly|yearly|annual(?:ly)?|mph|kph)\b"
)


def unit_chain_step(step: Step, drawn: bool = False, timed: bool = True) -> str:
    """Why one step's units do not fit ("" if some reading of its numbers fits). ``timed``: the text
    states a rate per time, so a result one time short may be such a rate read as an amount."""
    if step.operands < 2:
        return _conversion(step, drawn)
    if step.rescaled is not None and not drawn:
        return _factor_conversion(step)
    verdicts = [_misfit(step, measure, clash, timed) for measure, clash in step.readings]
    return "" if not verdicts or not all(verdicts) else verdicts[0]


def _base_gap(gap: Dims) -> bool:
    """A gap of one length or one mass (litres per km read as km, kg × m/s read as m/s): no count
    of things with an area, nor a rate per time read as an amount, explains it."""
    if abs(gap[2]) >= 2 and not gap[0] and not gap[1] and not gap[3]:
        return True  # km/h ÷ h: no single rate misread as an amount explains a time squared
    return abs(gap[0]) + abs(gap[1]) == 1 and not gap[2] and not gap[3]


def _misfit(step: Step, computed: Measure | None, clash: str, timed: bool = True) -> str:
    """Why this reading of the step does not fit ("" if it does, or if it cannot be told)."""
    if clash:
        return f"{step.claim} {clash}: quantities of different kinds do not add"
    if computed is not None and step.stated.unit is None and computed.dims == NONE and step.operands > 1:
        # "1.5 ÷ 300 = 0.005 cups": litres over millilitres is 5, a number of cups
        bare_fits = step.bare is not None and _close(step.bare, step.stated.value, step.claim)
        if bare_fits and not _close(computed.value, step.stated.value, step.claim):
            return (
                f"{step.claim}: in one unit the result is {show(computed.value)}, not the bare "
                "number: a unit was not converted"
            )
        return ""
    if computed is None or step.stated.unit is None:
        return ""
    stated_dims, stated_scale = step.stated.unit
    if computed.dims != stated_dims:
        gap = _add(computed.dims, stated_dims, -1)
        single = sum(1 for g in gap if g) == 1
        untimed = not timed and gap[2] == 1 and not gap[0] and not gap[1] and not gap[3]
        if computed.dims == NONE or stated_dims == NONE or (single and not _base_gap(gap) and not untimed):
            return ""  # a rate read as a plain amount, a count of things with a size: not sure
        return (
            f"{step.claim}: the operands make {_name(computed.dims)}, not {_name(stated_dims)}; "
            "the units of this step do not fit (a wrong operation, or a quantity that does not belong)"
        )
    in_stated = computed.value / stated_scale
    if (
        step.bare is not None
        and _close(step.bare, step.stated.value, step.claim)
        and not _close(in_stated, step.stated.value, step.claim)
    ):
        return (
            f"{step.claim}: with its units the result is {show(in_stated)} in the stated unit, "
            "not the bare number: a unit was not converted"
        )
    return ""


def _conversion(step: Step, drawn: bool) -> str:
    """'1 m² = 100 cm²', '2.5 hours = 2 hours 50 minutes': one quantity said in another unit."""
    computed = step.computed
    if step.stated.unit is None:
        return ""
    stated_dims, stated_scale = step.stated.unit
    if (
        drawn
        or computed is None
        or computed.dims != stated_dims
        or not step.explicit
        or step.left_unit == step.stated.unit
    ):
        return ""
    in_stated = computed.value / stated_scale
    if _close(in_stated, step.stated.value, step.claim.split("=")[-1]):
        return ""
    return f"{step.claim}: it is {show(in_stated)} in that unit — the conversion is wrong"


def _factor_conversion(step: Step) -> str:
    """'2500 ÷ 100 = 25 m²' for 2500 cm²: the bare arithmetic is right, but a square centimetre is a
    ten-thousandth of a square metre, so the factor is not the one between the two units. A
    factor that is the units' own (2500 ÷ 10 000 = 0.25 m²) is a right conversion."""
    assert step.rescaled is not None
    value, (dims, scale), factor = step.rescaled
    if step.stated.unit is None:
        return ""
    stated_dims, stated_scale = step.stated.unit
    if (
        dims != stated_dims
        or scale == stated_scale
        or step.bare is None
        or not _close(step.bare, step.stated.value, step.claim)
    ):
        return ""
    in_stated = value * scale / stated_scale
    if _close(in_stated, step.stated.value, step.claim.split("=")[-1]):
        return ""
    needed = stated_scale / scale
    right = f"× {show(1 / needed)}" if needed < 1 else f"÷ {show(needed)}"
    used = f"× {show(factor)}" if factor > 1 else f"÷ {show(1 / factor)}"
    source, target = _named(dims, scale), _named(dims, stated_scale)
    if source and target:
        said = f"{show(value)} {source} is {show(in_stated)} {target}"
    else:
        said = f"{show(value)} in its own unit is {show(in_stated)} in the stated unit"
    return (
        f"{step.claim.strip()}: {said} — the conversion is wrong (the factor between the two units "
        f"is {right}, not {used})"
    )


_NAMED = ("mm", "cm", "m", "km", "mg", "g", "kg", "t", "ml", "l", "s", "min", "h", "day", "ha")


def _named(dims: Dims, scale: Fraction) -> str:
    """The usual name of a unit (cm², km, kg), if it is one of the common ones."""
    for name in _NAMED:
        base = _simple(name)
        if base is None:
            continue
        for power, mark in ((1, ""), (2, "²"), (3, "³")):
            if base[0] == NONE:
                break
            if tuple(d * power for d in base[0]) == dims and base[1] ** power == scale:
                return name + mark
    return ""
