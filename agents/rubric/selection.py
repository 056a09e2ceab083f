"""Which of two alternatives the question is about: the one its question (or its "only") names.

A story often gives two quantities of one kind for two alternatives — the price last year and this
year, the hours a café is open and the hours Kai works, the city's tax and the state's — and asks
about one of them. Each quantity is labelled by the words of its own clause; two quantities are
alternatives when they are of one kind (one unit, or a count of one noun, or both percentages)
and their labels share a word. When the solution uses one alternative and leaves the other out,
and the question's words (with what follows "only") name the one left out more than the one used,
the solution computes with the wrong alternative.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from agents.rubric.facts import ProblemFacts, show
from agents.verify.units import UNIT_PATTERN, unit

_STOP = {
    "a",
    "an",
    "the",
    "of",
    "to",
    "in",
    "on",
    "at",
    "for",
    "by",
    "with",
    "from",
    "and",
    "or",
    "but",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "it",
    "its",
    "that",
    "these",
    "those",
    "he",
    "she",
    "they",
    "we",
    "you",
    "i",
    "his",
    "her",
    "their",
    "our",
    "your",
    "my",
    "me",
    "him",
    "them",
    "us",
    "has",
    "have",
    "had",
    "do",
    "does",
    "did",
    "will",
    "would",
    "can",
    "could",
    "should",
    "shall",
    "may",
    "might",
    "must",
    "each",
    "every",
    "per",
    "any",
    "some",
    "all",
    "no",
    "not",
    "how",
    "many",
    "much",
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "there",
    "here",
    "than",
    "then",
    "so",
    "as",
    "if",
    "into",
    "out",
    "up",
    "down",
    "over",
    "one",
    "two",
    "more",
    "most",
    "less",
    "few",
    "also",
    "only",
    "just",
    "same",
    "other",
    "another",
    "own",
    "such",
    "very",
    "too",
    "after",
    "before",
    "about",
    "again",
    "once",
    "during",
    "while",
    "until",
    "because",
    "both",
    "between",
    "through",
    "under",
    "above",
    "below",
    "off",
    "total",
    "altogether",
}
_CLAUSE = re.compile(r"[,;:]|\b(?:and|but|while|whereas|which|that|who)\b|(?<=[.?!])\s")
_QUANTITY = re.compile(rf"([$£€])?(\d+(?:\.\d+)?)\s?(%|(?:{UNIT_PATTERN})(?![\w/])|[a-z]+)?")


def _stem(word: str) -> str:
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "is", "us")):
        return word[:-1]
    return word


def _words(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP and len(w) > 2}


@dataclass(frozen=True)
class _Quantity:
    value: Fraction
    kind: str
    label: frozenset[str]
    sentence: int


def _quantities(q: str) -> list[_Quantity]:
    out = []
    for index, sentence in enumerate(re.split(r"(?<=[.?!])\s+", q)):
        if sentence.rstrip().endswith("?"):
            continue
        for clause in _CLAUSE.split(sentence):
            for match in _QUANTITY.finditer(clause):
                currency, number, after = match.groups()
                if re.match(r"\d{1,2}:\d{2}", clause[match.start(2) :]):
                    continue
                if currency:
                    kind = "money"
                elif after == "%":
                    kind = "percent"
                elif after and (u := unit(after)) is not None:
                    kind = u.dimension
                elif after and after not in _STOP:
                    kind = "count:" + _stem(after)
                else:
                    continue
                named = after and not currency and after != "%"  # the counted noun or the unit
                words = _words(clause) - ({_stem(after)} if named else set())
                out.append(_Quantity(Fraction(number), kind, frozenset(words), index))
    return out


def _only(f: ProblemFacts) -> set[str]:
    """What the story restricts itself to: the words after 'only'."""
    words: set[str] = set()
    for only in re.findall(r"\bonly (?:the |in the |for the |on the )?((?:[a-z]+ ){1,3})", f.q.lower()):
        words |= _words(only)
    return words


def _operands(f: ProblemFacts) -> set[Fraction]:
    """The numbers the solution writes, but for those it only states as results ("= 12 weeks")."""
    out = set()
    computed = {v for _, v in f.verification.results}
    for match in re.finditer(r"(?<![\d.])(\d+(?:\.\d+)?)", f.s):
        value = Fraction(match.group(1))
        if value not in computed or not re.search(
            r"=\s*[$£€]?\s*$", f.s[max(0, match.start() - 4) : match.start()]
        ):
            out.add(value)
    return out


def _context(q: str, kind: str) -> set[str]:
    """Words of the story's sentences that state no quantity of ``kind`` (and ask nothing)."""
    words: set[str] = set()
    by_sentence: dict[int, set[str]] = {}
    for quantity in _quantities(q):
        by_sentence.setdefault(quantity.sentence, set()).add(quantity.kind)
    for index, sentence in enumerate(re.split(r"(?<=[.?!])\s+", q)):
        if not sentence.rstrip().endswith("?") and kind not in by_sentence.get(index, set()):
            words |= _words(sentence)
    return words


def wrong_alternative(f: ProblemFacts) -> str:
    """The solution computes with the alternative the question does not ask about."""
    if not f.target or not f.solution.strip():
        return ""
    used = _operands(f)
    computed = {v for _, v in f.verification.results}
    quantities = _quantities(f.q)
    values = [q.value for q in quantities]
    only = _only(f)
    asked_words = _words(f.target) | only
    for taken in quantities:
        if taken.value not in used or taken.value in computed or values.count(taken.value) > 1:
            continue
        for left in quantities:
            if left is taken or left.kind != taken.kind or values.count(left.value) > 1:
                continue
            if left.kind.startswith("count:"):
                continue  # counts are too often parts of one story (1 batch, 3 trays)
            if not taken.label & left.label:
                continue  # not two versions of one thing
            # what is asked: the question's words, what follows 'only', and the story's sentences
            # that state no quantity of this kind ("Omar buys 4 bags on a Monday")
            selectors = asked_words | _context(f.q, taken.kind)
            # what sets each apart from the other; the one used must have a qualifier not asked
            own_taken, own_left = taken.label - left.label, left.label - taken.label
            if not own_taken - selectors:
                continue
            # an unused alternative the question names, or one the story says it is 'only' about
            asked = selectors if left.value not in used else only
            if own_left & asked:
                which = ", ".join(sorted(own_left & asked))
                return (
                    f"the question is about {which}: that is the {show(left.value)}, "
                    f"but the solution uses the {show(taken.value)}"
                )
    return ""


_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_TIME_ASK = re.compile(r"\b(?:time|when|how long|minutes?|hours?|seconds?|late|early|o'clock)\b")


def clock_part_used(f: ProblemFacts) -> str:
    """'It leaves at 9:15 … 512 − 300 − 9': the hour of a time of day is no quantity to compute with
    when nothing asked is about time."""
    clocks = _CLOCK.findall(f.q)
    if not clocks or _TIME_ASK.search(f.target) or _CLOCK.search(f.s):
        return ""
    outside = re.sub(r"\b\d{1,2}:\d{2}\b", " ", f.q)
    stated = {Fraction(n) for n in re.findall(r"(?<![\d.])(\d+(?:\.\d+)?)", outside)}
    parts = {Fraction(p) for clock in clocks for p in clock if int(p)} - stated
    for match in re.finditer(r"(?<![\d.:])(\d+(?:\.\d+)?)(?![\d:])", f.s):
        value = Fraction(match.group(1))
        before, after = f.s[max(0, match.start() - 3) : match.start()], f.s[match.end() : match.end() + 3]
        operand = re.search(r"[-+×÷*/]\s*$", before) or re.match(r"\s*[-+×÷*/]", after)
        if value in parts and operand:
            return f"{show(value)} is part of a time of day in the question, not a quantity to compute with"
    return ""


# "Popcorn costs £4 but Maya does not buy any": a quantity the story then says is not taken
_DECLINED = re.compile(
    r"([$£€]?\d+(?:\.\d+)?)[^.?!]*?\bbut\b[^.?!]*?\b(?:not|n't|never)\b[^.?!]*?"
    r"\b(?:any|it|them|one|those|that|this)\b"
)


def declined_used(f: ProblemFacts) -> str:
    """A price or amount the story says is not taken ('… but she does not buy any') is used."""
    for match in _DECLINED.finditer(f.q):
        value = match.group(1).lstrip("$£€")
        operand = rf"(?<![\d.])[$£€]?{re.escape(value)}(?![\d]|\.\d)"
        if re.search(rf"{operand}\s*[-+×÷*/]|[-+×÷*/]\s*{operand}", f.s):
            return f"the story says the {match.group(1)} is not taken, yet the solution computes with it"
    return ""
