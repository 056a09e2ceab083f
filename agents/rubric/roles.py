"""The roles quantities play in a story, checked against what the solution does with them.

A percentage change is taken of the starting value; a tax-inclusive price already holds the tax;
"a for every b" scales the asked part, not the other; n children bringing m apples each make n × m,
not n + m; a solution that states a fact the question never gave (the holiday lasts 14 days) has
invented it; paid − change is what was spent. Each detector returns ``""`` when it finds nothing
(or does not apply) and a sentence a writer can act on when it finds a flaw.
"""

from __future__ import annotations

import re
from fractions import Fraction

from agents.rubric import owners
from agents.rubric.facts import ProblemFacts, rounded, show
from agents.rubric.stated import listed_values
from agents.verify.expressions import NUMBER
from agents.verify.units import UNIT_PATTERN, unit

_NUM = NUMBER  # a whole decimal, never a truncated part of one
_MONEY = r"[$£€]"

# ---- percentages of the right whole ---------------------------------------------------------------

_FROM_TO = re.compile(rf"\bfrom {_MONEY}?{_NUM}\b[^.?!]{{0,30}}?\bto {_MONEY}?{_NUM}\b")
_CHANGE_ASK = re.compile(
    r"\b(?:by )?what (?:percentage|percent|%)|\bpercentage (?:increase|decrease|change|rise|fall)"
)


_SHARE_OF_NOUN = re.compile(
    r"(?<![\d.])(\d+/\d+|\d+(?:\.\d+)? ?%) of (?:the|her|his|their|its|these|those) ([a-z]+)\b"
)


def share_of_named_part(f: ProblemFacts) -> str:
    """'A class of 30 has 18 girls; 1/3 of the girls walk': a third of 18, not of the class's 30."""
    story = f.story
    for share, noun in _SHARE_OF_NOUN.findall(story):
        counts = {
            Fraction(n)
            for n in re.findall(
                rf"(?<![\d.])(\d+) (?:of them |of whom )?(?:are |were )?{re.escape(noun)}\b", story
            )
        }
        if len(counts) != 1:
            continue
        count = next(iter(counts))
        value = share.replace(" ", "")
        shown = re.escape(value)
        used = re.findall(rf"{shown} of [$£€]?(\d+(?:\.\d+)?)", f.s.lower())
        for base in {Fraction(b) for b in used}:
            if base != count and base in f.question_numbers:
                return (
                    f"the story takes {value} of the {show(count)} {noun}; the solution takes it of "
                    f"{show(base)}"
                )
    return ""


def percent_change_base(f: ProblemFacts) -> str:
    """'By what percentage did it go up from 200 to 250' is 50 ÷ 200: the change over the starting
    value. An answer that divides by the new value (or by anything else) is not it."""
    found = _FROM_TO.search(f.q.lower())
    if not found or not _CHANGE_ASK.search(f.target):
        return ""
    start, end = Fraction(found.group(1)), Fraction(found.group(2))
    stated = re.findall(rf"{_NUM} ?%", f.final_sentence)
    if not start or start == end or not stated:
        return ""
    expected = abs(end - start) / start * 100
    answer = Fraction(stated[-1])
    if abs(answer - expected) <= Fraction(1, 2) or answer == 100 - expected:
        return ""  # right (to rounding), or the new value as a share of the old: another check's
    return (
        f"a change from {show(start)} to {show(end)} is {float(expected):.3g} % of the starting value "
        f"({show(abs(end - start))} ÷ {show(start)}); the solution gives {show(answer)} %"
    )


_AFTER_CHANGE = re.compile(
    r"\b(?:new|final|sale|reduced|discounted|raised|increased) (?:price|cost|total|amount|value|wage|salary|"
    r"rent|fare|bill|population|number)\b|\b(?:price|cost|value|amount) (?:after|now)\b"
)


def change_for_result(f: ProblemFacts) -> str:
    """Asked the new price after a 20 % cut, the answer is the cut itself (20 % of the price): it
    answers how much it changed, not what it changed to."""
    if not _AFTER_CHANGE.search(f.target) or f.final_answer is None:
        return ""
    rates = [g.value for g in f.givens if g.percent]
    bases = [g.value for g in f.givens if not g.percent]
    for rate in rates:
        for base in bases:
            change = base * rate / 100
            if f.final_answer == change and change not in (base - change, base + change):
                return (
                    f"the question asks for the amount after the change; {show(change)} is the change "
                    f"itself ({show(rate)} % of {show(base)})"
                )
    return ""


_INCLUSIVE = re.compile(rf"{_MONEY}?{_NUM} ?{_MONEY}?,? (?:including|incl\.?|inclusive of|with) {_NUM} ?%")


def inclusive_price(f: ProblemFacts) -> str:
    """€84 including 20 % VAT is 120 % of the price before tax: the tax is 84 ÷ 1.2 × 0.2, not 20 %
    of 84."""
    found = _INCLUSIVE.search(f.q.lower())
    if not found:
        return ""
    total, rate = found.group(1), found.group(2)
    decimal = show(Fraction(rate) / 100)
    of_total = rf"{rate} ?% of {_MONEY}?{total}\b|{total} ?× ?{decimal}\b|{decimal} ?× ?{_MONEY}?{total}\b"
    if re.search(of_total, f.s):
        return (
            f"{total} already includes the {rate} %: the {rate} % is of the price before it was added "
            f"({total} ÷ {show(1 + Fraction(rate) / 100)}), not of {total}"
        )
    return ""


# ---- which part a ratio scales --------------------------------------------------------------------

_FOR_EVERY = re.compile(
    rf"{_NUM} ?({UNIT_PATTERN}) (?:of )?([a-z]+) (?:for every|to every|for each|per) "
    rf"{_NUM} ?({UNIT_PATTERN}) (?:of )?([a-z]+)"
)


def ratio_direction(f: ProblemFacts) -> str:
    """'250 g of sugar for every 500 g of flour', asked the sugar for 1.2 kg of flour: 1200 × 250 ÷
    500. A solution that scales the other way (1200 × 500 ÷ 250) has turned the ratio round."""
    found = _FOR_EVERY.search(f.q.lower())
    if not found:
        return ""
    a, unit_a, part, b, unit_b, whole = found.groups()
    ua, ub = unit(unit_a), unit(unit_b)
    if ua is None or ub is None or ua.dimension != ub.dimension or part not in f.target:
        return ""
    if not Fraction(a) or not Fraction(b):
        return ""  # "10 minutes for every 0 minutes" is no ratio to turn round (and no judge may crash)
    amounts = [
        g.value * g.unit.scale
        for g in f.givens
        if g.unit is not None
        and g.unit.dimension == ub.dimension
        and g.value not in (Fraction(a), Fraction(b))
    ]
    answer = _final_measure(f, ua.dimension)
    if len(amounts) != 1 or answer is None:
        return ""
    ratio = Fraction(a) * ua.scale / (Fraction(b) * ub.scale)
    right, turned = amounts[0] * ratio, amounts[0] / ratio
    if ratio != 1 and answer == turned != right:
        return (
            f"{a} {unit_a} of {part} go with every {b} {unit_b} of {whole}: the {part} is the {whole} × "
            f"{show(ratio)}, but the solution multiplies by {show(1 / ratio)}"
        )
    return ""


def _final_measure(f: ProblemFacts, dimension: str) -> Fraction | None:
    """The answer's value in the dimension's base unit (2.4 kg → 2400 g)."""
    measures = re.findall(rf"{_NUM} ?({UNIT_PATTERN})(?![\w/])", f.final_sentence)
    for number, name in reversed(measures):
        measured = unit(name)
        if measured is not None and measured.dimension == dimension:
            return Fraction(number) * measured.scale
    return None


# ---- equal groups ---------------------------------------------------------------------------------

_GROUPS = re.compile(
    rf"\b{_NUM} ([a-z]+) each (?:[a-z]+ ){{1,3}}?{_NUM}\b|"
    rf"\beach of (?:the )?{_NUM} [a-z]+ (?:[a-z]+ ){{1,3}}?{_NUM}\b"
)


def groups_added(f: ProblemFacts) -> str:
    """Six children each bring 4 apples: 6 × 4 apples. Adding the number of groups to the size of
    one group (6 + 4) counts nothing."""
    for groups in _GROUPS.findall(f.q.lower()):
        n, _, m, n2, m2 = groups
        count, size = (n, m) if n else (n2, m2)
        if count == size:
            continue
        added = rf"(?<![\d.]){count} ?\+ ?{size}(?![\d.])|(?<![\d.]){size} ?\+ ?{count}(?![\d.])"
        multiplied = rf"(?<![\d.]){count} ?× ?{size}(?![\d.])|(?<![\d.]){size} ?× ?{count}(?![\d.])"
        if re.search(added, f.s) and not re.search(multiplied, f.s):
            return f"{count} groups of {size} make {count} × {size}; the solution adds {count} + {size}"
    return ""


# ---- facts the solution states that the question never gave ----------------------------------------

_PREMISE = re.compile(
    r"(?:^|[.!?;]\s+)(?:(?:the|a|an|each|every|one|his|her|their)\s+([a-z' ]{1,40}?)\s+"
    r"(?:is|lasts|takes|covers|holds|costs|weighs|measures|contains|has)|"
    r"(she|he|they|we)\s+(?:[a-z]+s|[a-z]+ed)\s+)\s*"
    rf"(?:about |around |roughly |usually |normally )?{_MONEY}?{_NUM}(?!\s*[-+×÷/=%:]|\d)",
    re.I,
)


def stated_premise(f: ProblemFacts) -> str:
    """'The holiday lasts 14 days', 'The drive is 200 km': a solution that states, as a fact, a
    quantity the question neither gives nor computes has supplied missing data itself."""
    known = set(f.question_numbers)
    known |= {v / 100 for v in known} | {v * 100 for v in known}
    results = {v for _, v in f.verification.results}
    numbers = sorted(set(f.question_numbers))
    pairs = {a * b for a in numbers for b in numbers if a != b} | {
        a + b for a in numbers for b in numbers if a != b
    }
    for match in _PREMISE.finditer(f.s):
        value = Fraction(match.group(3))
        if value in known or value in results or value in pairs or value in f.constants:
            continue
        if rounded(value, match.group(3), results):  # "6.3, so they need 7 minibuses"
            continue
        said = match.group(0).strip(" .!?;")
        return f"the solution states “{said}”, a quantity the question never gives"
    return ""


# ---- data that contradict each other --------------------------------------------------------------

_PAID = re.compile(rf"\bpays? (?:with|using) (?:a |an |one )?{_MONEY}{_NUM}")
_CHANGE = re.compile(rf"\b(?:receives?|gets?|is given|given|back) {_MONEY}{_NUM} (?:in |of |as )?change\b")
_EACH_PRICE = re.compile(rf"\b{_NUM} [a-z]+ (?:at|for|costing) {_MONEY}{_NUM} each\b")


def change_agrees(f: ProblemFacts) -> str:
    """Bought at a price, paid with a note, given change: the note minus the change is the cost."""
    q = f.q.lower()
    paid, change, bought = _PAID.search(q), _CHANGE.search(q), _EACH_PRICE.findall(q)
    if not (paid and change and len(bought) == 1) or len(re.findall(_MONEY, q)) != 3:
        return ""
    count, price = (Fraction(x) for x in bought[0])
    spent = Fraction(paid.group(1)) - Fraction(change.group(1))
    if count * price != spent:
        return (
            f"{show(count)} at {show(price)} cost {show(count * price)}, but {paid.group(1)} paid with "
            f"{change.group(1)} change means {show(spent)} was spent"
        )
    return ""


# ---- quantities that play no part in what is asked ------------------------------------------------

_PARTS = re.compile(r"(?<![\d.])\b(\d+) parts?\b")


def extra_parts(f: ProblemFacts) -> str:
    """'3 parts juice to 5 parts water, with 2 spoons of sugar': the whole is 3 + 5 parts; a sum of
    the parts with another of the story's numbers counts something that is no part."""
    parts = [Fraction(p) for p in _PARTS.findall(f.q.lower())]
    if len(parts) < 2:
        return ""
    others = {n for n in f.question_numbers if n not in parts}
    for terms in re.findall(r"\d+(?:\.\d+)?(?: ?\+ ?\d+(?:\.\d+)?)+", f.s):
        values = [Fraction(x) for x in re.findall(r"\d+(?:\.\d+)?", terms)]
        strangers = [v for v in values if v in others and v not in parts]
        if all(p in values for p in parts) and strangers:
            whole = " + ".join(show(p) for p in parts)
            return f"the ratio has {whole} parts; {show(strangers[0])} is not one of them"
    return ""


_SOLD = re.compile(r"\bsold (\d+)\b|\b(\d+) (?:of them |[a-z]+ )?(?:were |was )?sold\b")
_TAKINGS = re.compile(
    r"\b(?:take in|took in|takes in|earn\w*|revenue|income|takings|make|made|money|receive\w*)\b"
)


def unsold_counted(f: ProblemFacts) -> str:
    """Money taken in comes from what was sold: the price times the number sold, not the number
    made or bought (those given away bring nothing in)."""
    q = f.q.lower()
    sold = _SOLD.search(q)
    if not sold or not _TAKINGS.search(f.target):
        return ""
    count = sold.group(1) or sold.group(2)
    prices = re.findall(rf"{_MONEY}{_NUM} each|{_NUM} ?{_MONEY} each", q)
    others = {show(n) for n in f.question_numbers if n.denominator == 1} - {count}
    for groups in prices:
        price = groups[0] or groups[1]
        used = [
            other
            for other in others
            if re.search(
                rf"(?<![\d.]){other} ?× ?{_MONEY}?{price}\b|(?<![\d.]){price} ?× ?{other}(?![\d.])", f.s
            )
        ]
        if used and not re.search(rf"(?<![\d.]){count} ?×|× ?{count}(?![\d.])", f.s):
            return f"only the {count} sold bring money in; the solution charges for {used[0]}"
    return ""


_ABSENT = re.compile(
    r"\b(?:stay(?:s|ed)? (?:at )?home|off sick|absent|(?:are|is|were|was) not (?:coming|there|going)|"
    r"do(?:es)? not (?:come|go)|did not (?:come|go)|stay(?:s|ed)? behind)\b"
)
_OCCUPANCY = re.compile(r"\b(?:empty|free|spare|available|present|on the|in the|needed|left over)\b")


def absent_counted(f: ProblemFacts) -> str:
    """Pupils who stay at home take no seat on the bus: a number the story says is not there is not
    added to those who are (unless the question asks for everyone, present or not)."""
    if not _OCCUPANCY.search(f.target) or re.search(
        r"\b(?:altogether|in all|in total|whole class)\b", f.target
    ):
        return ""
    absent = set()
    for sentence in re.split(r"(?<=[.?!;])\s+", f.q.lower()):
        if _ABSENT.search(sentence):
            absent |= {Fraction(n) for n in re.findall(r"\b(\d+)\b", sentence)}
    for terms in re.findall(r"\d+(?: ?\+ ?\d+)+", f.s):
        values = {Fraction(x) for x in re.findall(r"\d+", terms)}
        if values & absent and values - absent:
            return f"the {show(min(values & absent))} who are not there are added to those who are"
    return ""


_OWN = re.compile(r"\b([A-Z][a-z]+) (?:only|just) (?:uses|spends|has|counts|gets) (?:his|her|their) own\b")
_OWNS = re.compile(r"\b([A-Z][a-z]+) (?:has|had|owns|gets|saved|brings) (?:[$£€])?(\d+(?:\.\d+)?)\b")


def others_quantity(f: ProblemFacts) -> str:
    """'Jake only uses his own tokens': what his friend has is not his to use."""
    own = _OWN.search(f.q)
    if not own:
        return ""
    theirs = {n for who, n in _OWNS.findall(f.q) if who != own.group(1)}
    for number in theirs:
        if re.search(rf"(?<![\d.]){number} ?[-+×÷]|[-+×÷] ?{number}(?![\d.])", f.s):
            return f"{own.group(1)} uses only his or her own; the solution also uses someone else's {number}"
    return ""


_AGE = re.compile(r"\b(\d+)[ -]years?[ -]old\b|\baged (\d+)\b|\bage (?:of )?(\d+)\b")


def age_added(f: ProblemFacts) -> str:
    """Someone's age counts nothing but years: adding it to money or things, when the question does
    not ask about ages, brings a distractor into the sum."""
    if re.search(r"\bhow old\b|\bage\b|\byears?\b|\bborn\b", f.target):
        return ""
    ages = {Fraction(next(a for a in groups if a)) for groups in _AGE.findall(f.q.lower())}
    for terms in re.findall(r"\d+(?:\.\d+)?(?: ?[+-] ?\d+(?:\.\d+)?)+", f.s):
        values = {Fraction(x) for x in re.findall(r"\d+(?:\.\d+)?", terms)}
        if values & ages and values - ages:
            return f"{show(min(values & ages))} is someone's age; it has no part in what the question asks"
    return ""


_AMOUNT_OF = re.compile(rf"(?<![\d.])(\d+(?:\.\d+)?) ?({UNIT_PATTERN}) of ([a-z]+)\b")
_ASKED_SUBSTANCE = re.compile(
    rf"\bhow (?:much|many (?:{UNIT_PATTERN}) of) ([a-z]+)\b(?! (?:and|or)\b)(?![^?]*\b(?:and|with|plus)\b)"
)
_MIXED = re.compile(r"\b(?:total|altogether|together|in all|combined|mixture|ingredients|both)\b")


def other_substance(f: ProblemFacts) -> str:
    """'How much flour for 36 muffins' counts the flour: the recipe's 90 g of sugar added to its
    180 g of flour answers for a mixture nobody asked about."""
    asked = _ASKED_SUBSTANCE.search(f.target)
    if not asked or _MIXED.search(f.target):
        return ""
    substance = asked.group(1)
    amounts = [(Fraction(n), unit(u), noun) for n, u, noun in _AMOUNT_OF.findall(f.q.lower())]
    ours = {(value, u.dimension) for value, u, noun in amounts if u and noun == substance}
    for value, u, noun in amounts:
        if not u or noun == substance or (value, u.dimension) in ours:
            continue
        for mine, dimension in ours:
            if dimension != u.dimension:
                continue
            a, b = re.escape(show(mine)), re.escape(show(value))
            if re.search(rf"(?<![\d.]){a} ?\+ ?{b}(?![\d.])|(?<![\d.]){b} ?\+ ?{a}(?![\d.])", f.s):
                return (
                    f"the question asks for the {substance}; the solution adds the {show(value)} "
                    f"{u.name} of {noun} to it"
                )
    return ""


_OF_THOSE = re.compile(rf"(?<![\d.]){_NUM} of (?:those|these|them|the(?:ir|se)? [a-z]+|all)\b")


def counted_twice(f: ProblemFacts) -> str:
    """'24, 31, 18 and 27 points in four quarters; Dele scored 22 of those points': the 22 is inside
    the four scores already, so a sum of all four and the 22 counts it twice."""
    values = listed_values(f)
    inside = [Fraction(n) for n in _OF_THOSE.findall(f.q.lower())]
    if not values or not inside:
        return ""
    for terms in re.findall(r"\d+(?:\.\d+)?(?: ?\+ ?\d+(?:\.\d+)?){3,}", f.s):
        added = [Fraction(x) for x in re.findall(r"\d+(?:\.\d+)?", terms)]
        rest = list(added)
        for v in values:
            if v in rest:
                rest.remove(v)
        if len(rest) == len(added) - len(values):
            twice = [n for n in inside if n in rest]
            if twice:
                return (
                    f"{show(twice[0])} is part of the {len(values)} values already listed; the solution "
                    "adds it to them again"
                )
    return ""


def unused_roles(f: ProblemFacts) -> str:
    """Any quantity above that the solution uses although the story leaves it out."""
    return (
        extra_parts(f)
        or unsold_counted(f)
        or absent_counted(f)
        or others_quantity(f)
        or owners.foreign_quantity(f)
        or other_substance(f)
        or counted_twice(f)
        or age_added(f)
    )


# ---- containers, prices and rates -------------------------------------------------------------------

_CAPACITY = re.compile(
    r"\b(?:each|every|a|one) ([a-z]+) (?:holds|seats|carries|fits|takes|can hold|can seat|can carry|"
    r"can take|has room for) (?:up to |at most )?(\d+)\b"
)


def containers_needed(f: ProblemFacts) -> str:
    """'Each table seats 6; how many tables are needed for 42?' is 42 ÷ 6 (rounded up): the number
    of containers comes from dividing by what one holds, never from multiplying by it."""
    for noun, size in _CAPACITY.findall(f.q.lower()):
        asked = re.search(rf"\bhow many {noun[:4]}\w*\b", f.target)
        if not asked or "÷" in f.operators or "/" in f.s or "remainder" in f.s.lower():
            continue
        multiplied = re.search(rf"(?<![\d.])\d+(?:\.\d+)? ?× ?{size}(?![\d.])|(?<![\d.]){size} ?× ?\d", f.s)
        answer = f.final_answer
        if multiplied and answer is not None and not re.search(rf"(?<![\d.]){show(answer)} ?×", f.s):
            return f"how many {noun}s a number fills is found by dividing by the {size} one holds"
    return ""


_PRICE_PER = re.compile(rf"{_MONEY}{_NUM} (?:per|a|an|for each|for 1|for one) ({UNIT_PATTERN})\b")


def rate_in_other_unit(f: ProblemFacts) -> str:
    """£2 per kg times 500 g is not £1000: a rate per one unit meets an amount in another unit of
    the same kind only after converting."""
    for price, name in _PRICE_PER.findall(f.q.lower()):
        per = unit(name)
        if per is None:
            continue
        for given in f.givens:
            if given.unit is None or given.unit.dimension != per.dimension or given.unit.scale == per.scale:
                continue
            amount = show(given.value)
            product = rf"(?<![\d.]){amount} ?× ?{_MONEY}?{price}(?![\d.])|{price} ?× ?{amount}(?![\d.])"
            if re.search(product, f.s):
                return (
                    f"{price} is per {name}, but {amount} is in {given.unit.name}: "
                    f"the solution multiplies without converting"
                )
    return ""


def count_added_to_money(f: ProblemFacts) -> str:
    """'A book costs £8; what do 5 books cost?': 8 + 5 adds a number of books to an amount of money."""
    money = {g.value for g in f.givens if g.unit is not None and g.unit.dimension == "money"}
    counted = {g.value for g in f.givens if g.unit is None and not g.percent} - money
    for match in re.finditer(r"(?<![\d.:])(\d+(?:\.\d+)?) ?\+ ?(\d+(?:\.\d+)?)(?![\d.:])", f.s):
        if _multiplied(f.s, match):
            continue  # "3 × £2 + 4 × £0.50": the 2 and the 4 are factors of two products
        a, b = match.groups()
        pair = {Fraction(a), Fraction(b)}
        if len(pair) == 2 and pair & money and pair & counted and not pair <= money:
            return f"{a} + {b} adds a number of things to an amount of money"
    return ""


def _multiplied(text: str, match: re.Match[str]) -> bool:
    """A term of the sum is a factor of a product or a quotient beside it."""
    before, after = text[: match.start()].rstrip(" £$€"), text[match.end() :].lstrip(" p")
    return before.endswith(("×", "÷", "*", "/")) or after.startswith(("×", "÷", "*", "/"))
