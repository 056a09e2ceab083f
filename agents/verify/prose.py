"""Relations a solution states in prose, rewritten as the computations they claim.

"From 8:40 to 10:15 is 1 hour 35 minutes" claims ``10:15 − 8:40 = 1 hour 35 minutes``; "Ben has
twice as many as Ann, which is 24" claims ``2 × 12 = 24`` when Ann's 12 can be read (from the
relation itself, "as Ann's 12", or from the one number the question or the solution so far gives
Ann). A relation whose parts cannot be read is left as written: the chain check then lists it as
unverified instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from agents.verify.givens import givens
from agents.verify.units import CURRENCY, unit

_TIME = r"\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?"
_DURATION = (
    r"\d+(?: \d+/\d+)? (?:hours?|hrs?|h)(?:,? (?:and )?\d+ (?:minutes?|mins?))?(?![\w/])"
    r"|\d+ (?:minutes?|mins?)(?![\w/])"
)
_SPAN_LINK = r",? (?:which is|that is|is|was|takes|took|lasts|lasted|makes|=|:)"
_CLOCK_SPAN = re.compile(
    rf"\b(?:[Ff]rom )?(?P<a>{_TIME}) (?:to|until|till) (?P<b>{_TIME}){_SPAN_LINK} (?P<d>{_DURATION})"
)
_BETWEEN = re.compile(
    rf"\b[Bb]etween (?P<a>{_TIME}) and (?P<b>{_TIME}),? "
    rf"(?:there (?:is|are|were)|is|are|was) (?P<d>{_DURATION})"
)


_BY = re.compile(r"\b(\d+(?:\.\d+)?) ?(mm|cm|m|km) by (\d+(?:\.\d+)?) ?(mm|cm|m|km)\b")


def dimensions(text: str) -> str:
    """ "22 m by 10 m" is a rectangle's two sides: ``22 m × 10 m`` (its area when a value follows)."""
    return _BY.sub(lambda m: f"{m[1]} {m[2]} × {m[3]} {m[4]}", text)


def clock_spans(text: str) -> str:
    """ "From 8:40 to 10:15 is 1 hour 25 minutes" → ``10:15 - 8:40 = 1 hour 25 minutes``."""
    for pattern in (_CLOCK_SPAN, _BETWEEN):
        text = pattern.sub(lambda m: f"{m['b']} - {m['a']} = {m['d']}", text)
    return text


_NUMBER = r"\d+(?:\.\d+)?(?: \d+/\d+)?|\d+/\d+"
_FACTOR = rf"twice|double|triple|half|(?:{_NUMBER}) times|{_NUMBER}"
_LINK = (
    r",? (?:which|that) (?:is|makes|gives|comes to|means)|,? making|:|=|"
    r",? so (?:that is|that's|(?:he|she|they|it|we|[A-Z][a-z]+) (?:has|have|had|gets?|got|is|are|was|were"
    r"|needs?|makes?|made|scored?|ran|reads?|read|earns?|earned|pays?|paid|owns?|collected|buys|bought))"
)
# A number that an operator follows is an operand of a written computation, not the relation's result
# ("half as many musicians: 40 × 120 / 60 = 80" states no "half of 60 is 40").
_RESULT = rf"(?P<cur>{CURRENCY})?\s?(?P<n>{_NUMBER})(?!\s*[×x*/÷+−-]\s*(?:{CURRENCY})?\s?\d)"
_TIMES = re.compile(
    rf"\b(?P<f>{_FACTOR}) as (?:many|much|long|old|far|tall|heavy|high|big|fast)\b"
    rf"(?P<ref>[^.;:=?!\n]*?)(?P<link>{_LINK}) {_RESULT}(?![\d/:])"
)
_MORE = re.compile(
    rf"\b(?P<k>{_NUMBER})(?: [a-z]+){{0,2}} (?P<dir>more|less|fewer|older|younger|taller|shorter|longer)"
    rf"(?: [a-z]+)? than(?P<ref>[^.;:=?!\n]*?)(?P<link>{_LINK}) {_RESULT}(?![\d/:])"
)
_NAMED = {"twice": Fraction(2), "double": Fraction(2), "triple": Fraction(3), "half": Fraction(1, 2)}
_DOWN = {"less", "fewer", "younger", "shorter"}


def relations(text: str, question: str) -> str:
    """ "twice as many as Ann, which is 24" → ``2 × 12 = 24``; "5 more than Ann, which is 17" →
    ``12 + 5 = 17``, when Ann's number can be read; otherwise the text stays as written."""

    def times(match: re.Match[str]) -> str:
        base = _base(match, question + " " + text[: match.start()])
        if base is None:
            return match.group(0)
        factor = _NAMED.get(match["f"]) or _literal(match["f"].removesuffix(" times"))
        return f"{_show(factor)} × {_show(base)} = {match['cur'] or ''}{match['n']}"

    def more(match: re.Match[str]) -> str:
        base = _referent(match["ref"], question + " " + text[: match.start()])
        if base is None:
            return match.group(0)
        sign = "-" if match["dir"] in _DOWN else "+"
        return f"{_show(base)} {sign} {match['k']} = {match['cur'] or ''}{match['n']}"

    replacements: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
        (_TIMES, times),
        (_MORE, more),
    )
    for pattern, replace in replacements:
        text = pattern.sub(replace, text)
    return text


def _base(match: re.Match[str], context: str) -> Fraction | None:
    """The value "N times as many" compares with: its named referent ("as Ann", "as Ann's 12"), or,
    when it names none ("8 pens cost twice as much: 10 dollars"), the latest earlier quantity of the
    kind its result counts."""
    ref = match["ref"]
    if _OWN_NUMBER.search(ref) or re.search(r"\bas\b", ref):
        return _referent(ref, context)
    return _same_kind(match, context)


def _same_kind(match: re.Match[str], context: str) -> Fraction | None:
    """The latest quantity before the relation that counts or measures what its result does (the
    noun after the result, or its unit however written: "5 dollars" or "$5" for "10 dollars"),
    other than the result itself; None if the relation counts something else ("twice as many
    shirts: 10 minutes"), the result is part of a longer quantity, or nothing earlier is of its kind."""
    result = _literal(match["n"])
    kind = match["cur"] or _word_after(match.string, match.end())
    counted = re.match(r"\s*([A-Za-z]+)", match["ref"])
    if not kind or (counted is not None and not _same_noun(counted.group(1), kind)):
        return None
    if _GOES_ON.match(match.string, match.end()):
        return None  # "2 h 15 min × 2": the number is part of a longer quantity or an operand
    earlier = [g.value for g in givens(context) if g.value != result and _same_noun(g.noun, kind)]
    return earlier[-1] if earlier else None


_GOES_ON = re.compile(r"\s?[A-Za-z]+\s*(?:and\s+)?[\d×x*/÷+−-]")


def _word_after(text: str, at: int) -> str:
    word = re.match(r"\s?([A-Za-z]+)", text[at:])
    return word.group(1).lower() if word else ""


def _same_noun(a: str, b: str) -> bool:
    """One noun (singular or plural), or one unit however written ("$" and "dollars", "h" and
    "hours"; not "15 minutes" for "2 h": the values would need converting)."""
    a, b = a.lower(), b.lower()
    if a.rstrip("s") == b.rstrip("s"):
        return True
    ua, ub = unit(a), unit(b)
    return ua is not None and ua == ub


_OWN_NUMBER = re.compile(rf"(?<![\d.:/])({_NUMBER})(?![\d:/]|\.\d| ?%| times| more| less| fewer| as)")
_STOP = frozenset({"the", "a", "an", "his", "her", "their", "its", "of", "in", "on", "at", "one", "ones"})


def _referent(ref: str, context: str) -> Fraction | None:
    """The value the relation compares with: a number the relation names ("as Ann's 12"), else the
    one number that follows the referent's name where it is first given ("Ann has 12 stickers")."""
    said = _OWN_NUMBER.findall(ref)
    if len(said) == 1:
        return _literal(said[0])
    if said:
        return None
    name = re.split(r"\bas\b|\bthan\b", ref)[-1].strip(" ,'")
    words = [w for w in re.findall(r"[A-Za-z]+", name) if w.lower() not in _STOP]
    if not words:
        return None
    key = re.escape(words[0]) + (r"(?:'s)?" if len(words) == 1 else r"\b.*?\b" + re.escape(words[-1]))
    after = rf"\b{key}\b{_WORDS}[^\w.?!]+({_NUMBER}){_COUNT}"
    before = rf"(?<![\d.:/])({_NUMBER}){_COUNT}{_WORDS}[^\w.?!]+{key}\b"
    found = {_literal(m.group(1)) for pattern in (after, before) for m in re.finditer(pattern, context)}
    return found.pop() if len(found) == 1 else None


# Up to three words in one clause between a name and its number ("Monday, Mia read 18", "18 pages on
# Monday"), none that starts another clause or relation ("Monday and 5 more")
_WORDS = r"(?:[^\w.?!]+(?!(?:and|but|or|than|more|less|fewer|as|then)\b)\w+){0,3}?"
# a number that counts the name's quantity, not a difference, factor or share ("5 more", "3 times", "15 %")
_COUNT = r"(?![\d:/]|\.\d| ?%| times| more| less| fewer| as\b)"


def _literal(text: str) -> Fraction:
    if " " in text:
        whole, part = text.split(" ", 1)
        return Fraction(whole) + Fraction(part)
    return Fraction(text)


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
