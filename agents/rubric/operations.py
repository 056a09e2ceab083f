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

from agents.rubric.facts import COMPOUND_DURATION, ProblemFacts, show
from agents.rubric.owners import NOT_NAMES
from agents.verify.expressions import NUMBER
from agents.verify.units import UNIT_PATTERN, unit

_NUM = NUMBER  # a whole decimal, never a truncated part of one
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
    r"(?:pieces|parts|lengths|portions|slices|strips|shares|bits|sections|[a-z]+s)\b"
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


_HOW_MANY_BOUGHT = re.compile(r"\bhow many\b[^?]*\b(?:buy|bought|get|got|purchase|purchased)\b")
_SPENT = re.compile(rf"\b(?:spent|spends|spend|paid) (?:a total of |exactly )?{_MONEY}{_NUM}")


def bought_with(f: ProblemFacts) -> str:
    """'How many $6 tickets can he buy with $48' is 48 ÷ 6, never 48 − 6."""
    asked = _BUY_WITH.search(f.target)
    if asked is None and _HOW_MANY_BOUGHT.search(f.target):  # "spent $27 … how many did he buy?"
        asked = _SPENT.search(f.q.lower())
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


# ---- one of N equal shares of a whole is smaller than the whole: the whole ÷ N ------------------------

_SHARED_AMONG = re.compile(
    r"\b(?:shared?|shares|split|splits|divided|divides)(?: out)?"
    r"(?: (?:[$£€])?\d+(?:\.\d+)?(?: [a-z]+){0,2})? (?:equally |evenly )?(?:among|between) "
    rf"(?:the |her |his |their |its )?{_NUM}\b"
)
_PACK = re.compile(
    rf"\b(?:a|one|each) (?:pack|box|bag|set|packet|crate|carton|tin|jar|bunch|tray|roll|bottle)s? of {_NUM} "
    rf"(?:[a-z]+ ){{1,3}}?(?:costs?|weighs?|holds?|contains?|is|sells? for) (?:{_MONEY})?{_NUM}\b"
)
_EACH_ASK = re.compile(r"\b(?:each|one|a single|per|every|1 [a-z]+)\b")
_KIND = re.compile(rf"([$£€])|\b\d+(?:\.\d+)? ?({UNIT_PATTERN})(?![\w/])")


def _kinds(text: str) -> set[str]:
    """The kinds of quantity a text states (money, length, mass, …)."""
    out = set()
    for currency, name in _KIND.findall(text):
        found = unit(currency or name)
        if found is not None:
            out.add(found.dimension)
    return out


_FACTORS = (Fraction(1), Fraction(10), Fraction(100), Fraction(1000))


def _wholes_and_counts(q: str) -> list[tuple[Fraction, Fraction, set[str]]]:
    """(whole, number of equal shares, the whole's kinds) the story states."""
    out = []
    for sentence in re.split(r"(?<=[.?!])\s+", q):
        for found in (_INTO.search(sentence), _SHARED_AMONG.search(sentence)):
            if found is None:
                continue
            before = re.findall(rf"{_NUM}", sentence[: found.start(1)])
            if before:
                out.append(
                    (Fraction(before[-1]), Fraction(found.group(1)), _kinds(sentence[: found.start(1)]))
                )
        for match in _PACK.finditer(sentence):
            count, total = match.groups()
            out.append((Fraction(total), Fraction(count), _kinds(match.group(0))))
    return [(whole, n, kinds) for whole, n, kinds in out if n > 1]


_LATER = re.compile(r"\b(?:then|after that|afterwards|later|next)\b")


def share_of_a_whole(f: ProblemFacts) -> str:
    """'A pack of 8 yoghurts costs £2.40 — one costs?', '24 m cut into 4 equal pieces — each?': one
    share is a whole the story gives (or the solution works out) divided by the number of shares,
    in some unit; an answer no whole divided by N gives came from another operation."""
    answer = f.final_answer
    if answer is None or not f.target or not _EACH_ASK.search(f.target):
        return ""
    known = set(f.question_numbers) | {v for _, v in f.verification.results}
    answered = _kinds(f.final_sentence)
    for whole, n, kinds in _wholes_and_counts(f.q.lower()):
        if kinds and answered and not kinds & answered:
            continue  # the pack's price, asked about each one's length
        if any(answer * n * k in known or answer * n / k in known for k in _FACTORS):
            return ""
        floor = any(answer * n <= w * k < (answer + 1) * n for w in known for k in _FACTORS)
        if floor:
            return ""  # whole shares with some left over
        results = {v for _, v in f.verification.results}
        if whole / n in results and answer in results and _LATER.search(f.q.lower()):
            return ""  # "48 ÷ 6 = 8 each, then each gives 2 back: 8 − 2 = 6": a later step of the story
        return (
            f"one of {show(n)} equal shares of {show(whole)} is {show(whole / n)}; "
            f"the solution's {show(answer)} is not the whole divided by {show(n)}"
        )
    return ""


_PACKED_IN = re.compile(rf"\b(?:in|into) ([a-z]+) of {_NUM}\b")
# "into boxes that hold 6 eggs each", "6 eggs to a box"
_HOLDING = re.compile(
    r"\b(?:in|into) ([a-z]+) (?:that|which) (?:each )?(?:holds?|takes?|fits?|carr(?:y|ies)|contains?) "
    rf"{_NUM}\b"
)
_TO_A = re.compile(rf"(?<![\d.]){_NUM} [a-z]+ (?:to|in|per) (?:a|each|every|one) ([a-z]+)\b")


def _capacities(q: str) -> list[tuple[str, str]]:
    """(containers, size) pairs the story states; "6 rolls to a bag" names the bags in the singular."""
    singular = [
        (container + ("es" if container.endswith("x") else "s"), size) for size, container in _TO_A.findall(q)
    ]
    return _PACKED_IN.findall(q) + _HOLDING.findall(q) + singular


def containers_filled(f: ProblemFacts) -> str:
    """'96 buns in bags of 8; how many bags?' is 96 ÷ 8 (or its whole part, or one more): never
    more bags than buns."""
    answer = f.final_answer
    if answer is None:
        return ""
    written = set(f.solution_numbers)
    for container, size in _capacities(f.q.lower()):
        asked = re.search(rf"\bhow many {container[:4]}", f.target)
        each = Fraction(size)
        if not asked or each <= 1:  # "one person to a seat" fills nothing
            continue
        # a total the story gives or the solution works out (not one it made by multiplying by the size)
        totals = set(f.question_numbers) | {
            r for _, r in f.verification.results if not any(r == x * each for x in written)
        }
        if any(total - each < c * each < total + each for total in totals for c in written if c < total):
            return ""  # some number written is the total divided by the size (or its whole part, or one more)
        return (
            f"filling {container} of {size} takes the total divided by {size}; "
            f"{show(answer)} {container} is not that"
        )
    return ""


# ---- taking away cannot leave more than there was ----------------------------------------------------

_HAD = re.compile(
    rf"\b(?:had|has|have|bought|baked|picked|collected|made|owns?) "
    rf"(?:({_MONEY}){_NUM}|{_NUM}((?: [a-z]+){{0,3}}))"
)
TAKEN = re.compile(
    r"\b(?:gave|gives|give|sold|sells|lost|loses|ate|eats|spent|spends|used|uses|broke|breaks|"
    r"donated|donates|threw|throws|lent|lends|posted|sent|dropped|drank|drinks)\b"
)
_GAINED = re.compile(
    r"\b(?:gets?|got|buys?|bought|finds?|found|receives?|received|wins?|won|earns?|earned|collects?|"
    r"collected|more|another|adds?|added|given|picks?|picked|grows?|grew|saves?|saved)\b"
)


# what follows "had 3": packs of a size ("packs of 8 stickers", "packs of stickers with 8 stickers in
# each pack", "boxes, each holding 12 pens")
_PACKED = re.compile(
    r" ?(?:packs?|packets?|boxes|box|bags?|crates?|cartons?|sets?|rows?|trays?|jars?|tins?|bundles?|"
    r"rolls?|sheets?|books?|albums?)(?: of [a-z]+)?,? (?:of|with|each (?:with|holding|containing|of)) "
    r"(\d+)(?: [a-z]+)?(?: (?:in|per) (?:each|every|a|one)(?: [a-z]+)?)?"
)
_SKIP = {"more", "of", "does", "do", "did", "is", "are", "was", "were", "will", "can"}


def _given_to_asked(f: ProblemFacts) -> bool:
    """The person the question asks about is the one something is given, sent or lent to."""
    if not f.questions:
        return False
    names = set(re.findall(r"\b[A-Z][a-z]+\b", f.questions[-1])) - NOT_NAMES
    story = " ".join(f.story_sentences)  # as written: names keep their capitals
    return any(
        re.search(
            rf"\b(?:gives?|gave|hands?|handed|sends?|sent|lends?|lent|pass(?:es|ed)?|pays?|paid)\b"
            rf"[^.?!]{{0,20}}?\b{name}\b|\b(?:to|for) {name}\b",
            story,
        )
        for name in names
    )


def more_after_taking(f: ProblemFacts) -> str:
    """'Sam had 45 stickers and gave 12 to his sister; how many has he now?' cannot be more than 45."""
    if not re.search(r"\b(?:left|now|remain\w*|still)\b", f.target) or f.final_answer is None:
        return ""
    q = f.q.lower()
    had = _HAD.search(q)
    if not had or not TAKEN.search(q[had.end() :]) or _GAINED.search(q[had.end() :]):
        return ""
    if _given_to_asked(f):
        return ""  # "Ali gives Hugo 4 cards: how many has Hugo now" asks about the one who receives
    money, amount, count, noun = had.groups()
    if count and re.match(r" ?[$£€\d]", q[had.end() :]):
        return ""  # "has 3 £2 coins": a count of coins, not the amount had
    packed = _PACKED.match(q[had.start(4) if noun else had.end() :]) if count else None
    if packed:  # "has 3 packs of stickers with 8 in each pack": 24 stickers had, not 3
        count = str(Fraction(count) * Fraction(packed.group(1)))
    elif count and re.match(r" ?(?:of|with|holding|containing)\b", q[had.end() :]):
        return ""  # "has 3 packs of stickers": a count of packs, whose size is not given here
    if money and not re.search(r"[$£€]|\b(?:pence|p|cents?)\b", f.final_sentence):
        other = [k for k in _kinds(f.final_sentence) if k != "money"]
        counted = re.search(r"\d+(?:\.\d+)? ([a-z]+)", f.final_sentence)
        if other or (counted and counted.group(1) not in _SKIP and unit(counted.group(1)) is None):
            return ""  # had £8 in coins, asked how many coins: the answer is not that money
    asked = re.search(r"how many ([a-z]+)", f.target)
    words = (noun or "").split()
    if words and asked and asked.group(1) not in _SKIP and all(asked.group(1)[:4] != w[:4] for w in words):
        return ""  # what was had is not what is asked about ("3 £2 coins", asked about money)
    start = Fraction(amount or count)
    if f.final_answer > start:
        return (
            f"after giving, spending or losing some of the {show(start)}, fewer are left, "
            f"not {show(f.final_answer)}"
        )
    return ""


# ---- an arrival comes after the departure ------------------------------------------------------

_SETS_OFF = re.compile(
    r"\b(?:leaves?|left|departs?|departed|sets? off|starts?|started|begins?|began) (?:[a-z ]{0,30}?)?"
    r"(?:at )?(\d{1,2}):(\d{2})\b"
)
_LATER_ASKED = re.compile(
    r"\b(?:arrive|arrives|arrival|finish|finishes|end|ends|get (?:there|home|back)|reach)\b"
)
_SPANS = re.compile(
    rf"{COMPOUND_DURATION.pattern}|(?<![\d.:])(\d+) ?(?:h|hours?)\b|(?<![\d.:])(\d+) ?(?:min|minutes?)\b"
)


def _spans(text: str) -> set[int]:
    """The durations a text gives, in minutes."""
    out = set()
    for hours, minutes, only_hours, only_minutes in _SPANS.findall(text):
        if only_minutes:
            out.add(int(only_minutes))
        else:
            out.add(int(hours or only_hours) * 60 + int(minutes or 0))
    return out


def arrival_before_departure(f: ProblemFacts) -> str:
    """'Leaves at 10:45, the journey takes 2 h 30 min: when does it arrive' is 13:15; 08:15 is the
    duration taken away from the start."""
    start = _SETS_OFF.search(f.q.lower())
    if not start or not _LATER_ASKED.search(f.target) or "what time" not in f.target + " when":
        return ""
    clocks = re.findall(r"\b(\d{1,2}):(\d{2})\b", f.final_sentence)
    if not clocks:
        return ""
    begin = int(start.group(1)) * 60 + int(start.group(2))
    end = int(clocks[-1][0]) * 60 + int(clocks[-1][1])
    for span in _spans(f.q.lower()):
        if span and (begin - end) % 720 == span % 720 and (end - begin) % 720 != span % 720:
            return (
                f"the end comes {show(Fraction(span))} minutes after the start; the solution takes the "
                "time away instead of adding it"
            )
    return ""


# ---- a rate per unit is a total over the units -------------------------------------------------

_PER_ASKED = re.compile(
    r"\b(?:per|an|a|each) (hour|day|week|month|night|person|kilogram|kg|litre|metre|minute)\b"
)


def rate_from_total(f: ProblemFacts) -> str:
    """'£180 for a job of 4 hours: how much per hour' is 180 ÷ 4; 180 × 4 is no rate."""
    asked = _PER_ASKED.search(f.target)
    if not asked or not re.search(
        r"\bhow much\b|\bwhat (?:is|was) the (?:rate|price|cost|charge)\b", f.target
    ):
        return ""
    q = f.story
    thing = asked.group(1)
    totals = re.findall(rf"{_MONEY} ?{_NUM}", q)
    counts = re.findall(rf"{_NUM} ?{re.escape(thing)}s?\b(?!/)", q)
    if re.search(rf"\b(?:per|an|a|each) {re.escape(thing)}\b", q):
        return ""  # the story already gives a rate per that unit
    for total in totals:
        for count in counts:
            if Fraction(count) > 1 and _either(f.s, _term(total), "[×*]", _term(count)):
                return (
                    f"a charge per {thing} is the total divided by the {thing}s "
                    f"({show(Fraction(total))} ÷ {show(Fraction(count))}); the solution multiplies them"
                )
    return ""


# ---- counts of one kind are added, not multiplied ----------------------------------------------


def like_counts_multiplied(f: ProblemFacts) -> str:
    """'12 trays in the morning and 9 trays in the afternoon, 8 muffins on every tray' is
    (12 + 9) × 8: trays times trays counts nothing."""
    q = f.q.lower()
    counts = re.findall(rf"(?<![\d.$£€]){_NUM} ([a-z]+?)(?:es|s)?\b(?! of each| each|/)", q)
    seen: dict[str, list[str]] = {}
    for number, noun in counts:
        if unit(noun) is None and len(noun) > 2:
            seen.setdefault(noun, []).append(number)
    for noun, numbers in seen.items():
        if len(numbers) < 2 or not re.search(rf"\b(?:each|every|per|a|an) {noun}\b", q):
            continue  # the flaw needs a rate per that thing ("8 muffins on every tray") to multiply by
        for i, a in enumerate(numbers):
            for b in numbers[i + 1 :]:
                if Fraction(a) != Fraction(b) and _either(f.s, _term(a), "[×*]", _term(b)):
                    return (
                        f"{show(Fraction(a))} and {show(Fraction(b))} both count {noun}s: together they "
                        "make their sum; their product counts nothing"
                    )
    return ""


# ---- a fraction of an amount multiplies -----------------------------------------------------------


def fraction_of_divided(f: ProblemFacts) -> str:
    """'2/3 of a batch that needs 3/4 cup' is 2/3 × 3/4; dividing by the 2/3 makes more than a batch."""
    q = f.story
    if re.search(r"\bhow many\b", f.target):
        return ""  # "how many cakes, at 3/4 of a cup each": dividing by the share is right
    for fraction, noun in set(
        re.findall(r"(?<![\d/.])(\d+/\d+) of (?:a|an|the|his|her|their|its|one) ?([a-z]+)", q)
    ):
        if unit(noun) is not None or noun in (
            "cup",
            "spoon",
            "teaspoon",
            "tablespoon",
            "glass",
            "bottle",
            "jug",
        ):
            continue  # "3/4 of a cup" is an amount, not a share to take
        shown = re.escape(fraction)
        if Fraction(fraction) < 1 and re.search(rf"÷ ?\(?{shown}(?![\d/])", f.s):
            return f"{fraction} of an amount is the amount × {fraction}; the solution divides by it"
    return ""


# ---- a profit subtracts; a recipe for fewer needs less; groups of an amount multiply -----------


def profit_added(f: ProblemFacts) -> str:
    """Profit is what comes in minus what it cost: a solution that only adds never finds it."""
    if not re.search(r"\bprofit\b", f.target) or re.search(r"\bpercent|%", f.target):
        return ""
    if "+" in f.operators and "-" not in f.operators and not re.search(r"−|\bminus\b|\bleaves\b", f.s):
        return "a profit is the income minus the cost; the solution adds them"
    return ""


_SERVES = re.compile(r"\bfor (\d+) (people|persons|guests|servings|children|portions)\b")


def recipe_direction(f: ProblemFacts) -> str:
    """A stew for 8 made for 4 needs half the beef: scaling it the other way makes more, not less."""
    q = f.q.lower()
    sizes = _SERVES.findall(q)
    amount = re.search(rf"(?<![\d.])(\d+(?:\.\d+)?) ?({UNIT_PATTERN}) of ([a-z]+)", q)
    asked = re.search(r"\bhow (?:much|many (?:[a-z]+ )?of) ([a-z]+)", f.target)
    if len(sizes) < 2 or not amount or not asked or f.final_answer is None:
        return ""
    first, then = Fraction(sizes[0][0]), Fraction(sizes[-1][0])
    base = Fraction(amount.group(1))
    said = unit(amount.group(2))
    answer_unit = re.findall(rf"(\d+(?:\.\d+)?) ?({UNIT_PATTERN})\b", f.final_sentence.lower())
    if (
        said is None
        or not answer_unit
        or unit(answer_unit[-1][1]) != said
        or asked.group(1) != amount.group(3)
    ):
        return ""
    answer = Fraction(answer_unit[-1][0])
    if (then < first and answer > base) or (then > first and answer < base):
        fewer = "fewer" if then < first else "more"
        return (
            f"the recipe is for {show(first)} and made for {show(then)} ({fewer}); {show(answer)} "
            f"{amount.group(2)} scales the {show(base)} {amount.group(2)} the wrong way"
        )
    return ""


_PER_BATCH = re.compile(
    r"(?<![\d/.])(\d+/\d+|\d+\.\d+) (?:of a )?(cups?|kg|g|litres?|l|ml|tablespoons?|teaspoons?)\b"
)


def groups_of_an_amount_divided(f: ProblemFacts) -> str:
    """'Each batch needs 3/4 of a cup; she bakes 6 batches: how many cups' is 6 × 3/4, not 6 ÷ 3/4."""
    asked = re.search(r"\bhow (?:many (cups|kg|grams|litres|ml|tablespoons|teaspoons)|much)\b", f.target)
    if not asked:
        return ""
    for share, _unit in _PER_BATCH.findall(f.q.lower()):
        shown = re.escape(share)
        if re.search(rf"(?<![\d.])\d+ ?÷ ?\(?{shown}(?![\d/])", f.s):
            return (
                f"each takes {share}, so the amount for all of them is their number × {share}; "
                "the solution divides"
            )
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
        share_of_a_whole,
        containers_filled,
        more_after_taking,
        arrival_before_departure,
        rate_from_total,
        like_counts_multiplied,
        fraction_of_divided,
        profit_added,
        recipe_direction,
        groups_of_an_amount_divided,
    ):
        found = check(f)
        if found:
            return found
    return ""
