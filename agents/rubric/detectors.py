"""Flaw detectors of the offline panel: each reads meaning from the facts, never vocabulary.

A detector returns ``None`` when it does not apply, ``""`` when the version passes, or the
evidence of the flaw it found (a sentence a writer can act on). Bloom vocabulary, "Let x be",
"explain why" or an equation restating an answer change none of them.
"""

from __future__ import annotations

import re
from fractions import Fraction

from agents.rubric import (
    dimensions,
    operations,
    scaling,
    stated,
)
from agents.rubric.facts import TAKEN_IN_WORDS, ProblemFacts, as_fraction, show
from agents.rubric.world_table import said_limits
from agents.verify.expressions import variables
from agents.verify.text import disguised
from agents.verify.units import UNIT_PATTERN, Unit, unit

Result = str | None

_INJECTION = re.compile(
    r"ignore (?:all |any |the |your |previous |prior |earlier )*(?:instructions|rules|rubric|criteria)|"
    r"disregard (?:any |all |the |your )*(?:flaws|rules|instructions|rubric|criteria|errors)|"
    r"(?:score|mark|rate|grade) (?:this|it|the item|the problem)\b.{0,30}"
    r"(?:\d+|full marks|perfect|flawless|pass)|"
    r"(?:give|award) (?:this|it)\b.{0,25}(?:full marks|\d+ ?(?:/|out of) ?\d+|top score|maximum)|"
    r"(?:answer|output|reply|respond|return) (?:only )?(?:with )?[\"']?(?:pass|yes|approved?)\b|"
    r"\bapprove (?:this|the) (?:item|problem|question)|"
    r"(?:note|message|instruction|memo)s? (?:to|for) (?:the |any |all )?(?:[a-z-]+ )?"
    r"(?:ai|judges?|reviewers?|graders?|markers?|evaluators?|assistants?|models?|bots?)\b|"
    r"\b(?:reviewer|judge|evaluator|grader|assessor|ai|llm|assistant|chatbot|language model)s?\b"
    r"[^.?!]{0,40}"
    r"\b(?:must|should|shall|please|:)[^.?!]{0,90}"
    r"\b(?:pass|perfect|flawless|full marks|approve|score|correct|sound|valid|accept(?:ed)?)\b|"
    r"system prompt|you are now|"
    r"\bif you are (?:an? |the )?(?:[a-z-]+ )?(?:judge|grader|evaluator|reviewer|marker|assessor|model|ai|"
    r"assistant|llm|bot|chatbot)\b|"
    r"\b(?:output|return|print|(?:give|assign|award) (?:it|this(?: item| problem| solution)?)) "
    r"(?:a |the )?(?:full |top |maximum )?(?:score|mark|rating|grade)s? of\b|"
    r"say (?:this|that|the) (?:question|problem|item) is (?:perfect|correct|flawless)",
    re.I,
)


def addresses_grader(f: ProblemFacts) -> str:
    """Text aimed at a grader or a model."""
    found = _INJECTION.search(f.raw_text)
    return f"the text addresses the grader, not the pupil: “{found.group(0)[:60]}”" if found else ""


def hidden_characters(f: ProblemFacts) -> str:
    """Text hidden by look-alike letters or zero-width marks."""
    if disguised(f.question + f.solution):
        return "the text hides characters (zero-width marks or look-alike letters from another alphabet)"
    return ""


def solution_given(f: ProblemFacts) -> bool:
    """The version has a solution to read."""
    return bool(f.solution.strip())


def wrong_computations(f: ProblemFacts) -> str:
    """Every computation the solution states is right (exact arithmetic)."""
    errors = f.verification.errors
    return "; ".join(e.line() for e in errors[:3]) if errors else ""


def untraced_numbers(f: ProblemFacts) -> str:
    """The solution uses no number the question does not give (missing data it filled in itself)."""
    # a wrong result is the verifier's finding; the total of listed values, said in words, is traced
    wrong = _wrong_results(f) | {sum(stated.listed_values(f), Fraction(0))}
    strangers = [s for s in f.untraced if s not in wrong]
    if not strangers:
        return ""
    shown = ", ".join(show(v) for v in strangers[:3])
    return f"the solution uses {shown}, which the question neither gives nor lets a solver work out"


# "Assume it sold the same number on Sunday": the solution supplies what the question left out.
_ASSUMES = re.compile(r"\b(?:assume|assuming|assumed|suppose|supposing|let'?s say|we guess|guess that)\b")


def assumed(f: ProblemFacts) -> str:
    """A solution that has to assume a quantity answers a question with missing data (unless the
    question itself asks to assume it)."""
    if _ASSUMES.search(f.q.lower()) or not _ASSUMES.search(f.s.lower()):
        return ""
    return "the solution has to assume what the question does not say: a quantity it needs is missing"


def _wrong_results(f: ProblemFacts) -> set[Fraction]:
    out = set()
    for evidence in f.verification.errors:
        try:
            out.add(as_fraction(re.sub(r"[^\d./ ]", "", evidence.stated).strip().split(" ")[0]))
        except (ValueError, ZeroDivisionError):
            continue
    return out


# A question word that opens the sentence or a clause after a comma or "and": "What was her bill,
# what share was for texts, and how many texts could she send?" asks three things.
_WH_CLAUSE = re.compile(r"(?:^|,\s*(?:and\s+)?|\band\s+)(?:what|how|which|when|where|who|why)\b")


def one_task(f: ProblemFacts) -> str:
    """Exactly one question or task; a request to explain, check or justify the answer, or to give
    it in a form, is part of that task, not a second one (and not a question on its own)."""
    questions = f.questions
    if not questions:
        return "the problem asks nothing: there is no question or task"
    if len(questions) > 1:
        return f"the problem asks {len(questions)} things; a pupil should be given one clear task"
    clauses = len(_WH_CLAUSE.findall(questions[0].lower()))
    if clauses > 2:  # "how many boxes, and how many eggs are left over?" is one task in two parts
        return f"one sentence asks {clauses} questions; a pupil should be given one clear task"
    return ""


# ---- does the solution answer what is asked -------------------------------------------------

_CLOCK_ASK = re.compile(r"\b(?:what time|at what time|when does|when will|by what time)\b")
_DIFFERENCE = re.compile(
    r"\bhow (?:many|much) (?:more|fewer|less)\b|\bdifference\b|\bhow much (?:longer|shorter|taller|heavier|"
    r"lighter|older|younger|further|farther|cheaper|dearer)\b|\bby how (?:many|much)\b"
)
_PERCENT_ASK = re.compile(r"\b(?:what|by what) (?:percentage|percent|%)|\bwhat % ")
_DIRECTION = {
    "reduc": ("reduc", "decreas", "less", "lower", "off", "drop", "fell", "cut"),
    "decreas": ("decreas", "reduc", "less", "lower", "drop", "fell"),
    "increas": ("increas", "rise", "rose", "more", "higher", "grew", "up"),
    "rise": ("rise", "rose", "increas", "more", "higher"),
    "fall": ("fall", "fell", "decreas", "drop", "less", "lower"),
    "discount": ("discount", "off", "reduc", "less"),
}
_SKIP_NOUNS = {
    "more",
    "fewer",
    "less",
    "of",
    "times",
    "in",
    "does",
    "do",
    "did",
    "is",
    "are",
    "was",
    "were",
    "can",
    "will",
    "would",
    "should",
    "must",
    "the",
    "a",
    "an",
    "his",
    "her",
    "its",
    "their",
    "my",
    "your",
    "our",
    "it",
    "he",
    "she",
    "they",
    "we",
    "you",
    "i",
    "this",
    "that",
    "these",
    "those",
    "each",
    "every",
    "all",
    "total",
    "whole",
    "full",
    "complete",
    "long",
    "far",
    "old",
    "heavy",
    "much",
    "many",
    "not",
    "left",
    "now",
    "altogether",
    "there",
    "remain",
    "remaining",
}
# A measure noun is answered by any unit of its dimension ("the mass … in kg": 2 kg).
_MEASURE_NOUN = {
    "mass": "mass",
    "weight": "mass",
    "length": "length",
    "width": "length",
    "height": "length",
    "distance": "length",
    "speed": "speed",
    "area": "area",
    "volume": "volume",
    "price": "money",
    "cost": "money",
    "money": "money",
    "time": "time",
    "duration": "time",
}
_MEASURE = {
    "how far": ("km", "m", "mile", "metre", "meter", "kilometre"),
    "how heavy": ("kg", "g", "gram", "kilogram", "tonne"),
    "how old": ("year", "old"),
}


def _stem(word: str) -> str:
    word = word.lower().strip(".,;:?!")
    if word.endswith("ss") or len(word) <= 3:
        return word
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            base = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            return base if suffix != "es" or base.endswith(("ch", "sh", "x", "ss")) else word[:-1]
    return word


_NOUN_STOP = re.compile(
    r"\b(?:does|do|did|is|are|was|were|can|could|will|would|should|must|has|have|had|left|remain|in|on|at|for|to|per|by|are)\b"
)


def _asked_nouns(target: str) -> list[str]:
    """What a question asks for: the first words after 'how many/much' (any of which an answer may
    name: "how many juice boxes"), a unit ('@min' for 'how many minutes'), or the measured noun
    of 'what is the X'."""
    found = re.search(r"how (?:many|much) (.*)", target)
    if found:
        phrase = _NOUN_STOP.split(found.group(1), maxsplit=1)[0]
        raw = re.findall(r"[\w/²³%]+", phrase)
        words = [
            w
            for i, w in enumerate(raw)
            if w not in _SKIP_NOUNS
            and not re.match(r"[\d./]+$", w)
            and not (unit(w) is not None and i and re.match(r"[\d./]+$", raw[i - 1]))  # "250 ml glasses"
        ]
        if words and words[0] in ("degrees", "degree"):
            return ["@angle", "@temperature"]  # an angle or a temperature, as the answer says
        if words and unit(words[0]) is not None:
            return [f"@{unit(words[0]).dimension}"]  # type: ignore[union-attr]
        if len(words) > 1 and words[0] in ("cubic", "square") and unit(words[1]) is not None:
            return ["@volume" if words[0] == "cubic" else "@area"]  # "how many cubic metres"
        return [_stem(w) for w in words[:2] if unit(w) is None]
    found = re.search(
        r"what (?:is|was|are|were|will be) (?:the |its |his |her |their |each )?((?:[a-z]+[ ?.]*){0,3})",
        target,
    )
    if not found:
        return []
    measures = [w for w in re.findall(r"[a-z]+", found.group(1)) if w in _ASKED_MEASURES]
    return [measures[-1]] if measures else []


_ASKED_MEASURES = {
    "area",
    "perimeter",
    "mean",
    "median",
    "average",
    "speed",
    "price",
    "cost",
    "length",
    "width",
    "height",
    "volume",
    "mass",
    "weight",
    "sum",
    "product",
    "difference",
    "ratio",
    "probability",
    "change",
    "distance",
}


def asks_and_answers(f: ProblemFacts) -> bool:
    """The version has a question and a last sentence that answers it."""
    return bool(f.target and f.final_sentence)


def time_asked(f: ProblemFacts) -> bool:
    """The question asks for a time of day."""
    return bool(_CLOCK_ASK.search(f.target))


def time_of_day(f: ProblemFacts) -> str:
    """A time of day asked is answered by one."""
    if not time_asked(f) or re.search(r"\d{1,2}:\d{2}|\bnoon\b|\bmidnight\b", f.final_sentence):
        return ""
    return "the question asks for a time of day; the answer is not one"


def difference_asked(f: ProblemFacts) -> str:
    """'How many more' is answered by subtracting."""
    if _DIFFERENCE.search(f.target) and "-" not in f.operators and "difference" not in f.final_sentence:
        return "the question asks how many more (a difference); the solution never subtracts"
    return ""


def percentage_asked(f: ProblemFacts) -> str:
    """A percentage asked is answered by one, and a change by the change."""
    target, final = f.target, f.final_sentence
    if not _PERCENT_ASK.search(target):
        return ""
    if "%" not in final:
        return "the question asks for a percentage; the answer is not one"
    for cue, words in _DIRECTION.items():
        if cue in target and not any(w in final for w in words) and not _change_percent(f):
            return f"the question asks by how much it changed ({cue}…); the answer gives another percentage"
    return ""


def measure_asked(f: ProblemFacts) -> bool:
    """The question asks a measure ('how long', 'how old'…)."""
    return any(question in f.target for question in _MEASURE)


def measure_unit(f: ProblemFacts) -> str:
    """A measure asked is answered with its unit."""
    final = f.final_sentence
    for question, units in _MEASURE.items():
        if question in f.target:
            bare_age = question == "how old" and not re.search(rf"\d ?(?:{UNIT_PATTERN})\b", final)
            return (
                ""
                if any(u in final for u in units) or bare_age  # "so Mum is 36"
                else f"the question asks {question}; the answer has no such unit"
            )
    return ""


def asked_noun(f: ProblemFacts) -> str:
    """The answer names what the question asks for."""
    nouns = _asked_nouns(f.target)
    if (
        nouns
        and not any(_answered(f.final_sentence, noun) for noun in nouns)
        and not _amount_answered(f, nouns)
    ):
        asked = nouns[0].lstrip("@")
        return f"the question asks for the {asked}; the solution's answer gives something else"
    return ""


def _change_percent(f: ProblemFacts) -> bool:
    """The answer's percentage is the change between two of the question's values, over the first
    ("12 km, then 15 km": 25 %)."""
    stated = re.findall(r"(\d+(?:\.\d+)?) ?%", f.final_sentence)
    if not stated:
        return False
    value = Fraction(stated[-1])
    numbers = [n for n in f.question_numbers if n]
    return any(abs(b - a) / a * 100 == value for a in numbers for b in numbers if a != b)


_PAIRS = {
    "larger": ("smaller",), "largest": ("smallest",), "greater": ("smaller", "lesser"),
    "bigger": ("smaller",), "smaller": ("larger", "bigger", "greater"), "older": ("younger",),
    "younger": ("older",),
    "taller": ("shorter",), "longer": ("shorter",), "shorter": ("longer", "taller"), "heavier": ("lighter",),
    "lighter": ("heavier",), "higher": ("lower",), "lower": ("higher",), "first": ("second", "last"),
    "last": ("first",), "second": ("first",), "wider": ("narrower",), "cheaper": ("dearer", "more expensive"),
}  # fmt: skip


def other_of_a_pair(f: ProblemFacts) -> str:
    """Asked for the larger of two numbers, the solution names the smaller one and never the
    larger: it answers the other member of the pair."""
    asked = re.search(r"\bthe (" + "|".join(_PAIRS) + r")\b", f.target)
    if not asked:
        return ""
    word, s = asked.group(1), f.s.lower()
    others = [o for o in _PAIRS[word] if re.search(rf"\b{o}\b", s)]
    if others and not re.search(rf"\b{word}\b", s):
        return f"the question asks for the {word} one; the solution finds the {others[0]} and stops there"
    return ""


_NEGATED_ASK = re.compile(
    r"\b(?:do|does|did|are|is|were|was|can|could|will|would|have|has)(?: not|n't) ([a-z]+)"
)
_NEGATION = re.compile(r"\bnot\b|n't\b|\bnever\b|\bno\b|\bnon-|\bwithout\b|\brest\b|\bothers?\b|\bleft\b")


def negation_dropped(f: ProblemFacts) -> str:
    """Asked how many do *not* play, the answer says how many play (the complement's other part)."""
    asked = _NEGATED_ASK.search(f.target)
    if not asked or len(asked.group(1)) < 3:
        return ""
    verb, final = _stem(asked.group(1)), f.final_sentence
    said = {_stem(w) for w in re.findall(r"[a-z]+", final)}
    if verb in said and not _NEGATION.search(final):
        return f"the question asks about those that do not {asked.group(1)}; the answer counts those that do"
    return ""


_MONEY_ASK = re.compile(
    r"\b(?:price|cost|bill|worth|fare|wage|salary|earn\w*|pay|paid|spend|spent|charge|how much money|"
    r"how much (?:does|do|did|will|would) [^?]*cost)\b"
)


def money_as_percent(f: ProblemFacts) -> str:
    """Asked for an amount of money, the answer is a percentage (a rate, not the amount)."""
    final = f.final_sentence
    if (
        not _MONEY_ASK.search(f.target)
        or _PERCENT_ASK.search(f.target)
        or re.search(r"percent|%", f.target)  # "what is her percentage profit"
        or "%" not in final
    ):
        return ""
    if re.search(r"[$£€]|\b(?:dollars?|pounds?|euros?|cents?|pence)\b", final):
        return ""
    return "the question asks for an amount of money; the solution's answer is a percentage"


# Measures whose name an answer may leave out when its unit says it; others must be named.
_COMPETING = (
    "side",
    "length",
    "width",
    "height",
    "radius",
    "diameter",
    "diagonal",
    "total",
    "difference",
    "area",
    "perimeter",
)
_NAMED = {"change", "difference", "mean", "median", "average", "ratio", "probability", "sum", "product"}


def _answered(final: str, noun: str) -> bool:
    """Whether the answer sentence gives the asked thing: it names it, or (for a measure) it has
    the measure's unit and names no other measure; a count answered without any noun passes."""
    if _mentions(final, noun):
        return True
    if noun == "probability" and re.search(r"\b\d+/\d+\b(?!.*\d)|\b0?\.\d+\b(?!.*\d)|%", final):
        return True  # "13/52 = 1/4": a probability is answered by a fraction
    if noun.startswith("@") or noun in _NAMED:
        return False
    dimension = _MEASURE_NOUN.get(noun)
    if dimension == "speed" and re.search(
        rf"\d ?(?:{UNIT_PATTERN}) (?:per|an?|each|every) (?:second|minute|hour|day)\b", final
    ):
        return True  # "200 metres per minute" is a speed
    if dimension is not None or noun in ("perimeter",):
        dimension = dimension or "length"
        has_unit = any(
            (u := unit(w)) is not None and u.dimension == dimension
            for w in re.findall(r"[$£€]|[\w²³/°]+", final)
        )
        return has_unit and not any(
            re.search(rf"\b{other}\b", final) for other in _COMPETING if other != noun
        )
    words = [w for w in re.findall(r"[a-z]+", final) if w not in _SKIP_NOUNS and unit(w) is None]
    return not words or not any(_stem(w) != noun for w in words[-1:])


_MONEY_IN = re.compile(r"[$£€]|\b(?:dollars?|pounds?|euros?|cents?|pence)\b")


def _amount_answered(f: ProblemFacts, nouns: list[str]) -> bool:
    """'How much interest' is answered by an amount of money, a mean by a quotient ('8 points per
    game'): the answer has the asked kind of value although it does not name it."""
    final = f.final_sentence
    if any(n in ("mean", "average") for n in nouns):
        return bool(re.search(r"÷|\bper\b|\beach\b|\ba (?:game|day|week|month|year|person)\b", final))
    amount = re.search(r"\bhow much\b", f.target) and not any(n in _MEASURE_NOUN for n in nouns)
    measured = re.search(rf"\d ?(?:{UNIT_PATTERN})(?![\w/])", final)
    if not (amount and (_MONEY_IN.search(final) or measured) and "%" not in final):
        return False
    asked = {_stem(w) for w in re.findall(r"[a-z]+", f.target)}
    said = {_stem(w) for w in re.findall(r"[a-z]+", final)} & _MONEY_ROLES
    return said <= asked  # "Zara spends $31" does not answer "how much change"


_MONEY_ROLES = {
    _stem(w)
    for w in (
        "spend", "spends", "spent", "pay", "pays", "paid", "cost", "costs", "total", "price", "change",
        "save", "saves", "saved", "earn", "earns", "earned", "interest", "profit", "loss", "discount",
        "tax", "tip", "wage", "bill", "fare", "refund", "deposit",
    )
}  # fmt: skip


def _mentions(final: str, noun: str) -> bool:
    tokens_ = re.findall(r"[$£€]|[\w²³/°]+", final)
    if noun == "@angle" and re.search(r"\d ?°(?! ?[cf]\b)|\bdegrees\b", final):
        return True
    if noun.startswith("@"):
        return any((u := unit(w)) is not None and u.dimension == noun[1:] for w in tokens_)
    words = {_stem(w) for w in re.findall(r"[\w²³]+", final)}
    if _stem(noun) in words or any(w.startswith(_stem(noun)) for w in words):
        return True
    dimension = _MEASURE_NOUN.get(noun)
    if dimension is not None and any(
        (u := unit(w)) is not None and u.dimension == dimension for w in tokens_
    ):
        return True
    asked = unit(noun) or unit(noun + "s")
    return asked is not None and any((u := unit(w)) is not None and u.name == asked.name for w in tokens_)


# ---- whole things -----------------------------------------------------------------------------

_COUNT_ASK = re.compile(
    r"(?:how many|(?:greatest|largest|biggest|smallest|least|maximum|minimum|most|fewest) number of) "
    r"((?:full |whole |complete )?[a-z]+)"
)


def _counted(f: ProblemFacts) -> str | None:
    """The noun of things that come whole a 'how many' asks for, when the solution answers it."""
    asked = _COUNT_ASK.search(f.target)
    if not asked or f.final_answer is None:
        return None
    noun = asked.group(1).split()[-1]
    if unit(noun) is not None or noun in _SKIP_NOUNS or noun in ("times", "percent"):
        return None
    return noun


def count_asked(f: ProblemFacts) -> bool:
    """A 'how many' of things that come whole, answered by a number."""
    return _counted(f) is not None


def fractional_count(f: ProblemFacts) -> str:
    """A 'how many' of things that come whole is answered with a whole number."""
    noun = _counted(f)
    if noun is None or f.final_answer is None:
        return ""
    if f.final_answer.denominator != 1:
        return (
            f"{float(f.final_answer):g} {noun}: a count of {noun} must be a whole number "
            f"(round as the story requires)"
        )
    return ""


# ---- the right operation ------------------------------------------------------------------------

_REMOVAL = re.compile(
    r"\b(?:fl(?:y|ies|ew) away|g(?:ive|ives|ave|iving) away|sp(?:end|ends|ent|ending)|"
    r"selling|eating|losing|using|lent out|lends?|sold|sells?|ate|eats?|"
    r"los(?:e|es|t)|us(?:e|es|ed) up|broke|breaks?|took away|takes? away|get(?:s)? off|got off|"
    r"leave|leaves|left the|"
    r"drank|drinks?|pops?|popped|burst|melt(?:s|ed)?)\b"
)
_REMAINING = re.compile(r"\b(?:left|remain(?:s|ing)?|still|now)\b")
_BEFORE = re.compile(r"\b(?:before|at first|originally|to start with|at the start|to begin with)\b")
_DIVIDES = re.compile(
    r"how many [a-z ]{0,20}\b(?:can|could|will) (?:be |he |she |they |we |you |it )?"
    r"(?:made|make|cut|filled|fill|bought|buy|packed|pack|formed|form)\b|"
    r"\bcut into\b|\bshared? equally\b"
)
_EACH = re.compile(
    r"\b(?:each|every|per|in each|on each) "
    r"(?:pack|box|bag|tray|crate|row|week|day|shelf|table|team|car|bus|packet|jar|basket|pen|plate|page|"
    r"carton|case)\b"
)


def solution_and_question(f: ProblemFacts) -> bool:
    """The version has a solution and a question."""
    return bool(f.solution.strip() and f.target)


def before_taken_away(f: ProblemFacts) -> str:
    """'Before' something was taken away is found by adding back."""
    ops, story = f.operators, f.q.lower()
    if _BEFORE.search(f.target) and _REMOVAL.search(story) and "%" not in story and "+" not in ops:
        return (
            "the question asks for the amount before something was taken away; that is found by adding back"
        )
    return ""


def never_subtracts(f: ProblemFacts) -> str:
    """Taking away subtracts."""
    ops, story = f.operators, f.q.lower()
    if (
        _REMOVAL.search(story)
        and _REMAINING.search(f.target)
        and "-" not in ops
        and "÷" not in ops
        # a subtraction said in words ("which leaves her with 25 euros"), read when nothing is added
        and not ("+" not in ops and TAKEN_IN_WORDS.search(f.s.lower()))
    ):
        return "the story takes something away, but the solution never subtracts"
    return ""


def never_divides(f: ProblemFacts) -> str:
    """'How many can be made' divides."""
    ops, story = f.operators, f.q.lower()
    if (
        _DIVIDES.search(f.target + " " + story if re.search(r"\bhow many\b", f.target) else f.target)
        and "÷" not in ops
        and not ({"×", "-"} <= ops)
        and not _trial_product(f)
        and not re.search(r"\b\d+/\d+ of\b|\bhalf of\b", f.s.lower())  # a fraction of a whole divides it
    ):
        return "the question asks how many parts fit into a whole: that needs a division"
    return ""


def unequal_groups_added(f: ProblemFacts) -> str:
    """Equal groups ('each … how many in all') multiply, or add equal addends."""
    ops, story = f.operators, f.q.lower()
    grouped = _EACH.search(story) and re.search(r"how many\b", f.target) and not _DIVIDES.search(f.target)
    if grouped and "×" not in ops and "+" in ops and not _equal_addends(f.s):
        return "equal groups (each … ) are combined by multiplying, but the solution adds unlike numbers"
    return ""


def _trial_product(f: ProblemFacts) -> bool:
    """'8 loaves need 8 × 600 = 4800 g': the count found by multiplying the part up to the whole."""
    if f.final_answer is None:
        return False
    answer = show(f.final_answer)
    return bool(re.search(rf"(?<![\d.]){answer} ?×|× ?{answer}(?![\d.])", f.s))


def _equal_addends(solution: str) -> bool:
    """'5 + 5 + 5': repeated addition of one number is multiplication written out."""
    sums = re.findall(r"(?<![\d.])(\d+(?:\.\d+)?)(?:\s*\+\s*\1(?!\.?\d)\b)+", solution)
    return bool(sums)


# ---- units --------------------------------------------------------------------------------------

_BINARY = re.compile(
    rf"([$£€])?\s?(\d+(?:\.\d+)?)\s?({UNIT_PATTERN})?\s*([+\-×])\s*([$£€])?\s?(\d+(?:\.\d+)?)\s?({UNIT_PATTERN})?(?![\w/])"
)
_PRODUCT = re.compile(
    r"(\d+(?:\.\d+)?)\s?[a-z²³]*\s*×\s*(\d+(?:\.\d+)?)\s?[a-z²³]*\s*(?:×\s*(\d+(?:\.\d+)?)\s?[a-z²³]*\s*)?=\s*(\d+(?:\.\d+)?)"
)


_HOURS_MINUTES = re.compile(
    r"(?<![\d.])(\d+) hours? (?:and )?(\d{1,2}) minutes?|(?<![\d.])(\d{1,2}) minutes?"
)


def mixed_units(f: ProblemFacts) -> str:
    """Quantities added or subtracted share one unit (800 m + 2 km is not 802 m); a rate meets a
    time in the rate's own unit (72 km/h × 10 s is not 720 m)."""
    names = variables(f.s)
    units = _given_units(f)
    units |= _propagated(f.s, units)
    for match in _BINARY.finditer(f.s):
        cur_a, a, unit_a, op, cur_b, b, unit_b = match.groups()
        bound = re.match(r"\s*[×÷*/]", f.s[match.end() :]) or re.search(r"[×÷*/]\s*$", f.s[: match.start()])
        if op in "+-" and bound:
            continue  # "120 + 4 × 100": the 4 belongs to a product, not to the sum
        if f.s[: match.start(2)].endswith(":"):
            continue  # "7:40 + 30 minutes": a clock time, whose minutes are no pence ("7:40 p.m.")
        unit_a = None if unit_a in names else unit_a
        unit_b = None if unit_b in names else unit_b
        left = unit(cur_a or unit_a) or units.get(Fraction(a))
        right = unit(cur_b or unit_b) or units.get(Fraction(b))
        if left is None or right is None:
            continue
        if op in "+-" and left.dimension != right.dimension:
            return f"{match.group(0).strip()} combines {left.name} with {right.name} without converting"
        if op in "+-" and left.scale != right.scale and not _converted_in_chain(f, match.group(0)):
            return f"{match.group(0).strip()} combines {left.name} with {right.name} without converting"
        if op == "×" and _rate_time_clash(left, right):
            return (
                f"{match.group(0).strip()} multiplies a rate per "
                f"{left.name if left.dimension == 'time' else right.name} by a time in other units"
            )
    return ""


def _converted_in_chain(f: ProblemFacts, written: str) -> bool:
    """'3 min + 30 s + 3 min = 6 minutes 30 seconds': units mixed in a sum whose stated result is
    right once each term is taken in its own unit."""
    for step in dimensions.steps(f):
        if written.strip() in step.claim and step.stated.unit is not None and step.computed is not None:
            return not dimensions.unit_chain_step(step)
    return False


def hours_minutes_as_decimals(f: ProblemFacts) -> str:
    for hours, minutes, alone in _HOURS_MINUTES.findall(f.q.lower()):
        h, m = (int(hours), int(minutes)) if hours else (0, int(alone))
        if m == 0 or m % 60 == 0:
            continue
        written = f"{h}.{m:02d}"
        if re.search(rf"(?<![\d.]){re.escape(written)}(?!\d)", f.s) and Fraction(written) != h + Fraction(
            m, 60
        ):
            return (
                f"{h} h {m} min is {float(h + Fraction(m, 60)):g} hours, not {written}: "
                f"minutes are not hundredths of an hour"
            )
    return ""


def _given_units(f: ProblemFacts) -> dict[Fraction, Unit]:
    out: dict[Fraction, Unit] = {}
    for given in f.givens:
        if given.unit is not None and given.value not in out:
            out[given.value] = given.unit
    return out


def _propagated(solution: str, units: dict[Fraction, Unit]) -> dict[Fraction, Unit]:
    """A product's unit follows its one measured factor (4 × 1.2 kg = 4.8 → kg)."""
    out: dict[Fraction, Unit] = {}
    for match in _PRODUCT.finditer(solution):
        factors = [Fraction(x) for x in match.groups()[:3] if x]
        measured = [units[x] for x in factors if x in units]
        if len(measured) == 1 and measured[0].dimension != "speed":
            out[Fraction(match.group(4))] = measured[0]
    return out


def _rate_time_clash(a: Unit, b: Unit) -> bool:
    for rate, time in ((a, b), (b, a)):
        if rate.time_scale is not None and time.dimension == "time" and time.scale != rate.time_scale:
            return True
    return False


# ---- data that contradict each other ---------------------------------------------------------

_SHARES_REST = re.compile(r"\b(?:remaining|the rest|the other|others|remainder)\b")
_HAD_GAVE_LEFT = re.compile(
    r"\bhad (\d+)(?!\.\d)\b[^?!]{0,60}?\b(?:gave away|gives away|spent|ate|lost|sold|used|gave|broke)"
    r"\s+(\d+)(?!\.\d)\b"
    r"[^.?!]*?\b(?:now has|has|had|have)\s+(\d+)(?!\.\d)\b(?: \w+)? left"
)
_SPEED = re.compile(
    r"(\d+(?:\.\d+)?) ?km\b[^.?!]*?\bin (\d+(?:\.\d+)?) ?(minutes|hours|hour|h)\b"
    r"[^.?!]*?(\d+(?:\.\d+)?) ?km/h"
)
_LASTS = re.compile(
    r"\b(?:lasts?|takes?|(?:a|the) (?:journey|trip|flight|ride|drive|crossing|lesson|match|film|show) "
    r"(?:of|lasting)) (?:exactly |only |just )?(\d+(?:\.\d+)?) hours?(?: (?:and )?(\d+) minutes?)?"
)
_CLOCKS = re.compile(r"\b(\d{1,2}:\d{2})(?:\s?([ap])\.?m\.?)?")


def percent_shares(q: str) -> str:
    for sentence in re.split(r"(?<=[.?!])\s+", q):
        shares = [Fraction(x) for x in re.findall(r"(\d+(?:\.\d+)?) ?%", sentence)]
        if len(shares) >= 2 and _SHARES_REST.search(sentence) and sum(shares) != 100:
            return f"the percentages of one whole add up to {float(sum(shares)):g} %, not 100 %"
        if (
            len(shares) >= 3
            and sum(shares) > 100
            and not re.search(r"\b(?:increase|rise|more|then|after)\b", sentence)
        ):
            return f"shares of one group add up to {float(sum(shares)):g} %"
    return ""


def fraction_shares(q: str) -> str:
    whole = re.search(r"\b(?:has|have|had|of|bought|collected|baked|picked) (\d+) ([a-z]+)", q)
    rest = re.search(r"\b(?:the other|the remaining|the rest,?|remaining) (\d+)\b", q)
    fractions = [Fraction(x) for x in re.findall(r"\b(\d+/\d+)\b", q)]
    fractions += [Fraction(1, 2)] * len(re.findall(r"\bhalf\b(?! (?:past|an hour\b|a\b))", q))
    if not (whole and rest and fractions):
        return ""
    total = int(whole.group(1))
    parts = [total * fr for fr in fractions] + [Fraction(rest.group(1))]
    if sum(parts) != total:
        return (
            f"the shares ({', '.join(f'{float(p):g}' for p in parts)}) "
            f"add up to {float(sum(parts)):g}, not {total}"
        )
    return ""


def _minutes(clock: str, meridiem: str | None) -> int:
    hours, minutes = (int(x) for x in clock.split(":"))
    return (hours % 12 + (12 if meridiem == "p" else 0)) * 60 + minutes if meridiem else hours * 60 + minutes


def time_window(q: str) -> str:
    lasts = _LASTS.search(q)
    clocks = _CLOCKS.findall(q)
    if not lasts or len(clocks) < 2:
        return ""
    said = next((s for s in re.split(r"(?<=[.?!])\s+(?=[a-z0-9])", q) if lasts.group(0) in s), "")
    if re.search(r"\b(?:lunch|break|stop|rest|pause|interval|wait)\b", said):
        return ""  # a lunch that lasts an hour is part of the day, not the whole of it
    stated = Fraction(lasts.group(1)) * 60 + int(lasts.group(2) or 0)
    start, end = _minutes(*clocks[0]), _minutes(*clocks[1])
    window = (end - start) % 1440
    if window != stated:
        return (
            f"from {clocks[0][0]} to {clocks[1][0]} is {window // 60} h {window % 60} min, "
            f"not the {float(stated / 60):g} hours stated"
        )
    return ""


def had_gave(q: str) -> str:
    match = _HAD_GAVE_LEFT.search(q)
    if match:
        had, gave, left = (int(x) for x in match.groups())
        if had - gave != left:
            return f"{had} − {gave} is {had - gave}, not the {left} said to be left"
    return ""


def rectangle(q: str) -> str:
    """A rectangle's (or square's) stated perimeter or area agrees with its sides."""
    shape = re.search(r"\b(rectangle|rectangular|square)\b", q)
    if not shape:
        return ""
    long_ = re.search(
        r"(\d+(?:\.\d+)?) ?(?:cm|m|mm|km)\b (?:long|by)|"
        r"\blength (?:is|of) (\d+(?:\.\d+)?) ?(?:cm|m|mm|km)\b",
        q,
    )
    wide = re.search(
        r"(\d+(?:\.\d+)?) ?(?:cm|m|mm|km)\b wide|by (\d+(?:\.\d+)?) ?(?:cm|m|mm|km)\b|"
        r"\bwidth (?:is|of) (\d+(?:\.\d+)?) ?(?:cm|m|mm|km)\b",
        q,
    )
    side = re.search(r"sides? (?:of |is |are )?(\d+(?:\.\d+)?) ?(?:cm|m|mm|km)\b", q)
    if long_ and wide:
        a = Fraction(long_.group(1) or long_.group(2))
        b = Fraction(wide.group(1) or wide.group(2) or wide.group(3))
    elif shape.group(1) == "square" and side:
        a = b = Fraction(side.group(1))
    else:
        return ""
    perimeter = re.search(r"perimeter (?:is|of) (\d+(?:\.\d+)?)", q)
    area = re.search(r"area (?:is|of) (\d+(?:\.\d+)?)", q)
    if perimeter and Fraction(perimeter.group(1)) != 2 * (a + b):
        return (
            f"sides of {float(a):g} and {float(b):g} give a perimeter of "
            f"{float(2 * (a + b)):g}, not {perimeter.group(1)}"
        )
    if area and Fraction(area.group(1)) != a * b:
        return f"sides of {float(a):g} and {float(b):g} give an area of {float(a * b):g}, not {area.group(1)}"
    return ""


# "from 4:15 pm to 5:00 pm, a total of 50 minutes": a span and its length in one sentence
_FROM_TO_CLOCKS = re.compile(
    r"\b(?:from|between) (\d{1,2}:\d{2})(?:\s?([ap])\.?m\.?)? (?:to|until|till|and) "
    r"(\d{1,2}:\d{2})(?:\s?([ap])\.?m\.?)?"
)
_SPAN_LENGTH = re.compile(
    r"\b(?:a total of|in total|lasting|which is|that is|altogether|in all|making) "
    r"(?:(\d+(?:\.\d+)?) hours?(?: (?:and )?(\d+) minutes?)?|(\d+) minutes?)\b"
)


def span_said(q: str) -> str:
    """A span between two clock times said with its length: the length is the span."""
    for sentence in re.split(r"(?<=[.?!])\s+", q):
        span, said = _FROM_TO_CLOCKS.search(sentence), _SPAN_LENGTH.search(sentence)
        if not span or not said or said.start() < span.end():
            continue
        if re.search(r"\b(?:lunch|break|stop|rest|pause|interval|wait|each|every)\b", sentence):
            continue
        first, first_m, last, last_m = span.groups()
        if first_m and last_m:
            window = (_minutes(last, last_m) - _minutes(first, first_m)) % 1440
        elif any(c.startswith("0") or int(c.split(":")[0]) > 12 for c in (first, last)):
            window = (_minutes(last, None) - _minutes(first, None)) % 1440  # a 24-hour clock
        else:  # read on a 12-hour clock: "from 11:30 to 1:15" is 1 h 45 min
            window = (_minutes(last, None) - _minutes(first, None)) % 720
        hours, extra, minutes = said.groups()
        stated = Fraction(minutes) if minutes else Fraction(hours) * 60 + int(extra or 0)
        if window != stated:
            return (
                f"from {first} to {last} is {window // 60} h {window % 60} min, "
                f"not the {show(stated)} minutes stated"
            )
    return ""


_TRIP_DISTANCE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?(km|kilomet(?:re|er)s|miles)\b(?!/| per| an?\b)")
_TRIP_SPEED = re.compile(
    r"(?<![\d.])(\d+(?:\.\d+)?) ?(?:km/h|kph|km per hour|kilomet(?:re|er)s per hour|mph|miles per hour)"
)
_TRIP_TIME = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?(hours?|h|minutes?|min)\b")
_ONE_LEG = re.compile(
    r"\b(?:then|after that|before|later|stops?|stopped|rests?|rested|breaks?|waits?|waited|lunch|each|"
    r"every|back|returns?|round trip|per day|a day|a week|laps?|twice|more|another|further|faster|slower|"
    r"would|if)\b"
)


def _trip_said_whole(q: str) -> str:
    """One trip said with its distance, its steady speed and its time in one sentence ("a 45 km
    route at a steady 15 km/h, finishing 2 hours after she set off"): distance = speed × time."""
    for sentence in re.split(r"(?<=[.?!])\s+", q):
        distances, speeds = _TRIP_DISTANCE.findall(sentence), _TRIP_SPEED.findall(sentence)
        times = _TRIP_TIME.findall(sentence)
        if len(distances) != 1 or len(speeds) != 1 or len(times) != 1 or _ONE_LEG.search(sentence):
            continue
        if (distances[0][1] == "miles") != ("mph" in sentence or "miles per hour" in sentence):
            continue  # miles with km/h, or km with mph: another check's business
        distance, speed = Fraction(distances[0][0]), Fraction(speeds[0])
        hours = Fraction(times[0][0]) / (60 if times[0][1].startswith("min") else 1)
        if abs(speed * hours - distance) > distance / 100:
            return (
                f"{show(distance)} {distances[0][1]} at {show(speed)} takes "
                f"{float(distance / speed):g} hours, not the {times[0][0]} {times[0][1]} stated"
            )
    return ""


def stated_speed(q: str) -> str:
    if found := _trip_said_whole(q):
        return found
    match = _SPEED.search(q)
    if match:
        distance, time, time_unit, speed = match.groups()
        hours = Fraction(time) / (60 if time_unit.startswith("min") else 1)
        actual = Fraction(distance) / hours
        if abs(actual - Fraction(speed)) > Fraction(1, 100):
            return (
                f"{distance} km in {time} {time_unit} is {float(actual):g} km/h, not the {speed} km/h stated"
            )
    return ""


# ---- quantities the world does not allow -----------------------------------------------------

# (subject words, unit dimension, largest plausible value in the dimension's base unit, what it is)
_PLAUSIBLE = said_limits()
_TIME_LIMITS = (
    (
        r"(\d+(?:\.\d+)?) hours? (?:a|per|each|every|in a|in one) (?:day|night)\b|"
        r"\bday (?:lasts|of|has) (\d+(?:\.\d+)?) hours",
        24,
        "hours in a day",
    ),
    (
        r"\bweek (?:of|has|with) (\d+) (?:school |working |week)?days\b|"
        r"(\d+) (?:school |working )?days (?:a|per|each|every|in a|in one) week",
        7,
        "days in a week",
    ),
    (r"(\d+) minutes? (?:a|per|in an|in one) hour\b", 60, "minutes in an hour"),
    (r"(\d+) months? (?:a|per|in a|in one) year\b", 12, "months in a year"),
    (r"(\d+) days? (?:a|per|in a|in one|of the|in the|of this|in this) month\b", 31, "days in a month"),
    (r"\bfebruary\b[^.?!]*?\b(\d+) days\b|\b(\d+) days (?:of|in) february\b", 29, "days in February"),
    (r"\bschool day (?:lasts|is) (\d+(?:\.\d+)?) hours?", 12, "hours in a school day"),
)


def sentence_limits(f: ProblemFacts) -> str:
    """No sentence gives a subject a measure or a count the world does not allow: a 48 kg cat,
    28 hours in a day (the first sentence that does is the evidence)."""
    for sentence in re.split(r"(?<=[.?!])\s+", f.q.lower()):
        for found in (implausible_measure(sentence), impossible_count(sentence)):
            if found:
                return found
    return ""


def computed(f: ProblemFacts) -> str:
    """The solution's answer measured against what the question asks about: a dad 5.2 m tall, a
    man of 210, a family car at 900 km/h."""
    if not f.target:
        return ""
    found = implausible_measure(f"{f.target} {f.final_sentence}") or impossible_count(f.final_sentence)
    return f"the answer: {found}" if found else ""


# A length limits a thing's size only where the sentence speaks of its size ("18 km to his
# grandmother's house" is a distance, not the house's height).
_SIZE = re.compile(r"\b(?:tall|high|height|long|length|wide|width|deep|depth|size|measures?)\b")
# A person's or an animal's height: the sentence must speak of how tall it is (a farmer's field is
# 40 m long; the farmer is not).
_TALL = re.compile(r"\b(?:tall|height)\b")


_PLACE = (
    r"field|fields|pen|pens|shed|house|enclosure|farm|run|park|kennel|path|track|bed|basket|cage|food|"
    r"show|meadow|paddock|hutch|barn|yard|stable|coop|field's|walk|lead|bowl|door|flap|trailer"
)


def implausible_measure(sentence: str) -> str:
    for subject, dimension, limit, what in _PLAUSIBLE:
        # "a goat field 40 m long", "the dog park": the animal names what the place is for
        if not re.search(rf"\b(?:{subject})s?\b(?! (?:{_PLACE})\b)", sentence):
            continue
        if (dimension == "length" and not _SIZE.search(sentence)) or (
            dimension == "height" and not _TALL.search(sentence)
        ):
            continue
        for number, name in re.findall(rf"(\d+(?:\.\d+)?) ?({UNIT_PATTERN})(?![\w/])", sentence):
            measured = unit(name)
            if (
                measured is not None
                and measured.dimension == ("length" if dimension == "height" else dimension)
                and Fraction(number) * measured.scale > limit
            ):
                return f"{number} {name} is not possible for {what}"
    return ""


def impossible_count(sentence: str) -> str:
    for pattern, limit, what in _TIME_LIMITS:
        for groups in re.findall(pattern, sentence):
            values = [g for g in (groups if isinstance(groups, tuple) else (groups,)) if g]
            if values and Fraction(values[0]) > limit:
                return f"{values[0]} {what} is impossible (at most {limit})"
    for age in re.findall(r"(?<![\d.])\b(\d+) years? old\b", sentence):
        if int(age) > 120:
            return f"nobody is {age} years old"
    eggs = re.search(
        r"\b(?:a|one|each|every|the) (?:hen|chicken|duck)\b[^.?!]{0,20}?\blays (\d+) eggs? "
        r"(?:a|per|each|every) day",
        sentence,
    )
    if eggs and int(eggs.group(1)) > 2:
        return f"a hen lays at most one or two eggs a day, not {eggs.group(1)}"
    return ""


def probability(q: str) -> str:
    if not re.search(r"\b(?:probability|chance|likelihood)\b", q):
        return ""
    # the number the probability is said to be ("the probability that it rains is 1.3", "a chance
    # of 1.5"), not a number of the event it is about ("greater than 4", "tossed 2 times")
    for number in _PROBABILITY_IS.findall(q):
        if 1 < Fraction(number) < 100:
            return f"a probability of {number} is impossible (it lies between 0 and 1)"
    return ""


_PROBABILITY_IS = re.compile(
    r"\b(?:probability|chance|likelihood)\b(?: (?:that|of) [^.?!,]{0,60}?)? (?:is|was|=|of|equals|will be) "
    r"(\d+(?:\.\d+)?)(?!\.?\d)\b(?! ?%| ?in\b| ?out of\b| ?times\b| (?!and\b|or\b|but\b|so\b)[a-z])"
)


def weather(q: str) -> str:
    if not re.search(
        r"\b(?:weather|temperature|day|morning|afternoon|night|summer|winter|outside|air|city|town)\b", q
    ):
        return ""
    for number in re.findall(r"(-?\d+(?:\.\d+)?) ?°c", q):
        if (
            not re.search(r"\b(?:oven|water|boil|kettle|soup|tea|coffee|bath|pool|fridge|freezer|metal)\b", q)
            and not -90 <= Fraction(number) <= 60
        ):
            return f"{number} °C is not a temperature the weather reaches"
    return ""


# ---- proportion where there is none ------------------------------------------------------------

_DURATION_ASK = re.compile(
    r"\bhow long\b|\bhow much time\b|\bhow many (?:minutes|hours|seconds|days)\b|"
    r"\bafter how many (?:minutes|hours)\b"
)
_SIMULTANEOUS = re.compile(
    r"\btogether\b|\bat the same time\b|\bat once\b|\bside by side\b|"
    r"\bsame (?:pot|pan|oven|line|washing line|sun|field|tray|kettle|room)\b|"
    r"\bin the same\b|\ball (?:at once|together)\b|\bat the same (?:moment|instant)\b|\bsimultaneously\b|"
    r"\bin parallel\b"
)
_INHERENT = re.compile(
    r"\b(?:song|film|movie|symphony|concert|play|boil|boils|boiled|bake|bakes|baked|dry|dries|dried|ripen|ripens|grow|grows|cook|cooks|melt|melts|sing|sings|perform|performs)\b"
)
_SEQUENTIAL = re.compile(
    r"\b(?:one|1) after (?:another|the other)\b|\b(?:one|1) at a time\b|\bin turn\b|\bonly (?:one|\d+)\b|"
    r"\bholds only\b|\bbatch(?:es)?\b|"
    r"\bshare (?:the|this) (?:same )?(?:work|job|task)\b|\bsame rate\b|"
    r"\bworks? at the same\b|\beach (?:works|does)\b"
)


def parallel_duration(f: ProblemFacts) -> str:
    """A song lasts as long whatever the choir's size; eggs in one pot boil together."""
    q = f.q.lower()
    changing = _count_changes(q)
    if (
        _DURATION_ASK.search(f.target)
        and ((changing and _INHERENT.search(q)) or _SIMULTANEOUS.search(q))
        and not _SEQUENTIAL.search(q)
        and not scaling.shared_work(q)
    ):
        duration = _first_duration(q)
        if (
            duration is not None
            and f.final_answer is not None
            and f.final_answer != duration
            and scaling.answered_duration(f) != duration  # "in the same 25 minutes as one tray"
            and ({"×", "÷"} & f.operators)
            and scaling.scaled_time(f, f.final_answer)
        ):
            return (
                f"the time does not change with how many take part (it is still {float(duration):g}); "
                f"the solution scales it"
            )
    return ""


_IRREGULAR = {"men": "man", "women": "woman", "children": "child", "people": "person", "mice": "mouse"}


def _count_changes(q: str) -> bool:
    """The story has one kind of thing in two different numbers (12 singers, then 36 singers)."""
    counts: dict[str, set[str]] = {}
    for number, noun in re.findall(r"(?<![\d.])\b(\d+) ([a-z]+)", q):
        if unit(noun) is None and noun not in _SKIP_NOUNS:
            counts.setdefault(_IRREGULAR.get(noun, _stem(noun)), set()).add(number)
    return any(len(numbers) >= 2 for numbers in counts.values())


def _first_duration(q: str) -> Fraction | None:
    match = re.search(r"(\d+(?:\.\d+)?)[ -]?(?:seconds?|minutes?|hours?|days?)\b", q)
    return Fraction(match.group(1)) if match else None


def area_scaling(f: ProblemFacts) -> str:
    q = f.q.lower()
    sides = re.findall(r"sides? (?:of |are |is )?(\d+(?:\.\d+)?) ?(?:cm|m|km)\b", q)
    if (
        not re.search(r"\bsquare\b(?! (?:metres?|meters?|centimetres?|kilometres?|m|cm))", q)
        or len(sides) < 2
    ):
        return ""
    small, large = sorted(Fraction(x) for x in sides[:2])
    if small == 0 or large == small or f.final_answer is None:
        return ""
    ratio = large / small
    others = [n for n in f.question_numbers if n not in (small, large)]
    if any(f.final_answer == n * ratio != n * ratio * ratio for n in others):
        return (
            f"a square with sides {float(ratio):g} times as long has "
            f"{float(ratio * ratio):g} times the area; the solution scales by {float(ratio):g}"
        )
    return ""


def sprint(f: ProblemFacts) -> str:
    q = f.q.lower()
    if re.search(r"\bsprints?\b|\bdash(?:es)?\b", q) and re.search(
        r"\b(?:\d+(?:\.\d+)?) ?km\b|\bmarathon\b", q
    ):
        return "a sprinting pace cannot be kept over a long race: the time does not scale from the sprint"
    return ""


# ---- percentages and fractions of the right whole --------------------------------------------

_SUCCESSIVE = re.compile(
    r"\bof (?:what (?:\w+ )?(?:was|is|has|have|had) left|what remains|"
    r"the [a-z]+ (?:she|he|they|we|it) (?:had|has|have) left|"
    r"the rest|the remainder|the remaining|the new \w+|the sale price|"
    r"those|them|the [\w-]+ (?:pupils|people|students|ones|children))\b|"
    r"\bof the [a-z]+ (?:(?:still )?in (?:it|them|the \w+)|that (?:is|was|are|were) left|"
    r"that remains?|left over|remaining)\b|"
    r"\bon the (?:total|new)\b|\bincluding\b|\banother \d+(?:\.\d+)? ?%|"
    r"\boff the (?:sale|new|reduced|discounted|lower) price\b|"
    r"\bof the (?:pupils|people|students|children|ones|members|players) (?:with|who|that)\b|"
    r"\bthen (?:\w+ ){0,5}(?:by )?\d+(?:\.\d+)? ?%|\beach year\b|\bevery year\b|"
    r"\b(?:of|to) the (?:reduced|discounted|new|increased|raised) (?:price|value|cost|amount|total)\b|"
    r"\ba further \d+(?:\.\d+)? ?%|"
    r"\ba (?:week|month|year) later\b"
)
_APPLIED = re.compile(
    r"(\d+(?:\.\d+)?) ?% of [$£€]?(\d+(?:\.\d+)?)|(\d+/\d+) of [$£€]?(\d+(?:\.\d+)?)|"
    r"[$£€]?(\d+(?:\.\d+)?) × (0\.\d+|1\.\d+)|(0\.\d+|1\.\d+) × [$£€]?(\d+(?:\.\d+)?)"
)
# "eats 2 slices", "spent £20": something taken away, between a whole and a share "of what is left"
_TAKEN_BEFORE = re.compile(
    rf"(?:{operations.TAKEN.pattern}|\b(?:takes?|took)\b) (?:away )?"
    r"[$£€]?\d+(?:\.\d+)?(?![\d/.]| ?%| ?percent)"
)


def percent_given(f: ProblemFacts) -> bool:
    """The question gives a percentage or a fraction."""
    q = f.q.lower()
    return "%" in q or bool(re.search(r"\d+/\d+", q))


def percent_of_wrong_whole(f: ProblemFacts) -> str:
    """A percentage or fraction is taken of the whole the story names: the second discount of the
    new price, a quarter of what was left; a price before a discount is found by dividing, not by
    adding the percentage back."""
    q, s = f.q.lower(), f.s.lower()
    if not percent_given(f):
        return ""
    if re.search(r"(?<!\bnot )(?<!n't )(?<!\bnever )\b(?:cancel|back to\b)", s) and "%" in q:
        return "two percentage changes do not cancel: the second is taken of a different amount"
    if _SUCCESSIVE.search(q) and re.search(r"(\d+(?:\.\d+)?) ?% \+ (\d+(?:\.\d+)?) ?%", s):
        return "percentages of different wholes cannot be added: the second applies to the new amount"
    givens = set(f.question_numbers)
    bases = [
        Fraction(b)
        for groups in _APPLIED.findall(s)
        for b in (groups[1], groups[3], groups[4], groups[7])
        if b
    ]
    later = _SUCCESSIVE.search(q)
    taken_first = later is not None and any(
        _TAKEN_BEFORE.search(q[: later.start()][q.find(show(b)) :]) for b in bases if show(b) in q
    )
    if later and bases and all(b in givens for b in bases) and (_percent_count(q) >= 2 or taken_first):
        return (
            "every percentage or fraction is taken of the starting amount, "
            "but the story takes the later ones of what is left or of the new total"
        )
    reverse = re.search(r"\bafter (?:a|an) \d+(?:\.\d+)? ?% (?:discount|reduction|cut|increase|rise)\b", q)
    if reverse and _BEFORE.search(f.target + " " + q.split(".")[-1]) and "÷" not in f.operators and bases:
        return (
            "the price before a percentage change is found by dividing by (100 % ± the change), "
            "not by adding the percentage of the new price"
        )
    return ""


def _percent_count(q: str) -> int:
    return len(re.findall(r"\d+(?:\.\d+)? ?%|\b\d+/\d+\b", q))


# ---- data a solution should have left out ----------------------------------------------------


def stop_in_moving_time(q: str, s: str, f: ProblemFacts) -> str:
    stop = re.search(
        r"\b(?:stop(?:s|ped)?|breaks?|lunch|rest(?:s|ed)?|pauses?|paused|waits?|waited|"
        r"warm(?:s|ed)? up|warm-up|cool(?:s|ed)? down)\b"
        r"[^.?!]*?(?<![\d.])(\d+)[- ]minute|"
        r"(?<![\d.])(\d+)[- ]minute (?:stop|break|lunch|rest|pause)",
        q,
    )
    if not stop or not re.search(
        r"\bwhile (?:\w+ )?(?:was |were |is )?(?:driving|moving|cycling|walking|running|riding|flying)\b|"
        r"\b(?:driving|moving|cycling|walking|running|riding|flying|swimming) (?:speed|time|pace)\b|"
        r"\bduring the (?:race|run|ride|journey|drive|swim|walk|flight)\b",
        f.target,
    ):
        return ""
    minutes = Fraction(stop.group(1) or stop.group(2))
    hours = minutes / 60
    if re.search(rf"\+ ?{show(hours)}\b|\+ ?{show(minutes)}\b", s):
        return f"the {float(minutes):g}-minute stop is not time spent moving, yet the solution adds it"
    return ""


def hypotenuse_as_height(q: str, s: str, f: ProblemFacts) -> str:
    if not re.search(r"right[- ]angled|right triangle", q) or "area" not in f.target:
        return ""
    sides = [Fraction(x) for x in re.findall(r"(\d+(?:\.\d+)?) ?(?:cm|m|mm|km)\b", q)]
    if len(sides) >= 3 and re.search(rf"× ?{show(max(sides))}\b|{show(max(sides))} ?×", s):
        return (
            f"the longest side ({float(max(sides)):g}) is not a height of a right-angled triangle; "
            "the two shorter sides are"
        )
    return ""


def height_in_floor(q: str, s: str, f: ProblemFacts) -> str:
    if not re.search(r"\b(?:floor|carpet|tiles?|tiling|per square metre|per m²|/m²)\b", q) or not re.search(
        r"\bhigh\b|\bheight\b|\btall\b", q
    ):
        return ""
    lengths = {Fraction(x) for x in re.findall(r"(\d+(?:\.\d+)?) ?m\b(?!²)", q)}
    product = _PRODUCT.search(s)
    if product and product.group(3) and {Fraction(x) for x in product.groups()[:3]} <= lengths:
        return "a floor's area is its length times its width; the room's height does not belong in it"
    return ""


def payments(q: str, s: str, f: ProblemFacts) -> str:
    count = re.search(
        r"\bin (\d+) (?:equal )?(?:monthly |weekly |yearly )?(?:payments|instalments|installments|parts)\b", q
    )
    if not count:
        return ""
    divisors = {Fraction(x) for x in re.findall(r"÷ ?(\d+)(?!\.?\d)", s)}
    if divisors and Fraction(count.group(1)) not in divisors:
        return (
            f"the amount is paid in {count.group(1)} payments, "
            f"but the solution divides by {', '.join(show(d) for d in divisors)}"
        )
    return ""


_AROUND = re.compile(r"\b(?:perimeter|around|round|edging|fence|fencing|border|rim|trim|skirting)\b")


def third_length_around(q: str, s: str, f: ProblemFacts) -> str:
    """The way round a rectangle (a pool's rim, a box's lid) is 2 × (length + width): its depth or
    height is not on it."""
    if not re.search(r"\brectangular\b|\brectangle\b", q) or not _AROUND.search(f.target + " " + q):
        return ""
    lengths = {Fraction(x) for x in re.findall(r"(\d+(?:\.\d+)?) ?(?:mm|cm|m|km)\b(?![²³])", q)}
    for terms in re.findall(r"2 ?× ?\((\d+(?:\.\d+)? ?\+ ?\d+(?:\.\d+)? ?\+ ?\d+(?:\.\d+)?)\)", s):
        values = {Fraction(x) for x in re.findall(r"\d+(?:\.\d+)?", terms)}
        if len(values) == 3 and values <= lengths:
            return "the way round a rectangle is 2 × (length + width); the third measure is not on it"
    return ""


# a rate of one kind of thing: "each cow gives", "$0.10 for each text", "50p per call"
_EACH_DOES = re.compile(r"\beach ([a-z]+?)s? (?:gives|produces|lays|eats|needs|makes)\b")
_CHARGED_EACH = re.compile(r"[$£€]?\d+(?:\.\d+)?p? (?:for each|for every|per|a|each) ([a-z]+?)s?\b")


def other_kinds(q: str, s: str, f: ProblemFacts) -> str:
    """Only the cows give milk, only the texts are charged: a rate of one kind of thing is not
    applied to a count that adds another kind (the dogs, the calls the plan includes)."""
    rates = [(m.group(1), "do that") for m in _EACH_DOES.finditer(q)]
    rates += [(m.group(1), "are charged at that rate") for m in _CHARGED_EACH.finditer(q)]
    for kind, said in rates:
        if unit(kind) is not None or unit(kind + "s") is not None:
            continue  # "$25 a month": a rate in time, not of a kind of thing
        counts = re.findall(r"(?<![\d.])(\d+) ([a-z]+?)s?\b", q)
        ours = {Fraction(n) for n, noun in counts if noun == kind}
        others = {Fraction(n) for n, noun in counts if noun != kind and not unit(noun)} - ours
        for a, b in re.findall(r"(?<![\d.])(\d+) ?\+ ?(\d+)(?!\.?\d)", s):
            pair = {Fraction(a), Fraction(b)}
            if pair & ours and pair & others:
                return f"only the {kind}s {said}; the solution counts other things too"
    return ""
