"""What a question states twice must agree, and the answer must be the one the question asks for.

Word problems often state a quantity and, beside it, the parts or the rule that make it: "340
loaves: 185 on Saturday and 175 on Sunday", "three £2 coins and four 50p coins, which make £9",
"5 spiders with 42 legs" after "a spider has 8 legs", "4 years older than Tom (9), and she is 12",
a list of heights with its stated mean. Where the two disagree the problem has no consistent answer.
And an answer can be a correct computation of the wrong thing: how much is left, when the question
asks how much was used; the total bill, when it asks what each friend pays; her age now, when it asks
her age in 10 years. Each detector returns ``""`` when it finds nothing (or does not apply), and
otherwise a sentence a writer can act on.
"""

from __future__ import annotations

import re
from fractions import Fraction

from agents.rubric.facts import ProblemFacts, show
from agents.verify.expressions import NUMBER

_NUM = NUMBER  # a whole decimal, never a truncated part of one
_SENTENCES = re.compile(r"(?<=[.?!])\s+")
_COUNT_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}

# ---- a total and its parts, in one sentence --------------------------------------------------------

_TOTAL_COLON = re.compile(rf"\b{_NUM} ([a-z]+)(?: [a-z]+)?: ([^.?!]+)")
_PART = re.compile(rf"\b{_NUM} (?:on|in|at|from|for|by|to|of) ")


def total_and_parts(q: str) -> str:
    """'340 loaves: 185 on Saturday and 175 on Sunday': the parts after the colon make the total."""
    for total, _noun, rest in _TOTAL_COLON.findall(q):
        parts = [Fraction(p) for p in _PART.findall(rest + " ")]
        if len(parts) >= 2 and sum(parts, Fraction(0)) != Fraction(total):
            listed = " + ".join(show(p) for p in parts)
            return f"{listed} = {show(sum(parts, Fraction(0)))}, not the {total} stated"
    return ""


# ---- coins and notes that make a stated sum -----------------------------------------------------------

_COINS = re.compile(
    r"\b(\d+|one|two|three|four|five|six|seven|eight) ([£$€]\d+(?:\.\d+)?|\d+p) (?:coins?|notes?)"
)
_MAKE = re.compile(
    r"\b(?:which|that|they) (?:make|makes|come to|comes to|add up to|adds up to|total|totals) "
    r"([£$€]\d+(?:\.\d+)?|\d+p)"
)


def _money(text: str) -> Fraction:
    return Fraction(text[:-1]) / 100 if text.endswith("p") else Fraction(text[1:])


def coins_make(q: str) -> str:
    """'Three £2 coins and four 50p coins, which make £9': they make £8."""
    for sentence in _SENTENCES.split(q):
        stated = _MAKE.search(sentence)
        coins = _COINS.findall(sentence[: stated.start()] if stated else "")
        if not stated or len(coins) < 2:
            continue
        total = sum((Fraction(_COUNT_WORDS.get(n, 0) or int(n)) * _money(v) for n, v in coins), Fraction(0))
        if total != _money(stated.group(1)):
            sign = stated.group(1)[0] if stated.group(1)[0] in "£$€" else ""
            return f"the coins make {sign}{show(total)}, not the {stated.group(1)} stated"
    return ""


# ---- each × how many = the stated total ------------------------------------------------------------------

_EACH_HAS = re.compile(rf"\ba ([a-z]+) has {_NUM} ([a-z]+)\b")


def each_times_count(q: str) -> str:
    """'A spider has 8 legs. … 5 spiders with 42 legs altogether': 5 spiders have 40 legs."""
    for thing, per, part in _EACH_HAS.findall(q):
        counted = re.search(rf"\b{_NUM} {thing}s? (?:with|have|had|has) {_NUM} {part}\b", q)
        if counted and Fraction(counted.group(1)) * Fraction(per) != Fraction(counted.group(2)):
            n, p = Fraction(counted.group(1)), Fraction(per)
            return f"{show(n)} {thing}s with {show(p)} {part} each have {show(n * p)}, not {counted.group(2)}"
    return ""


# ---- an age stated as a relation and as a number -----------------------------------------------------------

_AGE = re.compile(r"\b([A-Z][a-z]+) is (\d+)(?: years old)?\b")
_OLDER = re.compile(
    r"\b(?:[Hh]is [a-z]+|[Hh]er [a-z]+|[Tt]heir [a-z]+|[Ss]he|[Hh]e|[A-Z][a-z]+(?:'s [a-z]+)?) "
    r"is (\d+) years? (older|younger) "
    r"than ([A-Z][a-z]+)[^.?!]*?,? and (?:she|he) is (\d+)\b"
)


def age_relation(question: str) -> str:
    """'Tom is 9. His sister is 4 years older than Tom, and she is 12': 4 older than 9 is 13."""
    ages = {name: Fraction(age) for name, age in _AGE.findall(question)}
    for gap, direction, other, stated in _OLDER.findall(question):
        if other not in ages:
            continue
        expected = ages[other] + Fraction(gap) * (1 if direction == "older" else -1)
        if expected != Fraction(stated):
            relation = f"{gap} years {direction} than {other} ({show(ages[other])})"
            return f"{relation} is {show(expected)}, not {stated}"
    return ""


# ---- a list of values and its stated mean ---------------------------------------------------------

_LISTED = re.compile(r":\s*((?:\d+(?:\.\d+)? ?[a-z]*,\s*)+\d+(?:\.\d+)? ?[a-z]*,? and \d+(?:\.\d+)?)")
# "scored 7, 9, 6, 10 and 8": a list without a colon before it
_LISTED_PLAIN = re.compile(r"\b((?:\d+(?:\.\d+)?,\s*){2,}\d+(?:\.\d+)?,? and \d+(?:\.\d+)?)\b")
_MEAN = re.compile(rf"\b(?:mean|average)(?: [a-z]+)? (?:is|was|of) {_NUM}\b")


def listed_mean(q: str) -> str:
    """'Heights 132, 140, 128, 135 and 145 cm; their mean is 138 cm': the mean is 136."""
    listed, mean = _LISTED.search(q), _MEAN.search(q)
    if not listed or not mean or mean.start() < listed.start():
        return ""
    values = [Fraction(v) for v in re.findall(r"\d+(?:\.\d+)?", listed.group(1))]
    actual = sum(values, Fraction(0)) / len(values)
    if actual != Fraction(mean.group(1)):
        return (
            f"the {len(values)} values listed have a mean of {show(actual)}, not the {mean.group(1)} stated"
        )
    return ""


# "add up to 42" said in words, not "add up to 62 + 58 + …" (a computation the verifier checks)
_SUM_SAID = re.compile(
    r"\b(?:add up to|adds up to|added up (?:is|make|makes)|sum (?:is|of them is)|"
    rf"total (?:is|of them is)|make a total of) {_NUM}\b(?! ?[-+×÷*/=])"
)


def listed_values(f: ProblemFacts) -> list[Fraction]:
    """The values a question lists ("scored 7, 9, 6, 10 and 8"), if it lists three or more."""
    listed = _LISTED.search(f.q.lower()) or _LISTED_PLAIN.search(f.q.lower())
    values = [Fraction(v) for v in re.findall(r"\d+(?:\.\d+)?", listed.group(1))] if listed else []
    return values if len(values) >= 3 else []


def listed_sum(f: ProblemFacts) -> str:
    """'Five pupils scored 7, 9, 6, 10 and 8 … The five scores add up to forty-two': they make 40."""
    values, said = listed_values(f), _SUM_SAID.search(f.s.lower())
    if not values or not said:
        return ""
    total = sum(values, Fraction(0))
    if total != Fraction(said.group(1)):
        return f"the {len(values)} values listed add up to {show(total)}, not {said.group(1)}"
    return ""


def stated_twice(question: str) -> str:
    """The first quantity stated twice, differently."""
    q = question.lower()
    return (
        total_and_parts(q) or coins_make(q) or each_times_count(q) or listed_mean(q) or age_relation(question)
    )


# ---- answers to a neighbouring question -----------------------------------------------------------

# "How old will she be in 10 years' time": an offset from now, never a rate's "in 1 week".
_IN_TIME = re.compile(r"\b(?:will|would)\b[^?]*\bin (\d+) (?:years|months|weeks|days)(?:'s?)?(?: time)?\b")
_LEFT = re.compile(r"\b(?:left|remain|remains|remaining|still has|still have)\b")
_ALTOGETHER = re.compile(r"\b(?:altogether|in total|in all|together|give away|gave away)\b")
_SHARED = re.compile(r"\b(?:share|shared|split|divide|divided)\b[^.?!]*\bequally\b|\bequally\b")
_EACH_PAYS = re.compile(r"\bhow much (?:does|do|will|did) each\b|\beach (?:friend|person|one|pupil|child)\b")


def answer_drifts(f: ProblemFacts) -> str:
    """The answer is a neighbour of what was asked: a time offset never applied, what is left when
    a total is asked, the whole bill when each share is asked."""
    offset = _IN_TIME.search(f.target)
    if offset and Fraction(offset.group(1)) > 1 and Fraction(offset.group(1)) not in f.solution_numbers:
        return f"the question asks about a time {offset.group(1)} on from now; the solution never uses it"
    final = f.final_sentence.lower()
    if (
        _LEFT.search(final)
        and not _LEFT.search(f.target)
        and _ALTOGETHER.search(f.target)
        and "how many" in f.target
    ):
        return "the question asks how many in all; the answer says how many are left"
    if _LEFT.search(f.target) and re.search(r"\bused\b", final) and "-" not in f.operators:
        return "the question asks how much is left; the answer is how much was used"
    if _EACH_PAYS.search(f.target) and _SHARED.search(f.q.lower()) and "÷" not in f.operators:
        return "the question asks for each one's share; the solution never divides the total"
    return ""
