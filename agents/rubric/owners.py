"""Whose quantity is it: numbers that belong to someone the question does not ask about.

A story often gives a second person their own numbers — a neighbour's tomato plants, a sister's
book bought with her own money, a friend's pens that the friend pays for — and asks about the
first person only. A solution that puts the other person's number into its working answers a
question nobody asked.

Each clause of the story (sentences split at ", and", "but", "while", ";" and relative "who") is
owned by the person it opens with: a name ("Mr Okafor", "Ana"), or a relative of someone ("his
sister Ana", "her brother"). A number in a clause owned by P is P's. The check reports P's number
in the solution's working only when the story keeps P apart from the asked person Q, which it takes
as certain only when all of these hold:

- the question names Q and nobody else, and asks nothing about a group ("together", "both",
  "altogether", "in all", "they", "more … than", a difference);
- no sentence names both P and Q (a gift, a loan, a comparison or a shared job ties them);
- no sentence about Q relates its number to another's ("twice as many", "5 more than", "the
  same", "half as much"), nor says Q is given, lent, sent or paid something by anyone;
- the same value is not also given in a clause that is not P's.

A clause that opens with a pronoun ("he", "she", "they") is nobody's here: the pronoun may be Q.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from agents.rubric.facts import ProblemFacts, show

_RELATIVE = (
    r"(?:brother|sister|friend|neighbou?r|cousin|mother|father|mum|mom|dad|aunt|uncle|grandma|grandpa|"
    r"grandmother|grandfather|son|daughter|wife|husband|partner|classmate|teammate|colleague|"
    r"flatmate|roommate|boss)"
)
# Capitalised words that open a sentence or name a day, month or title, never a person of the story.
NOT_NAMES = frozenset(
    re.findall(
        r"\w+",
        "A An The On In At This That These Those Last Next Every Each Then After Before When While If "
        "Her His Their She He They It We You I How What Which Who Why Where Find Calculate Work Show "
        "Give Also And But So Now Later Today Yesterday Tomorrow Some All Both One Two Three Four Five "
        "Six Seven Eight Nine Ten Monday Tuesday Wednesday Thursday Friday Saturday Sunday January "
        "February March April May June July August September October November December Mr Mrs Ms Dr "
        "Miss Farmer Class Year Grade Team Room Step Part There Here During Over From To For With By "
        "Of Only Just Once Twice Half Most Many Much Several Everyone Nobody Total Altogether Check Answer",
    )
)
_NAME = r"\b(?:(?:Mr|Mrs|Ms|Dr|Miss)\.? )?[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
# The person a clause opens with: an optional opening phrase ("On Saturday", "This week,"), then a
# relative of someone (with the relative's name, if given), or a name. Names are case-sensitive.
_OPENING = re.compile(
    r"^(?i:(?:on|in|at|this|last|next|every|each|then|later|after that|today|yesterday|meanwhile|also)"
    r"\b[^,]{0,25}?,?\s+)?"
    rf"(?:(?P<rel>(?i:his|her|their)|[A-Z][a-z]+'s) (?:older |younger |little |big |best |twin )?"
    rf"(?P<kin>{_RELATIVE})(?:,? (?P<relname>{_NAME}),?)?|(?P<name>{_NAME}))(?=[\s,'])"
)
_CLAUSE = re.compile(r"(;|,? (?:and|but|while|whereas) (?=\S)|, who\b)")
# What ties Q's numbers to somebody else's.
_RELATION = re.compile(
    r"\bthan\b|\bas (?:many|much|long|far|old|tall|big|heavy|often)\b|\btwice\b|\bhalf\b|\bdouble[sd]?\b|"
    r"\btriple[sd]?\b|\btimes (?:as|more|fewer|less)\b|\bthe same\b|\bshares?\b|\bshared\b|\bsplits?\b|"
    r"\b\d+/\d+ of\b|\btogether\b|\bjoins?\b|\bjoined\b|\bhelps?\b|\bhelped\b|\bwith (?:him|her|them)\b",
    re.I,
)
_COMPARED = re.compile(
    r"\b(?:older|younger|taller|shorter|heavier|lighter|more|fewer|less|faster|slower|longer|bigger|"
    r"smaller|cheaper|dearer|richer|further|farther)\b",
    re.I,
)
_THEM = re.compile(r"\b(?:them|these|those)\b", re.I)
# Somebody gives, lends or pays something to a person the pronoun may stand for (the asked one).
_OBJECT = r"(?:him|her(?=\s*(?:[.,;!?]|$|a\b|an\b|the\b|some\b|\d|[$£€])))"
_RECEIVES = re.compile(
    r"\b(?:gives?|gave|lends?|lent|sends?|sent|pays?|paid|hands?|handed|owes?|owed|buys?|bought|makes?|"
    rf"made|brings?|brought|offers?|offered)\b[^.;]{{0,30}}?\b{_OBJECT}|\b(?:to|for|from) {_OBJECT}",
    re.I,
)
_GROUP_ASK = re.compile(
    r"\b(?:together|both|altogether|in all|combined|between them|each of them|they|their|them|we|"
    r"more|fewer|less|than|difference|compared?|family|everyone|each person|each child)\b"
)
# Words in P's clause that point back at something already in the story ("eats 5 of them", "adds $4
# to her savings"): P acts on another's things. "Her own", "herself" and paying "with her pocket
# money" say the opposite.
_BACK = re.compile(r"\b(?:them|it|these|those|(?:his|her|their) (?!own\b)\w+)\b", re.I)
_OWN = re.compile(
    r"\b(?:(?:his|her|their) own|himself|herself|themselves|"
    r"with (?:his|her|their) (?:own )?(?:pocket )?money)\b",
    re.I,
)
_NUMBER = re.compile(r"(?<![\w.,/:])(\d+(?:\.\d+)?)(?![\d:/]|\.\d)")
_OPERAND = re.compile(
    r"(?<![\w.])[$£€]?(\d+(?:\.\d+)?)\s?(?:[a-z]{1,3}\b\s?)?(?=[-+×x*÷/−])|"
    r"[-+×*÷/−]\s?\(?[$£€]?(\d+(?:\.\d+)?)(?![\d.])"
)


@dataclass(frozen=True)
class _Clause:
    owner: str  # a name, a relative ("her brother"), or "" for a clause nobody owns here
    sentence: int
    text: str
    rest: str  # the clause after the person it opens with


def _known_names(text: str) -> set[str]:
    """Capitalised words that are names: said after a sentence's first word, or after a title.
    "Tickets cost $9" opens a sentence with a capital and names nobody."""
    found = set()
    for sentence in re.split(r"(?<=[.?!])\s+", text):
        for match in re.finditer(_NAME, sentence):
            word = match.group(0)
            if word.split()[-1] in NOT_NAMES:
                continue
            if match.start() > 0 or " " in word:
                found.add(word.split()[-1])
    return found


def _owner(text: str, names: set[str]) -> tuple[str, str]:
    """The person a clause opens with, and the rest of the clause."""
    opening = _OPENING.match(text)
    if not opening:
        return "", text
    name = opening.group("relname") or opening.group("name") or ""
    if name:
        return (name if name.split()[-1] in names else ""), text[opening.end() :]
    return f"{opening.group('rel').lower()} {opening.group('kin').lower()}", text[opening.end() :]


def _last_person(text: str, names: set[str]) -> str:
    """The person a relative "who" stands for: the last one the clause before it mentions."""
    people = [
        (m.start(), f"{m.group(1).lower()} {m.group(2).lower()}")
        for m in re.finditer(rf"\b((?i:his|her|their|an?)) ({_RELATIVE})\b", text)
    ]
    people += [(m.start(), m.group(0)) for m in re.finditer(_NAME, text) if m.group(0) in names]
    return max(people)[1] if people else ""


def _clauses(story: list[str], names: set[str]) -> list[_Clause]:
    out = []
    for index, sentence in enumerate(story):
        pieces = _CLAUSE.split(sentence)
        previous = ""
        for position in range(0, len(pieces), 2):
            text = pieces[position].strip(" ,.")
            joint = pieces[position - 1] if position else ""
            if joint.strip().endswith("who"):
                owner, rest = _last_person(previous, names), text
            else:
                owner, rest = _owner(text, names)
            if text:
                out.append(_Clause(owner, index, text, rest))
            previous = text
    return out


def _asked(f: ProblemFacts, names: set[str]) -> str:
    """The one person the question asks about, or "" when it names none, several, or a group."""
    if not f.questions:
        return ""
    asked = {m.group(0).split()[-1] for m in re.finditer(_NAME, f.questions[-1])} & names
    if len(asked) != 1 or _GROUP_ASK.search(f.target) or re.search(rf"\b{_RELATIVE}", f.target):
        return ""
    return next(iter(asked))


def _mentions(text: str, person: str) -> bool:
    return re.search(rf"\b{re.escape(person)}\b", text, re.I) is not None


def _is(owner: str, person: str) -> bool:
    """The owner of a clause is the person asked about: "Mr Okafor" is the "Okafor" a question names."""
    return bool(owner) and owner.split()[-1] == person


def foreign_quantity(f: ProblemFacts) -> str:
    """A number that belongs to a person kept apart from the one asked about, used in the working."""
    if not f.s.strip():
        return ""
    names = _known_names(f.q + " " + f.s)
    asked = _asked(f, names)
    if not asked:
        return ""
    story = f.story_sentences
    clauses = _clauses(story, names)
    if any(
        _RELATION.search(c.text) or _COMPARED.search(c.text) or _THEM.search(c.rest)
        for c in clauses
        if _is(c.owner, asked) or _mentions(c.text, asked)
    ):
        return ""  # the asked person's numbers are said against another's, or use another's things
    if any(_RECEIVES.search(c.text) for c in clauses if not _is(c.owner, asked)):
        return ""
    if any(_mentions(c.text, asked) for c in clauses if not _is(c.owner, asked)):
        return ""  # the asked person is given something, or compared: the story ties them
    theirs: dict[Fraction, str] = {}
    elsewhere: set[Fraction] = set()
    for clause in clauses:
        owner = clause.owner
        apart = bool(owner) and not _is(owner, asked) and not _RELATION.search(clause.text)
        apart = apart and (not _BACK.search(clause.rest) or bool(_OWN.search(clause.rest)))
        apart = apart and not any(_mentions(s, owner) and _mentions(s, asked) for s in story)
        for match in _NUMBER.finditer(clause.text):
            value = Fraction(match.group(1))
            if apart:
                theirs.setdefault(value, owner)
            else:
                elsewhere.add(value)
    used = {Fraction(a or b) for a, b in _OPERAND.findall(f.s.replace(",", ""))}
    for value, owner in theirs.items():
        if value in elsewhere or value in (0, 1) or value not in used:
            continue
        return (
            f"{show(value)} belongs to {owner}, but the question asks about {asked} only; "
            "the solution uses it"
        )
    return ""
