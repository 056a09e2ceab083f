"""How big everyday things are: a quantity a question gives a thing, against what the world allows.

A table of common things (animals, people, food, objects, vehicles, containers) with the range of
mass, length, speed and capacity each can have, far wider than the usual (a cat of 0.3-15 kg, an
apple under 1 kg, a mug under 1 litre), and the counts fixed by nature or by definition (a spider's
8 legs, a triangle's 3 sides). A quantity belongs to a thing when the sentence says so: "a 48 kg
cat", "the cat weighs 48 kg", "a pencil 2 m long", "a mug holds 20 litres", "a spider has 10 legs".
A quantity of something else in the same sentence ("a 2 kg bag of apples") is not the thing's.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cache

from agents.rubric.facts import ProblemFacts
from agents.rubric.world_table import named_ranges
from agents.verify.units import UNIT_PATTERN, unit

F = Fraction
# thing (regex of its noun, singular or plural) → {dimension: (least, most)} in base units
# (g, m, litres, m/s), from the one world table. Generous bounds: only what no such thing can be.
_THINGS = named_ranges()
_DIMENSION = {"mass": "mass", "length": "length", "speed": "speed", "volume": "volume"}
_QTY = rf"(\d+(?:\.\d+)?)[ -]?({UNIT_PATTERN})(?![\w/²³])"
# the thing's own measure: "weighs 48 kg", "is 2 m long/tall", "holds 20 litres", "runs at 30 km/h"
_VERB = (
    r"(?:'s? \w+ )?(?:weighs?|weighed|weighing|has a mass of|is|was|are|were|stands?|measures?|grows? to|"
    r"holds?|can hold|held|has a capacity of|(?:runs?|walks?|swims?|flies|fly|drives?|rides?|travels?|"
    r"moves?|crawls?|sails?|goes|gallops?) at(?: a (?:top |steady |average )?speed of)?)"
)


# after the quantity: a distance to somewhere or a difference, not the thing's own measure
_RELATIVE = re.compile(
    r"\s*(?:away|from|to|ahead|behind|apart|above|below|under|over|into|across|along|\w+er\b|"
    r"more|less|fewer)\b"
)


def _sentences(q: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.?!])\s+|;\s*", q.lower()) if s]


def _in_base(number: str, name: str, dimension: str) -> Fraction | None:
    found = unit(name)
    if found is None or found.dimension != _DIMENSION[dimension]:
        return None
    return Fraction(number) * found.scale


def _out_of_range(value: Fraction, bounds: tuple[Fraction, Fraction]) -> bool:
    return not bounds[0] <= value <= bounds[1]


@cache
def _named(noun: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{noun})\b")


@cache
def _measured(noun: str) -> tuple[tuple[re.Pattern[str], int], ...]:
    """A thing's two measure patterns (each holds every unit name: compiled once, and only for a
    thing a sentence names, as compiling all of them would cost every start)."""
    # "a 48 kg cat", "a 480-litre mug" (the measure right before the noun)
    attributive = rf"\b(?:a|an|one|the|his|her|their|my|our) {_QTY} (?:[a-z]+ )?({noun})\b(?! of\b)"
    # "the cat weighs 48 kg", "Mia's dog is 3 m tall"
    predicate = (
        rf"\b({noun})\b(?: (?:now|only|also|usually|still|can|could))? {_VERB} "
        rf"(?:about |only |exactly |nearly )?{_QTY}"
    )
    return (re.compile(attributive), 1), (re.compile(predicate), 2)


def thing_measures(q: str) -> str:
    """A thing given a mass, a length, a speed or a capacity that no such thing has."""
    for sentence in _sentences(q):
        if not re.search(r"\d", sentence):
            continue  # every measure is a number
        for noun, ranges in _THINGS:
            if not _named(noun).search(sentence):
                continue  # both patterns hold the noun as a word
            for dimension, bounds in ranges.items():
                for pattern, first in _measured(noun):
                    for match in pattern.finditer(sentence):
                        number, name = match.group(first), match.group(first + 1)
                        tail = sentence[match.end() : match.end() + 12]
                        if first == 2 and (
                            _RELATIVE.match(tail) or re.search(r"\bof (?:\d+ )?$", sentence[: match.start()])
                        ):
                            continue  # "3 km from home", "38 cm taller", "a bag of apples weighs 2 kg"
                        value = _in_base(number, name, dimension)
                        if value is not None and _out_of_range(value, bounds):
                            thing = match.group(3 if first == 1 else 1)
                            return f"{number} {name} is not possible for {_article(thing)}"
    return ""


def _article(noun: str) -> str:
    if noun.endswith("s"):
        return noun
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


# counts fixed by nature or by definition
_FIXED: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    (r"spiders?", r"legs?", (8,)),
    (r"ants?|bees?|beetles?|insects?|flies|butterfl(?:y|ies)|ladybirds?|grasshoppers?", r"legs?", (6,)),
    (r"dogs?|cats?|cows?|horses?|sheep|goats?|pigs?|lions?|tigers?|elephants?|rabbits?", r"legs?", (4,)),
    (
        r"hens?|chickens?|ducks?|birds?|geese|goose|ostrich(?:es)?|people|persons?|children|pupils?",
        r"legs?",
        (2,),
    ),
    (r"octopus(?:es)?|octopi", r"arms?|legs?|tentacles?", (8,)),
    (r"triangles?", r"sides?|corners?|vertices|angles?", (3,)),
    (
        r"squares?|rectangles?|quadrilaterals?|parallelograms?|rhombus(?:es)?|trapezi\w+",
        r"sides?|corners?|vertices|angles?",
        (4,),
    ),
    (r"pentagons?", r"sides?|corners?|vertices|angles?", (5,)),
    (r"hexagons?", r"sides?|corners?|vertices|angles?", (6,)),
    (r"octagons?", r"sides?|corners?|vertices|angles?", (8,)),
    (r"cubes?|dice|die", r"faces?|sides?", (6,)),
    (r"bicycles?|bikes?", r"wheels?", (2,)),
    (r"tricycles?", r"wheels?", (3,)),
    (r"hands?", r"fingers?", (4, 5)),
    (r"weeks?", r"days?", (7,)),
    (r"months?", r"days?", (28, 29, 30, 31)),
    (r"years?", r"months?", (12,)),
    (r"years?", r"weeks?", (52,)),
    (r"days?", r"hours?", (24,)),
    (r"hours?", r"minutes?", (60,)),
    (r"minutes?", r"seconds?", (60,)),
    (r"dozens?", r"(?:eggs?|items?|things?)", (12,)),
)


def fixed_counts(q: str) -> str:
    """A spider with 10 legs, a triangle with 4 sides, a week of 8 days."""
    for sentence in _sentences(q):
        if not re.search(r"\d", sentence):
            continue  # every count is a number
        for thing, part, allowed in _FIXED:
            pattern = (
                rf"\b(?:a|an|each|every|one|the|this|that) (?:[a-z]+ )?({thing}) (?:has|have|had|with|of) "
                rf"(?:exactly |only |just )?(\d+)(?!\.\d) ([a-z]+ )?({part})\b"
            )
            for match in re.finditer(pattern, sentence):
                count, qualified = int(match.group(2)), bool(match.group(3))
                # "a week of 5 school days" counts some of them: only more than all is impossible
                if (count > max(allowed)) if qualified else (count not in allowed):
                    said = " or ".join(str(n) for n in allowed)
                    return f"{_article(match.group(1))} has {said} {match.group(4).rstrip('s')}s, not {count}"
    return ""


# what a person or a vehicle can do: (pattern with the number first, most, what)
_ABILITY: tuple[tuple[str, Fraction, str], ...] = (
    (
        r"\bswim(?:s|mer|mers|ming)?\b[^.?!]{0,20}?\bat (?:a speed of )?(\d+(?:\.\d+)?) ?km/h",
        F(10),
        "km/h swimming",
    ),
    (r"\breads? (\d+(?:\.\d+)?) pages? (?:a|per|each|every) minute", F(10), "pages read a minute"),
    (r"\btypes? (\d+(?:\.\d+)?) words? (?:a|per|each|every) minute", F(250), "words typed a minute"),
    (
        r"\b(?:bus|coach)(?:es)?\b[^.?!]{0,25}?\b(?:carries|carry|holds|seats|takes) (\d+)(?!\.?\d)",
        F(150),
        "people on a bus",
    ),
    (
        r"\bminibus(?:es)?\b[^.?!]{0,25}?\b(?:carries|carry|holds|seats|takes) (\d+)(?!\.?\d)",
        F(25),
        "people in a minibus",
    ),
)
# a person's own temperature (a fever, a body): about 25-45 °C
_BODY = re.compile(
    r"\b(?:body temperature|fever|(?:his|her|their|my|your|[a-z]+'s) temperature)\b[^.?!]{0,25}?"
    r"(-?\d+(?:\.\d+)?) ?°\s?c"
)


def abilities(q: str) -> str:
    """A swimmer at 40 km/h, 500 pages read a minute, a bus carrying 400, a fever of 52 °C."""
    text = q.lower()
    for pattern, most, what in _ABILITY:
        for number in re.findall(pattern, text):
            if Fraction(number) > most:
                return f"{number} {what} is beyond what anyone (or any such vehicle) can do (at most {most})"
    for number in _BODY.findall(text):
        if not 25 <= Fraction(number) <= 45:
            return (
                f"a person's temperature of {number} °C is impossible (it stays between about 35 and 42 °C)"
            )
    return ""


# an elder and at least how many years older than the child named
_ELDERS = (
    (r"mother|father|mum|mom|dad|parent", 12),
    (r"grandmother|grandfather|grandma|grandpa|granny|grandad|grandparent", 30),
)


def elder_too_young(question: str) -> str:
    """'Nadia's mother is 25 and Nadia is 30': a parent is older than the child by many years."""
    for elders, gap in _ELDERS:
        pattern = rf"\b([A-Z][a-z]+)'s ({elders})\b (?:is|was) (\d+)(?!\.\d)\b(?! times)"
        for name, elder, age in re.findall(pattern, question):
            child = re.search(rf"\b{name} (?:is|was) (\d+)(?!\.\d)\b(?! times)", question)
            if child and int(age) < int(child.group(1)) + gap:
                return f"{name}'s {elder} cannot be {age} when {name} is {child.group(1)}"
        # "Lily is 2 years old and her mother, Nina, is 10": the child's age, then the elder's
        said = (
            rf"\b([A-Z][a-z]+) is (\d+)(?: years? old)?\b[^.?!]*?\b(?:[Hh]is|[Hh]er) ({elders})"
            r"(?:,? [A-Z][a-z]+,?)? is (\d+)\b"
        )
        for name, child_age, elder, age in re.findall(said, question):
            if int(age) < int(child_age) + gap:
                return f"{name}'s {elder} cannot be {age} when {name} is {child_age}"
        # "His mother is 4 years older than he is": a difference of ages too small for an elder
        older = (
            rf"\b(?:[A-Z][a-z]+'s|[Hh]is|[Hh]er|[Tt]heir) ({elders})(?:,? [A-Z][a-z]+,?)? (?:is|was) "
            r"(?:only |just )?(\d+) years? older\b"
        )
        for elder, years in re.findall(older, question):
            if int(years) < gap:
                return f"a {elder} cannot be only {years} years older than the child"
    return ""


def below_absolute_zero(question: str) -> str:
    """Nothing is colder than absolute zero, −273.15 °C."""
    for number in re.findall(r"(?:−|-|minus )(\d+(?:\.\d+)?) ?°? ?C\b", question):
        if Fraction(number) > Fraction(27315, 100):
            return f"−{number} °C is below absolute zero (−273.15 °C): nothing is that cold"
    return ""


def impossible_thing(f: ProblemFacts) -> str:
    """Any of the above, read from the question."""
    return (
        thing_measures(f.q)
        or fixed_counts(f.q)
        or abilities(f.q)
        or elder_too_young(f.q)
        or below_absolute_zero(f.question)
    )
