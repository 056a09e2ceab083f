"""Detectors that need a little knowledge of the world a word problem describes.

Shapes and what their measures need (a cylinder's volume needs a radius *and* a height), the
speed-distance-time triangle, which way a rate divides (km per litre is km ÷ litres), map scales,
quantities that do not add (the temperature of mixed water) or do not scale (a child's height with
age), what a body or a runner can do, and sums of unlike things. Each returns ``""`` when it finds
nothing and a sentence a writer can act on when it finds a flaw; none reads vocabulary a writer
could add without changing the mathematics.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import cast

from agents.rubric.facts import TIMES, ProblemFacts, as_fraction, show, times_factor
from agents.verify.expressions import NUMBER
from agents.verify.units import UNIT_PATTERN, Unit, unit

_NUM = NUMBER  # a whole decimal, never a truncated part of one


def _lengths(q: str) -> list[tuple[Fraction, Unit]]:
    """Every length the question states, in order (a value may repeat)."""
    out = []
    for number, name in re.findall(rf"{_NUM} ?({UNIT_PATTERN})(?![\w/²³])", q):
        measured = unit(name)
        if measured is not None and measured.dimension == "length":
            out.append((Fraction(number), measured))
    return out


# ---- what a shape's measure needs -------------------------------------------------------------

_ASKS_AREA = re.compile(
    r"\barea\b|\bsurface\b|\bcarpet|\btiles?\b|\bturf\b|\bcover\b|m²|cm²|square (?:metres|centimetres)"
)
_ASKS_PERIMETER = re.compile(
    r"\bperimeter\b|\ball the way round|\baround (?:it|the)\b|\bround the (?:edge|outside)|\bfenc|\bborder\b|"
    r"\bedging\b|\btrim\b|\bframe\b|\bskirting"
)
_ASKS_VOLUME = re.compile(
    r"\bvolume\b|\bhold\b|\bholds\b|\bcapacity\b|\bfill\b|\blit(?:re|er)s\b|m³|cm³|\bhow much water\b"
)
# (shape, the measure asked, how many lengths it needs, what they are)
_SHAPES: tuple[tuple[str, re.Pattern[str], int, str], ...] = (
    (r"\bcylind\w*|\bcone\b|\bcan of\b|\bpipe\b", _ASKS_VOLUME, 2, "a radius (or diameter) and a height"),
    (r"\bcubes?\b|\bcubic\b", _ASKS_VOLUME, 1, "a side"),
    (r"\bspheres?\b|\bball\b", _ASKS_VOLUME, 1, "a radius (or diameter)"),
    (
        r"\bbox\b|\bcuboid\b|\btank\b|\bpool\b|\baquarium\b|\bcontainer\b|\bcrate\b|\bbrick\b",
        _ASKS_VOLUME,
        3,
        "a length, a width and a depth",
    ),
    (r"\bsquare\b(?! (?:metres?|centimetres?|kilometres?|meters?|m|cm|km)\b)", _ASKS_AREA, 1, "a side"),
    (r"\bsquare\b(?! (?:metres?|centimetres?|kilometres?|meters?|m|cm|km)\b)", _ASKS_PERIMETER, 1, "a side"),
    (r"\brectang\w*|\boblong\b", _ASKS_AREA, 2, "a length and a width"),
    (r"\brectang\w*|\boblong\b", _ASKS_PERIMETER, 2, "a length and a width"),
    (
        r"\bcircle\b|\bcircular\b|\bround (?:pond|table|garden|rug|pool)",
        _ASKS_AREA,
        1,
        "a radius (or diameter)",
    ),
    (r"\btriangle\b|\btriangular\b", _ASKS_AREA, 2, "a base and a height"),
)


def missing_measure(f: ProblemFacts) -> str:
    """The question asks a shape's area, perimeter or volume but gives fewer lengths than that
    measure needs (a cylinder's volume from its radius alone), and does not give the measure."""
    q, target = f.q.lower(), f.target
    if not target:
        return ""
    lengths = _lengths(q)
    for shape, asks, needs, what in _SHAPES:
        if not re.search(shape, q) or not asks.search(target):
            continue
        if re.search(r"\bhow many\b", target) and not re.search(
            r"\bhow many (?:cubic|litres|liters|ml|m³|cm³)", target
        ):
            continue  # "how many boxes does she fill": a count of boxes, not a box's measure
        if _measure_given(q) or _RELATED.search(q):
            return ""
        if len(lengths) < needs:
            name = re.search(shape, q).group(0)  # type: ignore[union-attr]
            return (
                f"the {name}'s measure needs {what}, but the question gives "
                f"{len(lengths) or 'no'} length{'s' if len(lengths) != 1 else ''}"
            )
        return ""
    return _speed_triangle(f)


# A length given through another ("twice its width", "3 cm longer than"): no length is missing.
_RELATED = re.compile(
    r"\b(?:twice|double|half|triple|times (?:its|the|as)|as (?:long|wide|high|tall) as|"
    r"(?:longer|shorter|wider|narrower|taller|higher) than)\b"
)


def _measure_given(q: str) -> bool:
    """The question states the measure itself (an area of 48 m², holds 200 litres, a 120-litre
    tank): an amount of an area or a volume needs no lengths."""
    if re.search(
        rf"(?:area|perimeter|volume|holds?|capacity)\b[^.?!]{{0,20}}?\d+(?:\.\d+)? ?({UNIT_PATTERN}|m²|cm²)",
        q,
    ):
        return True
    return any(
        (u := unit(name)) is not None and u.dimension in ("volume", "area")
        for name in re.findall(rf"\d+(?:\.\d+)?[ -]?({UNIT_PATTERN})(?![\w/])", q)
    )


_ASKS_TIME = re.compile(
    r"\bhow long\b|\bwhat time\b|\bwhen (?:does|will|did)\b|\bhow many (?:hours|minutes|seconds)\b"
)
_ASKS_DISTANCE = re.compile(
    r"\bhow far\b|\bhow many (?:km|kilomet\w+|metres|meters|miles)\b|\bwhat distance\b"
)


def _speed_triangle(f: ProblemFacts) -> str:
    """Speed, distance and time: two of them give the third; one alone gives nothing."""
    q, target = f.q.lower(), f.target
    dims = {g.unit.dimension for g in f.givens if g.unit is not None}
    clocks = len(re.findall(r"\b\d{1,2}:\d{2}", q))
    has_time = "time" in dims or clocks >= 2
    if "speed" not in dims:
        return ""
    if _ASKS_TIME.search(target) and "length" not in dims:
        return "the question asks how long the journey takes but never says how far it is"
    per_time = re.search(r"\b(?:each|every|per|a|an|in (?:a|one)) (?:second|minute|hour)\b", target)
    if _ASKS_DISTANCE.search(target) and not has_time and not per_time:
        return "the question asks how far but never says for how long"
    return ""


# ---- which way an operation goes ---------------------------------------------------------------

_PER = re.compile(
    rf"how many ({UNIT_PATTERN})\b[^?]*?"
    rf"\b(?:on|per|for|with|in|from) (?:each|every|one|a|an|1) ({UNIT_PATTERN})\b"
)


def rate_direction(f: ProblemFacts) -> str:
    """'How many km on each litre' is km ÷ litres: the solution must not divide the other way."""
    asked = _PER.search(f.target)
    if not asked or f.final_answer is None:
        return ""
    top, bottom = unit(asked.group(1)), unit(asked.group(2))
    if top is None or bottom is None or top.dimension == bottom.dimension:
        return ""
    tops = [g.value for g in f.givens if g.unit is not None and g.unit.dimension == top.dimension]
    bottoms = [g.value for g in f.givens if g.unit is not None and g.unit.dimension == bottom.dimension]
    if len(tops) != 1 or len(bottoms) != 1 or not tops[0] or not bottoms[0]:
        return ""
    right, inverse = tops[0] / bottoms[0], bottoms[0] / tops[0]
    if right != inverse and f.final_answer == inverse:
        return (
            f"{asked.group(1)} per {asked.group(2)} is {show(tops[0])} ÷ {show(bottoms[0])}; "
            f"the solution divides the other way ({show(bottoms[0])} ÷ {show(tops[0])})"
        )
    return ""


_SCALE = re.compile(r"\bscale (?:of )?1 ?: ?(\d[\d ,]*\d|\d)\b")
_REAL = re.compile(r"\b(?:real|actual|in reality|on the ground|in real life|really)\b")


def map_scale(f: ProblemFacts) -> str:
    """On a 1 : n map, real distances are n times the map's: the solution must not divide by n
    for a real distance (nor multiply for a distance on the map)."""
    scale = _SCALE.search(f.q.lower())
    if not scale:
        return ""
    n = re.sub(r"[ ,]", "", scale.group(1))
    divides = re.search(rf"(?:÷|/) ?{n}\b", re.sub(r"(?<=\d)[ ,](?=\d{3}\b)", "", f.s))
    multiplies = re.search(rf"× ?{n}\b|\b{n} ?×", re.sub(r"(?<=\d)[ ,](?=\d{3}\b)", "", f.s))
    if _REAL.search(f.target) and divides and not multiplies:
        return f"on a 1 : {n} map a real distance is the map distance × {n}; the solution divides"
    if re.search(r"\bon the map\b", f.target) and multiplies and not divides:
        return f"on a 1 : {n} map a map distance is the real distance ÷ {n}; the solution multiplies"
    return ""


def perimeter_or_area(f: ProblemFacts) -> str:
    """The distance around a rectangle is 2 × (length + width), its area length × width: the
    answer must be the one asked, not the other."""
    q, target = f.q.lower(), f.target
    if not re.search(r"\brectang\w*|\boblong\b|\bsquare\b", q) or f.final_answer is None or _measure_given(q):
        return ""
    sides = [v for v, _ in _lengths(q)]
    if re.search(r"\bsquare\b", q) and len(sides) == 1:
        sides = sides * 2
    if len(sides) != 2:
        return ""
    a, b = sides
    area, around = a * b, 2 * (a + b)
    if area == around:
        return ""
    if _ASKS_PERIMETER.search(target) and not _ASKS_AREA.search(target) and f.final_answer in (area, a + b):
        return (
            f"the distance around is 2 × ({show(a)} + {show(b)}) = {show(around)}; "
            f"the solution gives {show(f.final_answer)}"
        )
    if _ASKS_AREA.search(target) and not _ASKS_PERIMETER.search(target) and f.final_answer in (around, a + b):
        return f"the area is {show(a)} × {show(b)} = {show(area)}; the solution gives the distance around"
    return ""


_PRODUCT = re.compile(
    rf"{_NUM} ?({UNIT_PATTERN})?(?![\w²³]) ?× ?{_NUM} ?({UNIT_PATTERN})?(?![\w²³])"
    rf"(?: ?× ?{_NUM} ?({UNIT_PATTERN})?(?![\w²³]))? ?= ?{_NUM} ?((?:{UNIT_PATTERN})[²³]?)?"
)


def length_products(f: ProblemFacts) -> str:
    """Lengths multiplied share one unit (2 m × 80 cm is not 160 of anything), and two lengths
    multiplied make an area (m²), not a length."""
    given: dict[Fraction, Unit] = {}
    measured: Unit | None
    for value, measured in _lengths(f.q.lower()):
        given.setdefault(value, measured)
    for match in _PRODUCT.finditer(f.s):
        groups = match.groups()
        factors = [(groups[i], groups[i + 1]) for i in (0, 2, 4) if groups[i]]
        units = []
        for number, name in factors:
            measured = unit(name) if name else given.get(Fraction(number))
            if measured is not None and measured.dimension == "length":
                units.append(measured)
        if len(units) >= 2 and len({u.scale for u in units}) > 1:
            names = " and ".join(sorted({u.name for u in units}))
            return f"{match.group(0).strip()} multiplies {names} without converting to one unit"
        stated = unit(groups[7]) if groups[7] else None
        if len(units) >= 2 and stated is not None and stated.dimension == "length":
            return (
                f"{match.group(0).strip()}: two lengths multiplied make an area ({stated.name}²), "
                f"not a length"
            )
    return ""


_MIN_SEC = re.compile(r"(\d+) minutes? (?:and )?(\d{1,2}) seconds?")


def minutes_as_decimals(f: ProblemFacts) -> str:
    """1 minute 20 seconds is 1⅓ minutes, not 1.20."""
    for minutes, seconds in _MIN_SEC.findall(f.q.lower()):
        m, s = int(minutes), int(seconds)
        if s == 0:
            continue
        written = f"{m}.{s:02d}"
        shorter = f"{m}.{s}" if s % 10 else f"{m}.{s // 10}"
        for text in {written, shorter}:
            if re.search(rf"(?<![\d.]){re.escape(text)}(?!\d)", f.s) and Fraction(text) != m + Fraction(
                s, 60
            ):
                return (
                    f"{m} min {s} s is {float(m + Fraction(s, 60)):.4g} minutes, not {text}: "
                    f"seconds are not hundredths of a minute"
                )
    return ""


# ---- quantities that neither add nor scale -----------------------------------------------------

_CHANGE = re.compile(
    r"\b(?:rise|rises|rose|risen|rising|increase|increases|increased|warm(?:s|ed|er)? (?:up )?by|"
    r"heats? up by|goes up|went up|"
    r"drops?|dropped|falls?|fell|cools?|cooled|colder|warmer|difference|change|by how many|climbs?|climbed)\b"
)


def temperatures_added(f: ProblemFacts) -> str:
    """Mixing two amounts of water does not add their temperatures: the mixture lies between them."""
    temps = {Fraction(x) for x in re.findall(r"(-?\d+(?:\.\d+)?) ?°[cf]", f.q.lower())}
    if len(temps) < 2 or _CHANGE.search(f.q.lower()):
        return ""
    for a, b in re.findall(r"(-?\d+(?:\.\d+)?) ?(?:°[CFcf])? ?\+ ?(-?\d+(?:\.\d+)?)", f.s):
        if Fraction(a) in temps and Fraction(b) in temps and a != b:
            return (
                f"temperatures do not add ({a} + {b}): water mixed from {a} °C and {b} °C is between the two"
            )
    return ""


_MIXED = re.compile(r"\b(?:mix|mixes|mixed|pours?|poured|adds?|added|combines?|combined|tips?|tipped)\b")
_HEATED = re.compile(
    r"\b(?:heat(?! loss)|heats|heated|warm|warms|warmed|boil|boils|cool|cools|cooled|kettle|stove|fire)\b"
)


def mixture_outside(f: ProblemFacts) -> str:
    """Water mixed from portions at given temperatures is no hotter than the hottest portion and no
    colder than the coldest: a mixture's temperature is never a sum or a multiple of theirs."""
    q = f.q.lower()
    temps = [Fraction(x) for x in re.findall(r"(-?\d+(?:\.\d+)?) ?°[cf]", q)]
    if not temps or not _MIXED.search(q) or _HEATED.search(q) or _CHANGE.search(q):
        return ""
    if not re.search(r"\btemperature\b|\bhow (?:hot|warm|cold)\b", f.target):
        return ""
    stated = re.findall(r"(-?\d+(?:\.\d+)?) ?°[cf]", f.s.lower())  # the last temperature it gives
    if stated and not min(temps) <= Fraction(stated[-1]) <= max(temps):
        return (
            f"a mixture of water at {', '.join(show(t) for t in sorted(set(temps)))} °C cannot be at "
            f"{stated[-1]} °C: it lies between its parts' temperatures"
        )
    return ""


_AS_OLD = re.compile(rf"\b{TIMES} as old as\b")


def age_ratio_kept(f: ProblemFacts) -> str:
    """'Twice as old now' does not last: both get older by the same years, so the difference stays,
    not the ratio ('when Theo is 10, Nina is 2 × 10' is false proportionality)."""
    relation = _AS_OLD.search(f.q.lower())
    later = re.search(r"\bwhen (?:[a-z]+ )?(?:is|turns|will be|becomes) (\d+)\b", f.target)
    if not relation or not later or f.final_answer is None:
        return ""
    factor, age = times_factor(relation.group(1)), Fraction(later.group(1))
    if f.final_answer in {factor * age, age / factor} and f.final_answer != age:
        return (
            f"the ages do not keep their ratio: both grow by the same years, so the difference between "
            f"them stays, and {show(f.final_answer)} scales {show(age)} by the ratio"
        )
    return ""


_AGE = re.compile(
    r"\b(?:at )?age (\d+)\b|\b(\d+)[ -]years?[ -]old\b|\baged (\d+)\b|\bat (\d+)(?=,| years|\b)(?! ?[:%])"
)
_BODY = re.compile(
    r"\btall\b|\bheight\b|\bweighs?\b|\bweight\b|\bheavy\b|\bshoe size\b|\bfeet long\b|\bcm\b|\bkg\b"
)


def growth_scaled_by_age(f: ProblemFacts) -> str:
    """A child's height or mass does not grow in proportion to age (at 15 not three times the
    height at 5)."""
    q = f.q.lower()
    if not _BODY.search(q) or f.final_answer is None:
        return ""
    ages = sorted({Fraction(next(g for g in groups if g)) for groups in _AGE.findall(q)})
    if len(ages) < 2 or not ages[0]:
        return ""
    ratio = ages[-1] / ages[0]
    measures = [g.value for g in f.givens if g.unit is not None and g.unit.dimension in ("length", "mass")]
    if any(f.final_answer in (m * ratio, m / ratio) for m in measures):
        return (
            f"growing is not proportional to age: being {show(ratio)} times as old "
            f"does not make one {show(ratio)} times as big"
        )
    return ""


# ---- what people and bodies can do -------------------------------------------------------------

# activity → fastest plausible speed in m/s
_PACE: tuple[tuple[str, Fraction, str], ...] = (
    (r"walk\w*|stroll\w*|hik\w*", Fraction(3), "walk"),
    (r"swim\w*|swam", Fraction(5, 2), "swim"),
    (r"run\w*|ran|jog\w*|sprint\w*|race[sd]?", Fraction(25, 2), "run"),
    (r"cycl\w*|rides? (?:a |her |his |their )?bike|bik\w*", Fraction(22), "cycle"),
)
_TRIP = re.compile(
    rf"\b({{acts}})\b[^.?!]{{0,30}}?{_NUM} ?(km|m|metres?|meters?|kilomet\w+|miles?)\b[^.?!]{{0,40}}?"
    rf"\b(?:in|takes?(?: (?:him|her|them|us|me))?|took(?: (?:him|her|them|us|me))?) "
    rf"{_NUM} ?(seconds?|secs?|s|minutes?|mins?|hours?|h)\b"
)
_SECONDS = {
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
}
_MILE = Fraction(1609344, 1000)


def impossible_pace(f: ProblemFacts) -> str:
    """Nobody runs 100 m in 3 seconds or walks 20 km in an hour."""
    q = f.q.lower()
    for acts, limit, verb in _PACE:
        pattern = _TRIP.pattern.replace("{acts}", acts)
        for match in re.finditer(pattern, q):
            distance, dist_unit, time, time_unit = (
                match.group(2),
                match.group(3),
                match.group(4),
                match.group(5),
            )
            metres = Fraction(distance) * (
                1000 if dist_unit.startswith(("km", "kilo")) else _MILE if dist_unit.startswith("mile") else 1
            )
            seconds = Fraction(time) * _SECONDS.get(time_unit, 3600)
            if seconds and metres / seconds > limit:
                return (
                    f"{distance} {dist_unit} in {time} {time_unit} is {float(metres / seconds):.3g} m/s: "
                    f"no one can {verb} that fast"
                )
    return ""


_BEATS = re.compile(
    r"\bheart\w*\b[^.?!]{0,20}?\bbeats? (\d+) times (?:a|per|each|every|in a|in one) (minute|second|hour)"
)
_BREATHS = re.compile(r"\bbreathes? (?:in )?(\d+) times (?:a|per|each|every|in a|in one) (minute|second)")


def impossible_body(f: ProblemFacts) -> str:
    """A heart beats about 40-200 times a minute; people breathe about 8-60 times a minute."""
    q = f.q.lower()
    per_minute: dict[str, int | Fraction] = {"second": 60, "minute": 1, "hour": Fraction(1, 60)}
    for pattern, low, high, what in (
        (_BEATS, 30, 220, "a heart beats"),
        (_BREATHS, 4, 70, "a person breathes"),
    ):
        for count, per in pattern.findall(q):
            rate = Fraction(count) * per_minute[per]
            if not low <= rate <= high:
                return f"{what} about {low}-{high} times a minute, not {float(rate):g}"
    return ""


# ---- data that contradict each other -------------------------------------------------------------


def angle_sums(q: str) -> str:
    """A triangle's angles add up to 180°, a quadrilateral's to 360°."""
    angles = [Fraction(x) for x in re.findall(r"(\d+(?:\.\d+)?) ?(?:°|degrees)", q)]
    for shape, total, count in (
        (r"\btriangle\b", 180, 3),
        (r"\bquadrilateral\b|\brectangle\b|\bparallelogram\b|\btrapezi\w+|\bkite\b", 360, 4),
    ):
        if re.search(shape, q) and len(angles) == count and sum(angles) != total:
            shown = " + ".join(show(a) for a in angles)
            return (
                f"the angles given add up to {shown} = {show(cast(Fraction, sum(angles)))}°, "
                f"but a {shape.strip(chr(92) + 'b').split('|')[0]}'s add up to {total}°"
            )
    return ""


_MEAN_TOTAL = re.compile(
    r"\b(\d+) [a-z]+ (?:have|has|with|had)\b[^.?!]{0,15}?\b(?:mean|average)\b"
    r"[^.?!]{0,20}?\b(?:of|is) (\d+(?:\.\d+)?)"
    r"[^.?!]*?\btotal\b[^.?!]{0,20}?\b(?:of|is) (\d+(?:\.\d+)?)"
)


def mean_and_total(q: str) -> str:
    """n things with mean m have a total of n × m."""
    for count, mean, total in _MEAN_TOTAL.findall(q):
        n, m, t = Fraction(count), Fraction(mean), Fraction(total)
        if n * m != t:
            return f"{show(n)} with a mean of {show(m)} total {show(n * m)}, not {show(t)}"
    return ""


# ---- unlike things added -----------------------------------------------------------------------

_COLLECTIVE = {
    "people", "person", "children", "child", "pupil", "student", "animal", "thing", "item", "piece",
    "fruit", "vehicle", "bird", "pet", "creature", "object", "toy", "book", "coin", "passenger",
    "guest", "visitor", "player", "member", "worker", "ticket", "seat", "card", "sweet", "flower",
}  # fmt: skip


# People are never a kind of thing: "3 children" added to balloons count what was not asked.
_PEOPLE = {
    "people", "person", "children", "child", "pupil", "student", "passenger", "guest", "visitor",
    "player", "member", "worker",
}  # fmt: skip


def _stranger(noun: str, target: str) -> bool:
    """A noun that cannot be a kind of the asked thing (a collective one may be, unless it is people
    and the asked thing is not)."""
    if noun not in _COLLECTIVE:
        return True
    return noun in _PEOPLE and target not in _PEOPLE and target not in _COLLECTIVE


_NOT_NOUNS = {
    "in", "on", "at", "to", "of", "for", "by", "and", "or", "but", "more", "less", "fewer", "each", "per",
    "times", "a", "an", "the", "is", "are", "was", "were", "with", "from", "into", "left", "all", "his",
    "her", "their", "its", "this", "that", "than", "as", "so", "then", "new", "old", "years", "year",
    "percent",
}  # fmt: skip


def _noun(word: str) -> str:
    word = word.lower()
    for suffix, repl in (
        ("ies", "y"),
        ("ves", "f"),
        ("xes", "x"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("sses", "ss"),
        ("es", "e"),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + repl
    return word


# Words that describe a counted noun without being it ("12 red pens", "8 small boxes").
_ADJECTIVES = (
    r"(?:red|blue|green|yellow|black|white|pink|purple|orange|brown|grey|gray|big|small|large|little|"
    r"long|short|tall|new|old|full|empty|fresh|ripe|wooden|plastic|glass|paper)"
)


# "How much did the stall take for apples?": takings for one kind of thing, the noun ending the question.
_ASKED_FOR = re.compile(r"\b(?:for|from|on) (?:the |its |her |his |their )?(?<!and )([a-z]+)\?\s*$")


def unlike_sum(f: ProblemFacts) -> str:
    """'How many ducks' is not answered by adding the frogs: a sum that mixes the asked things with
    other things (that are not a kind of them) counts what was not asked."""
    asked = re.search(r"how many ([a-z]+)", f.target) or _ASKED_FOR.search(f.target)
    if not asked:
        return ""
    target = _noun(asked.group(1))
    if target in _COLLECTIVE or unit(asked.group(1)) is not None:
        return ""
    nouns: dict[Fraction, set[str]] = {}
    for number, word in re.findall(
        rf"\b(\d+) (?:more |other |extra )?(?:{_ADJECTIVES} )?([a-z]+)", f.q.lower()
    ):
        if unit(word) is None and word not in _NOT_NOUNS:
            nouns.setdefault(as_fraction(number), set()).add(_noun(word))
    given = set(f.question_numbers)
    for terms, total in re.findall(r"(\d+(?: ?\+ ?\d+)+)(?: ?= ?(\d+))?", f.s):
        if total and Fraction(total) in given:
            continue  # "8 + 7 + 6 = 21, which matches the bag": the parts checked against the whole
        values = [Fraction(x) for x in re.findall(r"\d+", terms)]
        kinds = [nouns.get(v, set()) for v in values]
        if any(target in k for k in kinds):
            strangers = {
                n for k in kinds if target not in k for n in k if n != target and _stranger(n, target)
            }
            # "how many pears and plums", "for apples and pears?": the question asks about both
            joined = rf"\b{asked.group(1)} (?:and|or) (?:\w+ )?" if asked.re is not _ASKED_FOR else r"\b"
            strangers = {n for n in strangers if not re.search(rf"{joined}{n}", f.target)}
            if strangers and all(len(k) == 1 for k in kinds if k):
                return (
                    f"the question asks about the {asked.group(1)} only; "
                    f"the sum also counts {', '.join(sorted(strangers))}"
                )
    return ""
