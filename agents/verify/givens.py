"""The givens of a question: each quantity it states, with its number and what it counts or measures.

A revision may reword a story, but a quantity the question gives is its data: "120 musicians" that
becomes "60 musicians" is another problem. :func:`changed_givens` says, in lines a person reads,
which givens changed between two versions of a question ("given '120 musicians' became
'60 musicians'", "given '40 minutes' was removed"), so that a repair can be refused for it and a
trace can show it for any reviser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from fractions import Fraction

from agents.verify.expressions import parse_clock
from agents.verify.text import with_digits
from agents.verify.units import CURRENCY

_QUANTITY = re.compile(
    rf"(?P<cur>{CURRENCY})?\s?"
    r"(?P<num>(?<![\d.:/])\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?|\d+ \d+/\d+|\d+/\d+|\d+(?:\.\d+)?)"
    r"(?![\d:/]|\.\d)(?P<pct>\s?%)?"
    r"(?:[\s-]?(?P<noun>[A-Za-z][A-Za-z²³/]*))?"
)
# Words after a number that are not what it counts: the noun comes after them ("3 more apples",
# "5 of the pens") or there is none ("20 and 30").
_SKIP = frozenset(
    {
        "more",
        "less",
        "fewer",
        "of",
        "and",
        "or",
        "to",
        "the",
        "a",
        "an",
        "each",
        "per",
        "times",
        "as",
        "than",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "other",
        "another",
        "extra",
        "whole",
        "full",
        "equal",
    }
)


@dataclass(frozen=True)
class Given:
    """A quantity the question gives: its value, and its text as written ("120 musicians")."""

    value: Fraction
    text: str
    noun: str  # what it counts or measures ("musicians", "minutes", "$", "%"), "" if nothing says

    @property
    def key(self) -> tuple[Fraction, str]:
        """Two givens are the same when value and noun agree."""
        return (self.value, self.noun)


def givens(question: str) -> list[Given]:
    """Every quantity the question states, in order (number words read as digits)."""
    text = with_digits(question)
    out: list[Given] = []
    for match in _QUANTITY.finditer(text):
        number = match["num"].rstrip(".")  # "9:30 am." ends a sentence
        value = _value(number)
        if value is None:
            continue
        noun = _noun(match, text)
        sign = match["cur"] or ""
        shown = sign + (" " if sign.isalpha() else "") + number + ("%" if match["pct"] else "")
        out.append(Given(value, shown if sign or match["pct"] else f"{shown} {noun}".strip(), noun))
    return out


def _value(number: str) -> Fraction | None:
    if ":" in number:
        return Fraction(parse_clock(number).value)
    whole, _, part = number.partition(" ")
    try:
        return Fraction(whole) + (Fraction(part) if part else 0)
    except (ValueError, ZeroDivisionError):
        return None


def _noun(match: re.Match[str], text: str) -> str:
    """What the number counts: its currency or percent sign, else the first word after it that is
    not a small function word ("3 more apples" → apples)."""
    if match["cur"]:
        return match["cur"]
    if match["pct"]:
        return "%"
    words = re.findall(r"[A-Za-z][A-Za-z²³/]*", text[match.end("num") : match.end("num") + 40])
    for word in words[:3]:
        if word.lower() not in _SKIP:
            return str(word.lower())
    return ""


def changed_givens(before_question: str, after_question: str) -> list[str]:
    """Which givens changed from one version of a question to the next, one line each:
    "given '120 musicians' became '60 musicians'", "given '40 minutes' was removed",
    "given '3 buses' was added". Empty when the revision kept every given."""
    old, new = givens(before_question), givens(after_question)
    matcher = SequenceMatcher(a=[g.key for g in old], b=[g.key for g in new], autojunk=False)
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed, added = old[i1:i2], new[j1:j2]
        for a, b in zip(removed, added, strict=False):
            if a.noun == b.noun:
                lines.append(f"given '{a.text}' became '{b.text}'")
            else:
                lines += [f"given '{a.text}' was removed", f"given '{b.text}' was added"]
        lines += [f"given '{g.text}' was removed" for g in removed[len(added) :]]
        lines += [f"given '{g.text}' was added" for g in added[len(removed) :]]
    return lines
