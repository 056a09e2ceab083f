"""What the world allows, for the quantities a solution computes as well as those a question gives.

A flawed problem often gives possible data and computes an impossible result: −10 pupils in class,
a dad 5.2 m tall, a family car at 900 km/h, water at 170 °C in an open pan, 26 hours of one day.
The checks on the question alone (``rules.plausible``) cannot see those; these read the
solution's stated results, and the relations between given quantities that no world allows (a part
larger than its whole, 120 % of a group, a triangle whose two sides are shorter than the third).
"""

from __future__ import annotations

import re
from fractions import Fraction

from agents.rubric.facts import ProblemFacts, show

_SENTENCES = re.compile(r"(?<=[.?!])\s+")

# ---- a negative amount of something --------------------------------------------------------------

# A minus that is a sign, not a subtraction: after "=", a colon, a bracket, or a verb that states a
# value ("is -4", "have -2 hours left"), or where a sentence starts.
_SIGNED = re.compile(
    r"(?:^|[=:(]|\b(?:is|are|was|were|be|has|have|had|left|remain|remains|gives|makes|leaves|get|gets))"
    r"\s*-\s?(\d+(?:\.\d+)?)",
    re.M,
)
# Where a quantity below zero exists: temperatures, heights against sea level, money owed or lost,
# positions and scores on a number line, floors below ground, changes and differences.
_NEGATIVE_EXISTS = re.compile(
    r"°|\btemperature|\bdegrees\b|\bbelow (?:zero|sea level|freezing|ground)|\bsea level|\bdepth\b|"
    r"\bdeep\b|\boverdrawn|\bdebt|\bowes?\b|\bowed\b|\bloss\b|\blose[sr]?\b|\bnegative|\bintegers?\b|"
    r"\bnumber line|\bbasement|\bunderground|\bgolf|\bpar\b|\bscore|\bbalance|\bprofit|\bchange in\b|"
    r"\bco-?ordinates?|\baxis\b|\belevation|\baltitude|\bminus\b|\btrench|\bdive|\bsubmarine",
    re.I,
)


def negative_amount(f: ProblemFacts) -> str:
    """A count, length, duration or amount that comes out below zero: more was taken than there was."""
    if _NEGATIVE_EXISTS.search(f.q):
        return ""
    match = _SIGNED.search(f.s)
    if match is None:
        return ""
    return (
        f"the solution arrives at -{match.group(1)}: what the question asks about cannot be less than "
        "nothing, so the data ask for more than there is"
    )


# A sign written on a given number: a minus right before its digits, where a number starts (after a
# space, a bracket or at the start), and a counted thing after it ("-23 pieces"); or a sum of money
# signed after its currency ("$ -16", not LaTeX's "$-5r^2$").
_SIGNED_COUNT = re.compile(r"(?:(?<=[\s(])|^)[-−](\d+(?:\.\d+)?) ([a-z]{3,})\b")
_SIGNED_MONEY = re.compile(r"[$£€]\s?[-−]\s?(\d+(?:\.\d+)?)(?![\w^]|\.\d)")
_NOT_A_THING = {"and", "or", "to", "the", "than", "times", "plus", "minus", "from", "then", "percent"}


def negative_given(f: ProblemFacts) -> str:
    """A count of things or a sum of money the question gives below zero (-23 pieces of candy, a
    pack at $ -26), where nothing in the story lets a quantity be negative."""
    text = f.question.lower()
    if _NEGATIVE_EXISTS.search(text):
        return ""
    if money := _SIGNED_MONEY.search(text):
        return f"a sum of money of -{money.group(1)}: no price paid or amount held is below zero"
    for number, thing in _SIGNED_COUNT.findall(text):
        if thing not in _NOT_A_THING:
            return f"-{number} {thing}: a story cannot have fewer than no {thing}"
    return ""


# ---- a part larger than its whole ------------------------------------------------------------------

# A group is a whole count of something ("30 pupils"), never a price's pence ("€1.40 each").
_GROUP = re.compile(r"(?<![\d.,€$£])\b(\d+) ([a-z]+)\b")
_NOT_A_NOUN = {"each", "per", "times", "more", "less", "fewer", "of", "and", "or", "to", "in", "on", "at"}
_PART_OF_THEM = re.compile(r"\b(\d+(?:\.\d+)?) ?(%)? of (?:them|those|these)\b")
_PART_OF_NOUN = re.compile(r"\b(\d+(?:\.\d+)?) ?(%)? of (?:the|all the|all|its|her|his|their) ([a-z]+)\b")
# "120 % of the price" is a price with a mark-up: only a share of a group of people or things is
# bounded by the group. Growth and comparison take any size.
_GROWTH = re.compile(
    r"\b(?:increase|increased|rise|rose|risen|grew|grow|grown|more than|larger than|bigger than|"
    r"higher than|compared|mark-?up|as much as|times)\b"
)
_NOT_A_GROUP = {
    "price", "cost", "value", "salary", "wage", "pay", "bill", "budget", "target", "goal", "amount",
    "total", "sum", "original", "previous", "last", "speed", "weight", "mass", "length", "height",
    "area", "volume", "distance", "time", "money", "savings", "income", "sales", "rent", "tax",
}  # fmt: skip


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def part_beyond_whole(f: ProblemFacts) -> str:
    """No share of a group is larger than the group: 40 of a class of 30 absent, 120 % of the
    customers paying by card."""
    q = f.q.lower()
    for sentence in _SENTENCES.split(q):
        if _GROWTH.search(sentence):
            continue
        for number, percent in _PART_OF_THEM.findall(sentence):
            if percent and Fraction(number) > 100:
                return f"{number} % of a group is more than the whole group"
        for number, percent, noun in _PART_OF_NOUN.findall(sentence):
            if percent and Fraction(number) > 100 and _stem(noun) not in _NOT_A_GROUP:
                return f"{number} % of the {noun} is more than all of them"
    return _count_beyond_group(q) or share_beyond_whole(f)


_SHARE_OF_GROUP = re.compile(
    r"\bwhat (?:percentage|percent|fraction|proportion|share) of (?:the |his |her |their |all the |its )?"
    r"(class|pupils|students|children|people|members|team|group|club|school|audience|players|guests|"
    r"workers|staff|voters|families|households|village|town)\b"
)


def share_beyond_whole(f: ProblemFacts) -> str:
    """'What percentage of the class came', answered 128 %: more of the class came than it has."""
    asked = _SHARE_OF_GROUP.search(f.target)
    if not asked or _GROWTH.search(f.target) or f.final_answer is None:
        return ""
    percent = "%" in f.final_sentence or "percent" in f.final_sentence.lower()
    if (percent and f.final_answer > 100) or (not percent and "fraction" in f.target and f.final_answer > 1):
        shown = f"{show(f.final_answer)} %" if percent else show(f.final_answer)
        return f"no share of the {asked.group(1)} is more than all of it; the answer is {shown}"
    return ""


def _count_beyond_group(q: str) -> str:
    """'There are 30 pupils … 40 of them were absent.'"""
    sentences = _SENTENCES.split(q)
    for index, sentence in enumerate(sentences):
        part = _PART_OF_THEM.search(sentence)
        if part is None or part.group(2):
            continue
        # "them" is the nearest group: earlier in the same sentence, else the sentence before.
        before = sentence[: part.start()]
        groups = _groups(before) or (_groups(sentences[index - 1]) if index else [])
        if len(groups) == 1 and Fraction(part.group(1)) > groups[0]:
            return f"{part.group(1)} of them is more than the {groups[0]} there are"
    return ""


def _groups(text: str) -> list[int]:
    return [int(n) for n, noun in _GROUP.findall(text) if noun.isalpha() and noun not in _NOT_A_NOUN]


# ---- a triangle that cannot close ------------------------------------------------------------------

_TRIANGLE_SIDES = re.compile(
    r"\btriangle\b[^.?!]*?\bsides? (?:of |measuring |that are |with lengths? )?"
    r"(\d+(?:\.\d+)?) ?(?:cm|mm|m|km|in|ft)?,? (\d+(?:\.\d+)?) ?(?:cm|mm|m|km|in|ft)?,? (?:and )?"
    r"(\d+(?:\.\d+)?) ?(?:cm|mm|m|km|in|ft)?"
)


def triangle_inequality(q: str) -> str:
    """Any two sides of a triangle are together longer than the third."""
    for match in _TRIANGLE_SIDES.finditer(q):
        a, b, c = sorted(Fraction(x) for x in match.groups())
        if a + b <= c:
            reach = f"sides of {show(a)} and {show(b)} reach only {show(a + b)}"
            return f"{reach}: no triangle has a side of {show(c)}"
    return ""


# ---- more hours than a day has ---------------------------------------------------------------------

_ONE_DAY = re.compile(
    r"\b(?:on|in|during|for) (?:a|one|each|every|the same|that|this|her|his|their)? ?"
    r"(?:school |working |week|typical |normal |single )?day\b|\bof the day\b|\ba day\b|\beach day\b"
)
_MANY_DAYS = re.compile(r"\bdays\b|\bweeks?\b|\bmonths?\b|\byears?\b|\bweekend\b")
_HOURS = re.compile(r"\b(\d+(?:\.\d+)?) hours?\b")


def hours_beyond_a_day(q: str) -> str:
    """What one day holds: the hours of one day's activities add up to at most 24."""
    if not _ONE_DAY.search(q) or _MANY_DAYS.search(q):
        return ""
    hours = [Fraction(h) for h in _HOURS.findall(q)]
    total = sum(hours, Fraction(0))
    if len(hours) >= 2 and total > 24:
        return f"the hours of one day add up to {show(total)}, more than the 24 a day has"
    return ""


# ---- rooms, classes and vehicles hold so many -----------------------------------------------------

_CAPACITY: tuple[tuple[re.Pattern[str], int, str], ...] = (
    (
        re.compile(
            r"\b(?:class|classroom|form|tutor group|lesson)\b[^.?!]{0,12}?\bof (\d+) "
            r"(?:pupils|students|children|kids)\b|"
            r"\b(\d+) (?:pupils|students|children|kids) in (?:her|his|their|the|a|one|each|my|our) "
            r"(?:class|classroom)\b"
        ),
        60,
        "pupils in one class",
    ),
    (
        re.compile(
            r"\b(?:car|taxi)\b[^.?!]{0,30}?\b(?:carries|holds|seats|takes|fits) (\d+) (?:people|passengers)\b"
        ),
        9,
        "people in one car",
    ),
)


def beyond_capacity(q: str) -> str:
    """A class of 1,500 pupils in one classroom, a car carrying 40 people."""
    for pattern, limit, what in _CAPACITY:
        for groups in pattern.findall(q):
            values = [g for g in (groups if isinstance(groups, tuple) else (groups,)) if g]
            if values and int(values[0]) > limit:
                return f"{values[0]} is more {what} than the world allows (at most about {limit})"
    return ""


# ---- what the solution computes, measured against what it is about ---------------------------------

_ABOUT_WATER = re.compile(r"\bwater\b")
_NOT_OPEN_WATER = re.compile(r"\b(?:steam|pressure|oil|oven|engine|lava|metal|sun)\b")
_DEGREES = re.compile(r"(-?\d+(?:\.\d+)?) ?(?:°c|° c|degrees celsius|degrees)\b")


def boiling_water(f: ProblemFacts) -> str:
    """Water in an open pan boils at 100 °C and gets no hotter (nor does it stay liquid below 0 °C
    as the question's 'water')."""
    text = f.q.lower()
    if not _ABOUT_WATER.search(text) or _NOT_OPEN_WATER.search(text):
        return ""
    for value in _DEGREES.findall(f.final_sentence):
        if Fraction(value) > 100:
            return f"water at {value} °C: in an open pan water boils at 100 °C and gets no hotter"
    return ""
