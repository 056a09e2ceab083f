"""Data that a question states twice over, in two forms that must agree.

A question often gives a whole and then its parts ("a box of 48 pencils contains 20 red, 15 blue and
18 green"), a relation and then the quantities it relates ("twice as many goldfish as guppies … 14
goldfish and 9 guppies"), or all three sides of a right-angled triangle. Each pair is checked
exactly; parts are checked only where the text says they make up the whole (listed right after it,
or with ``contains``, ``the other``, ``the rest``), since "12 play football and 9 play tennis" may
overlap.
"""

from __future__ import annotations

import re
from fractions import Fraction

from agents.rubric.facts import TIMES, show, times_factor
from agents.verify.expressions import NUMBER

_SENTENCES = re.compile(r"(?<=[.?!])\s+")
_NUM = NUMBER  # a whole decimal, never a truncated part of one
# a whole: "all 28 students", "a box of 48 pencils", "a class of 30", "there are 30 pupils in the class"
_WHOLE = re.compile(
    rf"\b(?:all(?: of the)?|(?:box|bag|jar|tin|class|group|team|packet|pack|crate|basket|set|club|bus|"
    rf"school|choir|orchestra|total|herd|flock|farm|garden|library|shelf|collection) of) {_NUM}"
    r"((?: [a-z]+){0,3})"
)
# the parts that make it up: "contains 20 red, 15 blue and 18 green", "12 chose …, 9 chose … and the
# other 9 …", "17 are girls and the rest (13) are boys"
_LIST = re.compile(
    rf"{_NUM}(?: [a-z]+){{0,5}}?,? {_NUM}(?: [a-z]+){{0,5}}?,? (?:and )?"
    rf"(?:(?:the )?(?:other|remaining|rest)(?: [a-z]+)?,? )?{_NUM}\b|"
    rf"{_NUM}(?: [a-z]+){{0,5}}? and (?:the )?(?:other|remaining|rest)(?: [a-z]+)?,? {_NUM}\b"
)
_MAKES_UP = re.compile(
    r"\b(?:contains?|contained|holds?|held|is made up of|are made up of|consists? of|"
    r"(?:the )?(?:other|remaining)|the rest|of them|of these|of whom|of which|split into|divided into)\b"
)
# what would make the numbers no parts: money, measures, times, percentages, "more", "each"
_NOT_PARTS = re.compile(
    r"[$£€%:/]|\b(?:each|every|per|more|fewer|less|times|cm|kg|km|minutes?|hours?|years?)\b"
)


_AFTER_WHOLE = re.compile(
    r"(\d+) ([a-z]+)[^.?!]{0,25}?\b(?:has|have|with|of whom|includes?|are|:)\s+"
    r"(\d+) [a-z]+(?:,? (\d+) [a-z]+)? and (\d+) [a-z]+"
)


# "The 28 pupils each voted once: 15 chose the zoo, 11 the museum and 6 the beach": everyone is
# counted once, so the counts after the colon make the whole.
_EACH_ONCE = re.compile(
    r"\b(\d+) (pupils|students|children|people|members|voters|players|guests|workers|visitors|"
    r"friends|customers|runners|teachers)\b[^.?!:]{0,50}?\beach\b[^.?!:]{0,30}?\b(?:once|one)\b"
    r"[^.?!:]{0,40}:([^.?!]+)"
)


def each_counted_once(q: str) -> str:
    """Counts of a group whose members each chose exactly once add up to the group."""
    for sentence in _SENTENCES.split(q):
        found = _EACH_ONCE.search(sentence)
        if not found or re.search(r"[%$£€]|\b(?:more|fewer|less|both|also|twice)\b", found.group(3)):
            continue
        parts = [Fraction(n) for n in re.findall(r"(?<![\d.])(\d+)(?![\d.])", found.group(3))]
        whole = Fraction(found.group(1))
        rest = re.search(r"\b(?:rest|remaining|others?|everyone else)\b", found.group(3))
        total = sum(parts, Fraction(0))
        if len(parts) >= 2 and (total > whole if rest else total != whole):
            return (
                f"each of the {show(whole)} {found.group(2)} is counted once, yet the counts "
                f"({' + '.join(show(p) for p in parts)}) make {show(total)}"
            )
    return ""


def parts_after_whole(q: str) -> str:
    """ "30 pupils: 17 girls and 15 boys", "a class of 28 with 12 boys and 16 girls": the parts listed
    right after a whole add up to it."""
    if found := each_counted_once(q):
        return found
    for sentence in _SENTENCES.split(q):
        match = _AFTER_WHOLE.search(sentence)
        if match and not re.search(
            r"\b(?:the rest|remaining|the others?|everyone else)\b", sentence[match.end() :]
        ):
            whole, *parts = (
                int(x) for x in (match.group(1), match.group(3), match.group(4) or 0, match.group(5))
            )
            if sum(parts) != whole:
                return (
                    f"the parts ({' + '.join(str(p) for p in parts if p)} = {sum(parts)}) "
                    f"do not make the whole ({whole})"
                )
    return ""


def listed_parts(q: str) -> str:
    """Parts that the text says make up a whole add up to it."""
    sentences = _SENTENCES.split(q)
    for i, sentence in enumerate(sentences):
        whole = _WHOLE.search(sentence)
        if not whole:
            continue
        total = Fraction(whole.group(1))
        for text in (sentence[whole.end() :], *sentences[i + 1 : i + 2]):
            listed = _LIST.search(text)
            said = f"{sentence[whole.start() :]} {text}"  # "a box of 48 pencils contains …"
            if not listed or not _MAKES_UP.search(said) or _NOT_PARTS.search(listed.group(0)):
                continue
            parts = [Fraction(x) for x in listed.groups() if x]
            if sum(parts, Fraction(0)) != total and all(p < total for p in parts):
                return (
                    f"the parts ({' + '.join(show(p) for p in parts)} = {show(sum(parts, Fraction(0)))}) "
                    f"do not make the whole ({show(total)})"
                )
            break
    return ""


_RIGHT = re.compile(r"\bright[- ]angled?\b|\bright triangle\b")
_LENGTH = re.compile(r"(\d+(?:\.\d+)?) ?(mm|cm|m|km)\b(?![²³/])")


def right_triangle(q: str) -> str:
    """A right-angled triangle's three sides satisfy Pythagoras (the longest is the hypotenuse)."""
    for sentence in _SENTENCES.split(q):
        if not _RIGHT.search(sentence) or re.search(r"\b(?:area|perimeter) (?:is|of)\b.*\d", sentence):
            continue
        lengths = _LENGTH.findall(sentence)
        if len(lengths) != 3 or len({u for _, u in lengths}) != 1:
            continue
        a, b, c = sorted(Fraction(x) for x, _ in lengths)
        if a * a + b * b != c * c:
            return (
                f"a right-angled triangle with shorter sides {show(a)} and {show(b)} has a longest side "
                f"of √{show(a * a + b * b)}, not {show(c)}"
            )
    return ""


_TIMES_AS = re.compile(rf"\b{TIMES} as many ([a-z]+) as (?:there are )?([a-z]+)\b")


def times_as_many_stated(q: str) -> str:
    """ "Twice as many goldfish as guppies" agrees with the counts the question then gives."""
    relation = _TIMES_AS.search(q)
    if not relation:
        return ""
    said, first, second = relation.group(1), relation.group(3), relation.group(4)
    factor = times_factor(said)
    rest = q[relation.end() :]
    a = re.search(rf"\b{_NUM} {re.escape(first)}\b", rest)
    b = re.search(rf"\b{_NUM} {re.escape(second)}\b", rest)
    if not a or not b:
        return ""
    x, y = Fraction(a.group(1)), Fraction(b.group(1))
    if x != factor * y:
        return f"{show(x)} {first} are not {said} as many as {show(y)} {second}"
    return ""
