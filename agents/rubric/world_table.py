"""One table of what the world allows: how heavy, long, tall, fast or large a thing can be, with the
unit of each bound and its source.

Two readers of the screen read it (agents.rubric.detectors for a sentence *said of* a subject, "the
farmer carries 400 kg"; agents.rubric.magnitudes for a measure *named* on the thing, "a 48 kg cat"):
each row says which reads it. Generous bounds: only what no such thing can be.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from agents.verify.units import unit

F = Fraction
Reader = Literal["said", "named"]
_ZERO = Fraction(0)
_ESTIMATE = "the screen's generous estimate: what no such thing can be"
# Where the two readers disagreed, the row says so and why the value it keeps was chosen.
_PERSON_MASS = (
    "300 kg, the thing reader's bound for adults; the sentence reader had 250 kg: merged to one "
    "value (no labelled version gives a person 250-300 kg, so every shipped figure is unchanged)"
)
_CHILD_HEIGHT = "disagrees: the sentence reader's person (a child too) allows 2.5 m; kept apart, unmeasured"


@dataclass(frozen=True)
class Limit:
    """The bounds of one measure of a thing: ``least`` to ``most``, in ``unit``."""

    thing: str
    nouns: str  # a regular expression of the words that name it
    dimension: Literal["mass", "length", "height", "speed", "volume"]
    most: Fraction
    unit: str
    least: Fraction = _ZERO
    reader: Reader = "said"
    source: str = _ESTIMATE

    def in_base(self, value: Fraction) -> Fraction:
        """A value in this row's unit, in the unit's base unit (g, m, m/s, litres)."""
        found = unit(self.unit)
        assert found is not None, self.unit
        return value * found.scale


WORLD: tuple[Limit, ...] = (
    Limit("a snail or a worm", "snail|slug|worm|caterpillar", "speed", F(1, 10), "m/s", reader="said"),
    Limit("a tortoise", "tortoise|turtle", "speed", F(18, 5), "km/h", reader="said"),
    Limit("a small pet", "goldfish|hamster|mouse|budgie|gerbil", "mass", F(1), "kg", reader="said"),
    Limit("a small pet", "kitten|guinea pig", "mass", F(5), "kg", reader="said"),
    Limit("this animal", "cat|rabbit|hen|chicken|parrot|duck", "mass", F(15), "kg", reader="said"),
    Limit("this animal", "dog|puppy|goat|sheep|lamb|pig", "mass", F(120), "kg", reader="said"),
    Limit(
        "a bag a pupil carries",
        "backpack|schoolbag|school bag|rucksack|satchel|pencil case|lunch ?box",
        "mass",
        F(25),
        "kg",
        reader="said",
    ),
    Limit("a small child", "baby|toddler", "mass", F(20), "kg", reader="said"),
    Limit(
        "a person",
        "child|boy|girl|pupil|student|kid|adult|man|woman|person|teacher|dad|father|mum|mom|mother|grandad|grandpa|grandfather|grandma|granny|grandmother|uncle|aunt|brother|sister|son|daughter|mr|mrs|ms|miss|player|athlete|coach|nurse|doctor|baker|farmer|driver|teenager",
        "mass",
        F(300),
        "kg",
        reader="said",
        source=_PERSON_MASS,
    ),
    Limit(
        "a person's height",
        "child|boy|girl|pupil|student|kid|adult|man|woman|person|teacher|dad|father|mum|mom|mother|grandad|grandpa|grandfather|grandma|granny|grandmother|uncle|aunt|brother|sister|son|daughter|mr|mrs|ms|miss|player|athlete|coach|nurse|doctor|baker|farmer|driver",
        "height",
        F(5, 2),
        "m",
        reader="said",
    ),
    Limit(
        "a room's height",
        "classroom|room|kitchen|bedroom|(?<!mr )(?<!mrs )(?<!ms )(?<!dr )hall|office|house",
        "length",
        F(12),
        "m",
        reader="said",
    ),
    Limit("this animal's height", "giraffe|elephant|horse|camel", "height", F(7), "m", reader="said"),
    Limit("this animal's size", "dog|cat|sheep|goat|pig|rabbit", "length", F(3, 2), "m", reader="said"),
    Limit("a tree", "tree", "length", F(120), "m", reader="said"),
    Limit("this piece of furniture", "door|desk|chair|wardrobe|sofa", "length", F(4), "m", reader="said"),
    Limit(
        "a walker", "walk(?:s|ed|ing)?|walker|hik(?:e|es|ed|er|ing)", "speed", F(12), "km/h", reader="said"
    ),
    Limit("a runner", "run(?:s|ning)?|runner|jog(?:s|ger|ging)?", "speed", F(45), "km/h", reader="said"),
    Limit(
        "a cyclist",
        "cycl(?:e|es|ed|ist|ing)|bike|bicycle|rides? (?:her|his) bike",
        "speed",
        F(80),
        "km/h",
        reader="said",
    ),
    Limit(
        "a bus or lorry", "bus|coach|minibus|van|lorry|truck|tractor", "speed", F(160), "km/h", reader="said"
    ),
    Limit("a road vehicle", "car|taxi", "speed", F(300), "km/h", reader="said"),
    Limit("a train", "train", "speed", F(600), "km/h", reader="said"),
    Limit(
        "a car's fuel tank",
        "fuel tank|petrol tank|tank of (?:a|the|his|her) car|car's (?:fuel |petrol )?tank",
        "volume",
        F(150),
        "l",
        reader="said",
    ),
    Limit("cats", "(?:house )?cats?|kittens?", "mass", F(15), "kg", least=F(1, 10), reader="named"),
    Limit("cats", "(?:house )?cats?|kittens?", "length", F(3, 2), "m", least=F(1, 10), reader="named"),
    Limit("dogs", "dogs?|puppy|puppies", "mass", F(120), "kg", least=F(3, 10), reader="named"),
    Limit("dogs", "dogs?|puppy|puppies", "length", F(2), "m", least=F(1, 10), reader="named"),
    Limit(
        "hamsters",
        "hamsters?|mice|mouse|gerbils?|goldfish",
        "mass",
        F(1),
        "kg",
        least=F(1, 200),
        reader="named",
    ),
    Limit(
        "hamsters",
        "hamsters?|mice|mouse|gerbils?|goldfish",
        "length",
        F(40),
        "cm",
        least=F(2),
        reader="named",
    ),
    Limit("rabbits", "rabbits?|guinea pigs?", "mass", F(15), "kg", least=F(1, 10), reader="named"),
    Limit("hens", "hens?|chickens?|ducks?|parrots?", "mass", F(8), "kg", least=F(1, 10), reader="named"),
    Limit("horses", "horses?|cows?|camels?", "mass", F(1500), "kg", least=F(20), reader="named"),
    Limit("horses", "horses?|cows?|camels?", "speed", F(90), "km/h", least=F(0), reader="named"),
    Limit("elephants", "elephants?", "mass", F(12000), "kg", least=F(50), reader="named"),
    Limit("sheep", "sheep|goats?|(?<!guinea )pigs?", "mass", F(400), "kg", least=F(2), reader="named"),
    Limit("babies", "babies|baby|newborns?", "mass", F(20), "kg", least=F(3, 10), reader="named"),
    Limit("babies", "babies|baby|newborns?", "length", F(6, 5), "m", least=F(1, 5), reader="named"),
    Limit(
        "men",
        "men|man|women|woman|adults?|teachers?|dads?|fathers?|mums?|moms?|mothers?|grandmas?|grandpas?",
        "mass",
        F(300),
        "kg",
        least=F(20),
        reader="named",
    ),
    Limit(
        "men",
        "men|man|women|woman|adults?|teachers?|dads?|fathers?|mums?|moms?|mothers?|grandmas?|grandpas?",
        "length",
        F(5, 2),
        "m",
        least=F(1, 2),
        reader="named",
    ),
    Limit(
        "men",
        "men|man|women|woman|adults?|teachers?|dads?|fathers?|mums?|moms?|mothers?|grandmas?|grandpas?",
        "speed",
        F(45),
        "km/h",
        least=F(0),
        reader="named",
    ),
    Limit(
        "boys",
        "boys?|girls?|pupils?|children|child|kids?|students?",
        "mass",
        F(200),
        "kg",
        least=F(2),
        reader="named",
    ),
    Limit(
        "boys",
        "boys?|girls?|pupils?|children|child|kids?|students?",
        "length",
        F(23, 10),
        "m",
        least=F(2, 5),
        reader="named",
        source=_CHILD_HEIGHT,
    ),
    Limit(
        "boys",
        "boys?|girls?|pupils?|children|child|kids?|students?",
        "speed",
        F(45),
        "km/h",
        least=F(0),
        reader="named",
    ),
    Limit(
        "apples",
        "apples?|oranges?|pears?|bananas?|lemons?|peach(?:es)?|tomato(?:es)?|potato(?:es)?",
        "mass",
        F(1),
        "kg",
        least=F(1, 200),
        reader="named",
    ),
    Limit("eggs", "eggs?", "mass", F(2), "kg", least=F(1, 2000), reader="named"),
    Limit(
        "grapes",
        "grapes?|strawberr(?:y|ies)|cherr(?:y|ies)|peas?|sweets?|beans?",
        "mass",
        F(100),
        "g",
        least=F(1, 10),
        reader="named",
    ),
    Limit(
        "pencils", "pencils?|pens?|crayons?|felt[- ]tips?", "mass", F(200), "g", least=F(1), reader="named"
    ),
    Limit(
        "pencils", "pencils?|pens?|crayons?|felt[- ]tips?", "length", F(50), "cm", least=F(2), reader="named"
    ),
    Limit("coins", "coins?", "mass", F(100), "g", least=F(1, 2), reader="named"),
    Limit("phones", "(?:mobile )?phones?", "mass", F(2), "kg", least=F(1, 20), reader="named"),
    Limit("phones", "(?:mobile )?phones?", "length", F(40), "cm", least=F(5), reader="named"),
    Limit("laptops", "laptops?", "mass", F(8), "kg", least=F(3, 10), reader="named"),
    Limit("books", "books?|novels?|dictionar(?:y|ies)", "mass", F(8), "kg", least=F(1, 50), reader="named"),
    Limit("bicycles", "bicycles?|bikes?", "mass", F(50), "kg", least=F(2), reader="named"),
    Limit("bicycles", "bicycles?|bikes?", "speed", F(80), "km/h", least=F(0), reader="named"),
    Limit("cars", "cars?|taxis?", "mass", F(6000), "kg", least=F(300), reader="named"),
    Limit("cars", "cars?|taxis?", "length", F(8), "m", least=F(2), reader="named"),
    Limit(
        "buses",
        "buses|bus|coaches|coach|lorr(?:y|ies)|trucks?",
        "length",
        F(30),
        "m",
        least=F(3),
        reader="named",
    ),
    Limit("planes", "(?:aero)?planes?|aircraft|jets?", "speed", F(3000), "km/h", least=F(0), reader="named"),
    Limit(
        "boats", "boats?|ships?|ferr(?:y|ies)|yachts?", "speed", F(120), "km/h", least=F(0), reader="named"
    ),
    Limit("snails", "snails?|slugs?|worms?", "speed", F(1, 10), "m/s", least=F(0), reader="named"),
    Limit("cups", "cups?|mugs?|glass(?:es)?|teacups?", "volume", F(2), "l", least=F(1, 100), reader="named"),
    Limit("spoons", "(?:tea)?spoons?|tablespoons?", "volume", F(50), "ml", least=F(1), reader="named"),
    Limit(
        "bottles",
        "bottles?|jugs?|kettles?|cans?|tins?|cartons?|flasks?",
        "volume",
        F(25),
        "l",
        least=F(1, 200),
        reader="named",
    ),
    Limit("buckets", "buckets?|watering cans?", "volume", F(40), "l", least=F(1, 2), reader="named"),
    Limit("baths", "baths?|bathtubs?", "volume", F(1000), "l", least=F(20), reader="named"),
    Limit("doors", "doors?", "length", F(6), "m", least=F(3, 10), reader="named"),
    Limit("trees", "trees?", "length", F(120), "m", least=F(1, 10), reader="named"),
    Limit("giraffes", "giraffes?", "length", F(7), "m", least=F(1), reader="named"),
    Limit("rulers", "rulers?", "length", F(2), "m", least=F(1, 20), reader="named"),
    Limit("desks", "desks?|sofas?|wardrobes?", "length", F(5), "m", least=F(1, 5), reader="named"),
)


def read_by(reader: Reader) -> tuple[Limit, ...]:
    """The rows one reader reads, in the table's order."""
    return tuple(row for row in WORLD if row.reader == reader)


def said_limits() -> tuple[tuple[str, str, Fraction, str], ...]:
    """(subject words, dimension, largest value in the base unit, what it is), for a sentence said
    of a subject."""
    return tuple((row.nouns, row.dimension, row.in_base(row.most), row.thing) for row in read_by("said"))


def named_ranges() -> tuple[tuple[str, dict[str, tuple[Fraction, Fraction]]], ...]:
    """(the thing's nouns, {dimension: (least, most)} in base units), for a measure named on it."""
    grouped: dict[str, dict[str, tuple[Fraction, Fraction]]] = {}
    for row in read_by("named"):
        grouped.setdefault(row.nouns, {})[row.dimension] = (row.in_base(row.least), row.in_base(row.most))
    return tuple(grouped.items())
