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


# "6 rows of 8 chocolates, 50 chocolates in all": groups of a size, and the total said with them
_GROUPS_TOTAL = re.compile(
    rf"(?<![\d.]){_NUM} ([a-z]+) of {_NUM} ([a-z]+?)s?\b,? "
    rf"(?:(?:which is|that is|making|so|a total of|in all) {_NUM} \4s?\b|"
    rf"{_NUM} \4s?\b (?:in all|altogether|in total))"
)


def each_times_count(q: str) -> str:
    """'A spider has 8 legs. … 5 spiders with 42 legs altogether': 5 spiders have 40 legs."""
    for groups, group, size, thing, total_before, total_after in _GROUPS_TOTAL.findall(q):
        total = total_before or total_after
        if Fraction(groups) * Fraction(size) != Fraction(total):
            return (
                f"{groups} {group} of {size} {thing}s make {show(Fraction(groups) * Fraction(size))}, "
                f"not {total}"
            )
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


_GAP = re.compile(
    r"\b([A-Z][a-z]+) is (\d+) years? (older|younger) than (?:(?:his|her|their) [a-z]+,? )?([A-Z][a-z]+)\b"
)


def _age_at(sentence: str, name: str) -> tuple[str, Fraction] | None:
    said = re.search(rf"\b{name} (is|was|will be|would be|turns|turned|will turn) (\d+)\b", sentence)
    if not said:
        return None
    tense = {"is": "now", "turns": "now", "was": "then", "turned": "then"}.get(said.group(1), "later")
    return tense, Fraction(said.group(2))


def age_gap_kept(question: str) -> str:
    """'Nadia is 4 years older than Omar. Next year Nadia will be 15 and Omar will be 12': two ages
    said for one moment differ by the gap."""
    for older, gap, direction, younger in _GAP.findall(question):
        if direction == "younger":
            older, younger = younger, older
        for sentence in re.split(r"(?<=[.?!])\s+", question):
            a, b = _age_at(sentence, older), _age_at(sentence, younger)
            if a and b and a[0] == b[0] and a[1] - b[1] != Fraction(gap):
                return (
                    f"{older} is {gap} years older than {younger}, yet the ages given for one moment "
                    f"({show(a[1])} and {show(b[1])}) differ by {show(a[1] - b[1])}"
                )
    return ""


def age_relation(question: str) -> str:
    """'Tom is 9. His sister is 4 years older than Tom, and she is 12': 4 older than 9 is 13."""
    if found := age_gap_kept(question):
        return found
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


# "scored 7, 9 and 8 points in his first three games, an average of 9": three values and their mean
# said in one sentence
_LISTED_THREE = re.compile(r"\b((?:\d+(?:\.\d+)?,\s*)+\d+(?:\.\d+)?,? and \d+(?:\.\d+)?)\b")
_MEAN_OF_THEM = re.compile(rf"\b(?:mean|average) (?:is|was|of) {_NUM}\b")


def listed_mean(q: str) -> str:
    """'Heights 132, 140, 128, 135 and 145 cm; their mean is 138 cm': the mean is 136."""
    listed, mean = _LISTED.search(q), _MEAN.search(q)
    if not listed:
        for sentence in re.split(r"(?<=[.?!;])\s+", q):
            three, said = _LISTED_THREE.search(sentence), _MEAN_OF_THEM.search(sentence)
            if three and said and said.start() > three.end():
                listed, mean = three, said
                break
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


_HAS_TOTAL = re.compile(rf"\b(?:has|have|had|owns?|keeps?|kept) (?:a total of |exactly )?{_NUM} ([a-z]+s)\b")
_CHANGES = re.compile(
    r"\b(?:sold|sells?|bought|buys?|gave|gives?|lost|loses?|died|dies|born|new|more|fewer|left|now|then|"
    r"later|after|before|last|next|adds?|added|arrived?|joined|moved|another|extra|still)\b"
)


def whole_said_twice(q: str) -> str:
    """'Ella's farm has 60 animals … the hens are a third of her 54 animals': one whole, two sizes."""
    if _CHANGES.search(q):
        return ""
    for total, noun in _HAS_TOTAL.findall(q):
        for again in re.findall(
            rf"\b(?:her|his|their|its|all|all the|all of the|the whole|the) {_NUM} {noun}\b", q
        ):
            if Fraction(again) != Fraction(total):
                return f"the {noun} are said to number {total} and also {again}"
    return ""


def stated_twice(question: str) -> str:
    """The first quantity stated twice, differently."""
    q = question.lower()
    if found := whole_said_twice(q):
        return found
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


_NOT_ASKED = re.compile(r"\b(?:not|didn't|did not|don't|do not|never|does not|doesn't)\b")
_SHARE_ASKED = re.compile(r"\bwhat (?:percentage|percent|fraction|proportion|share)\b")
_PAID_WITH = re.compile(
    r"\b(?:pays?|paid|paying|hands? over|handed over|gives? the (?:cashier|shopkeeper|seller))"
    rf"(?: for (?:it|them|everything))? with (?:a|an|one)? ?[$£€]?{_NUM}\b|"
    rf"\b(?:pays?|paid) (?:with )?[$£€]{_NUM}\b"
)


def _neighbour_answer(f: ProblemFacts) -> str:
    """The complement of a share, or the total instead of the change."""
    final = f.final_answer
    story = f.story
    if (
        final is not None
        and _SHARE_ASKED.search(f.target)
        and _NOT_ASKED.search(f.target)
        and not _NOT_ASKED.search(story)  # "20 did not sprout": the story's own count is of the not
    ):
        counts = [Fraction(n) for n in re.findall(rf"(?<![\d.$£€]){_NUM}(?! ?%)", story)]
        for whole in counts:
            for part in counts:
                if 0 < part < whole and final in (part / whole * 100, part / whole):
                    return (
                        f"the question asks about those who did not; {show(final)} is the share of the "
                        f"{show(part)} who did"
                    )
    paid = _PAID_WITH.search(story)
    if paid and re.search(r"\bchange\b", f.target):
        amount = Fraction(paid.group(1) or paid.group(2))
        if amount not in f.solution_numbers:
            return f"the change comes from the {show(amount)} paid; the solution never uses it"
    return ""


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
    return _neighbour_answer(f)
