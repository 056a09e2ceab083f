"""Relations a question states between its own numbers, checked against those numbers.

A question may state one fact twice (a rate, and the same rate said another way; a share, and the
percentage it is), or state a whole and its parts, or a distance, a time and the speed that joins
them. When the numbers it gives do not satisfy the relation it states, the data contradict each
other whatever the solution does. Each check reads one sentence (or a whole and a later count of
its rest) and says which numbers disagree.
"""

from __future__ import annotations

import re
from fractions import Fraction

from agents.rubric.facts import ProblemFacts, show
from agents.verify.expressions import NUMBER
from agents.verify.units import unit

_NUM = NUMBER  # a whole decimal, never a truncated part of one
_RESTATE = r"(?:,\s*)?(?:which is|that is|i\.e\.|or|the same as|equal to|making)\s+(?:about\s+|exactly\s+)?"
_TIME_UNIT = r"(seconds?|secs?|minutes?|mins?|hours?|hrs?|h|s|min|days?|weeks?)"


def _seconds(name: str) -> Fraction | None:
    found = unit(name)
    return found.scale if found is not None and found.dimension == "time" else None


# "30 pages per minute", "12 litres an hour"
_RATE_PER = re.compile(rf"{_NUM} (?:[a-z]+ ){{0,2}}?(?:per|a|an|each|every) {_TIME_UNIT}\b")
# "one page every 3 seconds", "a bus every 12 minutes"
_RATE_EVERY = re.compile(rf"{_NUM} (?:[a-z]+ ){{0,2}}?every {_NUM} {_TIME_UNIT}\b")


def _rates(sentence: str) -> list[tuple[Fraction, str]]:
    """Every rate per second the sentence states, with how it is written."""
    out: list[tuple[int, Fraction, str]] = []
    for match in _RATE_EVERY.finditer(sentence):
        per = _seconds(match.group(3))
        if per and Fraction(match.group(2)):  # "every 0 minutes" is no rate
            out.append(
                (match.start(), Fraction(match.group(1)) / (Fraction(match.group(2)) * per), match.group(0))
            )
    for match in _RATE_PER.finditer(sentence):
        per = _seconds(match.group(2))
        if per and not any(start <= match.start() < start + len(text) for start, _, text in out):
            out.append((match.start(), Fraction(match.group(1)) / per, match.group(0)))
    return [(rate, text) for _, rate, text in sorted(out)]


def restated_rate(sentences: list[str]) -> str:
    """'30 pages per minute, which is one page every 3 seconds': one rate said twice, differently."""
    for sentence in sentences:
        rates = _rates(sentence)
        if len(rates) == 2 and re.search(_RESTATE, sentence) and rates[0][0] != rates[1][0]:
            (_, said_a), (_, said_b) = rates
            between = sentence[sentence.find(said_a) + len(said_a) : sentence.find(said_b)]
            if re.fullmatch(rf"\s*{_RESTATE}", between):
                return f"“{said_a}” and “{said_b}” are said to be the same rate, but they are not"
    return ""


_SHARE = re.compile(
    rf"\b{_NUM} (?:[a-z]+ ){{0,3}}?(?:of|out of) (?:the |its |their |all |these )*{_NUM}\b[^.?!%]{{0,30}}?"
    rf"{_RESTATE}{_NUM} ?%"
)
_PERCENT_OF = re.compile(
    rf"\b{_NUM} ?% of (?:the |its |their |all |these )*{_NUM}\b[^.?!%]{{0,30}}?{_RESTATE}{_NUM}\b(?! ?%)"
)


_FRACTION_OF = re.compile(
    rf"\b(\d+)/(\d+) of (?:the |its |their |all |these )*{_NUM}\b[^.?!%]{{0,30}}?{_RESTATE}{_NUM}\b(?! ?%)"
)
_GROUPS_OF = re.compile(
    rf"\b{_NUM} ([a-z]+)[^.?!]{{0,20}}?{_RESTATE}{_NUM} "
    r"(?:rows|boxes|bags|packs|groups|lots|sets|piles|trays|teams|shelves|tables|stacks|layers|columns) "
    rf"of {_NUM}\b"
)


_SHARE_OF_THEM = re.compile(
    rf"\b{_NUM} of (?:them|those|these|the class|the group|the team)\b,? {_RESTATE}{_NUM} ?%"
)
_GROUP = re.compile(
    r"\b(\d+) (?:[a-z]+ )?(?:pupils|children|people|students|members|players|guests|workers)\b"
)


# "8 litres per 100 km", "12 litres for every 200 km": a ratio of two measures
_RATIO = re.compile(
    r"(\d+(?:\.\d+)?) ?([a-z]+)(?: of [a-z]+)? (?:per|for every|for each|every|each) "
    r"(\d+(?:\.\d+)?) ?([a-z]+)"
)


def restated_ratio(sentences: list[str]) -> str:
    """'8 litres per 100 km, which is 12 litres for every 200 km': 200 km take 16 litres."""
    for sentence in sentences:
        ratios = list(_RATIO.finditer(sentence))
        if len(ratios) != 2 or not re.search(_RESTATE, sentence):
            continue
        (a, x, b, y), (c, x2, d, y2) = (r.groups() for r in ratios)
        between = sentence[ratios[0].end() : ratios[1].start()]
        if x.rstrip("s") != x2.rstrip("s") or y.rstrip("s") != y2.rstrip("s"):
            continue
        if not re.fullmatch(rf"\s*{_RESTATE}", between) or not float(b) or not float(d):
            continue
        if Fraction(a) / Fraction(b) != Fraction(c) / Fraction(d):
            return f"{a} {x} per {b} {y} is not {c} {x2} per {d} {y2}: one ratio is said twice, differently"
    return ""


def restated_share(q: str) -> str:
    """'15 of the 60 pupils, which is 20 %': 15 of 60 is 25 %."""
    q = q.lower()
    for match in _SHARE_OF_THEM.finditer(q):
        counted = _GROUP.findall(q[: match.start()])
        if counted:
            part, whole, percent = Fraction(match.group(1)), Fraction(counted[-1]), Fraction(match.group(2))
            if whole and part <= whole and part / whole * 100 != percent:
                share = show(part / whole * 100)
                return f"{show(part)} of {show(whole)} is {share} %, not the {show(percent)} % stated"
    for match in _SHARE.finditer(q):
        part, whole, percent = (Fraction(x) for x in match.groups())
        if whole and part <= whole and part / whole * 100 != percent:
            share = show(part / whole * 100)
            return f"{show(part)} of {show(whole)} is {share} %, not the {show(percent)} % stated"
    for match in _FRACTION_OF.finditer(q):
        top, bottom, whole, part = (Fraction(x) for x in match.groups())
        if bottom and top / bottom * whole != part:
            share = show(top / bottom * whole)
            return f"{show(top)}/{show(bottom)} of {show(whole)} is {share}, not the {show(part)} stated"
    for match in _GROUPS_OF.finditer(q):
        total, _, groups, each = match.groups()
        if Fraction(groups) * Fraction(each) != Fraction(total):
            product = show(Fraction(groups) * Fraction(each))
            return f"{groups} groups of {each} make {product}, not the {total} stated"
    for match in _PERCENT_OF.finditer(q):
        percent, whole, part = (Fraction(x) for x in match.groups())
        if percent * whole / 100 != part:
            amount = show(percent * whole / 100)
            return f"{show(percent)} % of {show(whole)} is {amount}, not the {show(part)} stated"
    return ""


_SPEED = re.compile(r"(\d+(?:\.\d+)?) ?(km/h|mph|m/s)\b")
_DISTANCE = re.compile(r"(\d+(?:\.\d+)?) ?(km|kilometres?|kilometers?|miles?|m|metres?|meters?)\b(?![/²³])")
_DURATION = re.compile(
    r"(\d+(?:\.\d+)?) ?(hours?|h|hrs?)(?: (?:and )?(\d+) ?(?:minutes?|mins?))?\b|"
    r"(\d+(?:\.\d+)?) ?(minutes?|mins?|seconds?|s)\b"
)
# A part of the trip that is not moving, or a second leg: the three numbers are not one motion.
_LEGS = re.compile(
    r"\b(?:stops?|stopped|breaks?|rests?|rested|waits?|waited|pauses?|then|after|before|back|return\w*|"
    r"each way|first|second|late|early|faster|slower|more|less|instead|would|if|could)\b"
)
_MILE = Fraction(1609344, 1000)


def speed_distance_time(sentences: list[str]) -> str:
    """'She rides at a steady 15 km/h and covers 40 km in 2 hours': at 15 km/h, 2 hours is 30 km."""
    for sentence in sentences:
        if _LEGS.search(sentence):
            continue
        speeds, distances = _SPEED.findall(sentence), _DISTANCE.findall(sentence)
        durations = _DURATION.findall(sentence)
        if len(speeds) != 1 or len(distances) != 1 or len(durations) != 1:
            continue
        speed_value, speed_unit = speeds[0]
        metres_per_second = (
            Fraction(speed_value)
            * {
                "km/h": Fraction(1000, 3600),
                "mph": _MILE / 3600,
                "m/s": Fraction(1),
            }[speed_unit]
        )
        value, name = distances[0]
        metres = Fraction(value) * (
            1000 if name.startswith("k") else _MILE if name.startswith("mile") else Fraction(1)
        )
        hours, _, minutes, other, other_unit = durations[0]
        if hours:
            seconds = Fraction(hours) * 3600 + Fraction(minutes or 0) * 60
        else:
            seconds = Fraction(other) * (1 if other_unit.startswith("s") else 60)
        if not seconds or not metres_per_second:
            continue
        actual = metres / seconds
        if abs(actual - metres_per_second) > metres_per_second / 100:
            return (
                f"{value} {name} in {durations[0][0] or durations[0][3]} "
                f"{durations[0][1] or durations[0][4]} is not {speed_value} {speed_unit}: "
                "the distance, the time and the speed stated disagree"
            )
    return ""


_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\s?(?:([ap])\.?m\.?)?")
# A span said to be the whole time between the two clock times.
_SPAN = re.compile(
    r"\b(?:journey|trip|drive|ride|flight|walk|lesson|match|film|show|meeting|wait|class|game|session|"
    r"race|concert|lasting|lasts?|lasted|takes?|took)\b(?: \w+){0,3}? (?:of |for |is |was )?"
    r"(?:(\d+) ?(?:hours?|h)(?: (?:and )?(\d+) ?(?:minutes?|min))?|(\d+) ?(?:minutes?|min))\b"
)


def _minutes(hours: str, minutes: str, meridiem: str | None) -> int:
    h = int(hours) % 12 + (12 if meridiem == "p" else 0) if meridiem else int(hours)
    return h * 60 + int(minutes)


def clock_window(sentences: list[str]) -> str:
    """'She left at 8:15 and arrived at 9:05, a journey of 40 minutes': that is 50 minutes."""
    for sentence in sentences:
        clocks = _CLOCK.findall(sentence)
        spans = _SPAN.findall(sentence)
        if len(clocks) != 2 or len(spans) != 1 or re.search(r"\b(?:break|lunch|stop|each|every)\b", sentence):
            continue
        hours, minutes, alone = spans[0]
        stated = int(hours) * 60 + int(minutes or 0) if hours else int(alone)
        start, end = (_minutes(*c) for c in clocks)
        window = (end - start) % 1440 if clocks[0][2] or clocks[1][2] else (end - start) % 720
        if window != stated:
            return (
                f"from {clocks[0][0]}:{clocks[0][1]} to {clocks[1][0]}:{clocks[1][1]} is "
                f"{window // 60} h {window % 60} min, not the {stated} minutes stated"
            )
    return ""


_REST = re.compile(
    r"\b(?:the rest|the others|all the others|the remaining ones|the remainder) (?:are|were) ([a-z]+)"
)


def rest_counted(sentences: list[str]) -> str:
    """'20 fruit: 8 apples and 7 pears, and the rest are plums. There are 6 plums.' The rest is 5."""
    for at, sentence in enumerate(sentences):
        rest = _REST.search(sentence)
        if not rest:
            continue
        before = sentence[: rest.start()]
        counts = [(Fraction(n), w) for n, w in re.findall(r"\b(\d+) (?:[a-z]+ )??([a-z]+)", before)]
        if len(counts) < 2 or any(unit(w) is not None for _, w in counts):
            return ""
        whole, parts = counts[0][0], [n for n, _ in counts[1:]]
        left = whole - sum(parts)
        noun = rest.group(1).rstrip("s")
        after = " ".join(sentences[at + 1 :])
        stated = re.search(rf"\b(\d+) {noun}s?\b", after)
        if stated and left >= 0 and Fraction(stated.group(1)) != left:
            return (
                f"{show(whole)} less {' and '.join(show(p) for p in parts)} leaves {show(left)} "
                f"{rest.group(1)}, not the {stated.group(1)} stated"
            )
    return ""


_SIDE = r"(?:of |is |= )?(\d+(?:\.\d+)?) ?(?:mm|cm|m|km)\b"
_LONG = re.compile(rf"\blength {_SIDE}|(\d+(?:\.\d+)?) ?(?:mm|cm|m|km) long\b")
_WIDE = re.compile(rf"\bwidth {_SIDE}|(\d+(?:\.\d+)?) ?(?:mm|cm|m|km) wide\b")
_AREA = re.compile(r"\barea (?:of |is |= )?(\d+(?:\.\d+)?) ?(?:mm|cm|m|km)²")
_PERIMETER = re.compile(r"\bperimeter (?:of |is |= )?(\d+(?:\.\d+)?) ?(?:mm|cm|m|km)\b")


def rectangle_measures(sentences: list[str]) -> str:
    """'A rectangle has a length of 10 cm, a width of 4 cm and an area of 36 cm²': 10 × 4 is 40."""
    for sentence in sentences:
        if not re.search(r"\brectang", sentence):
            continue
        found = [pattern.findall(sentence) for pattern in (_LONG, _WIDE, _AREA, _PERIMETER)]
        if len(found[0]) != 1 or len(found[1]) != 1:
            continue
        length = Fraction(next(v for v in found[0][0] if v))
        width = Fraction(next(v for v in found[1][0] if v))
        if len(found[2]) == 1 and Fraction(found[2][0]) != length * width:
            area = show(length * width)
            return f"sides of {show(length)} and {show(width)} give an area of {area}, not {found[2][0]}"
        if len(found[3]) == 1 and Fraction(found[3][0]) != 2 * (length + width):
            perimeter = show(2 * (length + width))
            sides = f"sides of {show(length)} and {show(width)}"
            return f"{sides} give a perimeter of {perimeter}, not {found[3][0]}"
    return ""


def contradiction(f: ProblemFacts) -> str:
    """The first relation of the question its own numbers break."""
    said = [sentence.lower() for sentence in f.sentences]  # the question's, split once
    return (
        restated_rate(said)
        or restated_ratio(said)
        or restated_share(f.q)
        or speed_distance_time(said)
        or clock_window(said)
        or rest_counted(said)
        or rectangle_measures(said)
    )
