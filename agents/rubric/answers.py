"""Whether the solution's last statement is the result the question asks for, by what it does.

A question that asks what is left, what is empty, how many altogether or how much change is
answered by a result the solution works out, not by a number the question already gives; an answer
labelled as a total does not answer a question about what remains (nor the other way round); and
"how many do they have together" is not answered by what one of them has.
"""

from __future__ import annotations

import re
from fractions import Fraction

from agents.rubric.facts import TAKEN_IN_WORDS, ProblemFacts, show
from agents.rubric.owners import NOT_NAMES
from agents.verify.units import UNIT_PATTERN, unit

# what the question asks for: a remainder or a difference, or a total
_REMAINDER = re.compile(
    r"\b(?:left|remain\w*|empty|spare|unused|change|more than|fewer than|less than|difference|"
    r"how many more|how much more|how many fewer|how much less|still|not)\b|n't\b"
)
_TOTAL = re.compile(r"\b(?:altogether|in total|in all|together|combined|total|both)\b")
_TOTAL_SAID = re.compile(r"\b(?:altogether|in total|in all|total|combined)\b")
_JOINED = re.compile(r"\b(?:altogether|in total|in all|together|total|combined|between them)\b|\+")
_NAME = re.compile(r"\b([A-Z][a-z]+)\b")


def given_as_answer(f: ProblemFacts) -> str:
    """Asked what is left (or how many altogether), the solution only repeats a given number."""
    answer = f.final_answer
    asks = _REMAINDER.search(f.target) or re.search(r"\b(?:altogether|in total|in all)\b", f.target)
    if (
        answer is None
        or not asks
        or re.search(r"\bhow long\b|\bhow much time\b|\bminutes\b|\bhours\b", f.target)
    ):
        return ""  # a time the story fixes may rightly be the answer
    if answer not in f.question_numbers or len(set(f.question_numbers)) < 2:
        return ""
    if answer in {v for _, v in f.verification.results} or f.verification.checked:
        return ""
    return f"the answer {show(answer)} only repeats a number the question gives; nothing asked is worked out"


_STILL_ASKED = re.compile(
    r"\b(?:left(?!-)|remain\w*|empty|still (?:has|have|had|needs?|to)|spare|unused|unsold|not yet)\b"
)


def rest_never_taken(f: ProblemFacts) -> str:
    """'How many pages does she still have to read' (or how many seats were empty) is what is left
    of a whole: a solution that only adds or multiplies and never takes anything away answers with
    the part done or the whole, not the rest."""
    if not _STILL_ASKED.search(f.target) or _TOTAL.search(f.target) or f.final_answer is None:
        return ""
    taken = "-" in f.operators or TAKEN_IN_WORDS.search(f.s.lower())
    if taken or "÷" in f.operators or not ({"+", "×"} & f.operators):
        return ""
    story = f.story
    if _STILL_ASKED.search(story):
        return ""  # "3 rows of 4 eggs are left": the story gives what is left, to be counted up
    return "the question asks what is left; the solution never takes anything away"


def total_for_remainder(f: ProblemFacts) -> str:
    """Asked what is empty or left, the answer is labelled as the total (or the other way round)."""
    if found := rest_never_taken(f):
        return found
    final = f.final_sentence
    asks_rest = _REMAINDER.search(f.target) and not _TOTAL.search(f.target)
    if asks_rest and _TOTAL_SAID.search(final) and not _REMAINDER.search(final):
        return "the question asks what remains; the solution's answer is a total"
    left = re.search(r"\b(?:left|remain\w*)\b", f.target)
    if left and _SPENT_SAID.search(final) and not _REMAINDER.search(final) and not _KEPT.search(final):
        return "the question asks how much is left; the solution's answer is what was spent"
    return ""


_KEPT = re.compile(r"\b(?:leaves?|leaving|keeps?|kept|has|have|had|owns?)\b")
_SPENT_SAID = re.compile(r"\b(?:spends?|spent|pays?|paid|costs?|uses?|used)\b")
_AGE_ASK = re.compile(r"\b[Hh]ow old (?:is|was|will) ([A-Z][a-z]+)\b")


def someone_elses_age(f: ProblemFacts) -> str:
    """'How old is Amina?' is not answered by Tariq's age: the final sentence speaks of another
    person of the story, the one asked about is never named, and the years between them are never
    used."""
    asked = _AGE_ASK.search(f.question)
    if not asked:
        return ""
    names = {n for n in _NAME.findall(f.question) if n not in NOT_NAMES}
    # the last sentence with a number that names someone: where the answer is said of a person
    numbered = [p for p in re.split(r"(?<=[.!?])\s+", f.solution.strip()) if re.search(r"\d", p)]
    naming = [{n for n in _NAME.findall(p) if n in names} for p in numbered]
    said: set[str] = next((s for s in reversed(naming) if s), set())
    gaps = {Fraction(n) for n in re.findall(r"(?<![\d.])\b(\d+) years? (?:older|younger)\b", f.q)}
    unused = gaps and not gaps & set(f.solution_numbers)  # the relation between them never applied
    if said and asked.group(1) not in f.solution and unused:
        return f"the question asks how old {asked.group(1)} is; the answer is {', '.join(sorted(said))}'s age"
    return ""


def one_for_all(f: ProblemFacts) -> str:
    """'How many do they have together?' answered with what one of them has."""
    if not re.search(r"\b(?:together|altogether|in total|in all|combined|between them)\b", f.target):
        return ""
    names = {n for n in _NAME.findall(f.question) if n not in NOT_NAMES}
    if len(names) < 2:
        return ""
    said = {n for n in _NAME.findall(f.final_sentence.title()) if n in names}
    raw = {n for n in _NAME.findall(f.answer_sentence) if n in names}
    if len(raw) == 1 and not _JOINED.search(f.final_sentence) and not said - raw:
        return f"the question asks how many they have together; the answer gives {next(iter(raw))}'s alone"
    return ""


_WHOLE_ASK = re.compile(r"\b(?:total|altogether|in all|whole|entire|all (?:the |of the )?\d*)\b")


def one_of_many(f: ProblemFacts) -> str:
    """Asked the total for 7 boxes, the solution works out one box and stops there: the count of
    boxes the question gives is never used, and the answer is said of one."""
    if not _WHOLE_ASK.search(f.target) or f.final_answer is None:
        return ""
    used = set(f.solution_numbers)
    for number, plural, noun in re.findall(r"(?<![\d.])\b(\d+) (([a-z]+?)(?:es|s))\b", f.q.lower()):
        count = Fraction(number)
        if count <= 1 or count in used or len(noun) < 3:
            continue
        single = rf"\b(?:a|one|1|each|per|every) {noun}\b"
        if re.search(single, f.s.lower()):
            return (
                f"the question asks about all {number} {plural}; the answer is worked out for one "
                f"and never uses the {number}"
            )
    return ""


_THEN_DOES = re.compile(
    r"\b(?:then|after that|afterwards|later)\b,? (?:[a-z]+ ){0,3}?"
    r"(?:gives?|gave|eats?|ate|loses?|lost|sells?|sold|spends?|spent|uses?|used|buys?|bought|gets?|got|"
    r"adds?|added|returns?|returned|breaks?|broke|finds?|found) "
    r"(?:back )?(?:another |away )?(\d+(?:\.\d+)?)(?!\.?\d)\b(?!/| ?%)"  # a count, not a share
)


def last_step_skipped(f: ProblemFacts) -> str:
    """'Shared among 6, then each gives 2 back; how many does each keep?' is not answered by the
    share: the story's later step, and its number, never enter the solution."""
    later = _THEN_DOES.search(f.q.lower())
    if not later or f.final_answer is None:
        return ""
    number = Fraction(later.group(1))
    if number in set(f.solution_numbers):
        return ""
    return f"the story goes on ({later.group(0).strip()}), but the solution never applies that step"


def answer_role(f: ProblemFacts) -> str:
    """Any of the above."""
    return (
        given_as_answer(f)
        or total_for_remainder(f)
        or one_for_all(f)
        or one_of_many(f)
        or someone_elses_age(f)
        or last_step_skipped(f)
    )


_SAVED = re.compile(
    r"\bhow much (?:money )?(?:does|did|will|would|can|could|do) [a-z ]{1,25}?\bsave\b|"
    r"\bhow much (?:money )?(?:is|was|will be) saved\b|\bhow much (?:is|was) the (?:saving|discount)\b|"
    r"\bhow much (?:is|was) (?:taken )?off\b|\bwhat is the (?:saving|discount)\b"
)
_TAKEN_OFF = re.compile(r"(\d+(?:\.\d+)?) ?- ?[$£€]?(\d+(?:\.\d+)?) ?= ?[$£€]?(\d+(?:\.\d+)?)")


def price_for_saving(f: ProblemFacts) -> str:
    """Asked how much is saved, the answer is the amount taken off, not the price left to pay."""
    if not _SAVED.search(f.target) or f.final_answer is None:
        return ""
    given = set(f.question_numbers)
    for price, saved, paid in _TAKEN_OFF.findall(f.s):
        if Fraction(price) in given and f.final_answer == Fraction(paid):
            return (
                f"the question asks how much is saved ({saved}); the solution answers with the price "
                f"left to pay ({paid})"
            )
    # the same when the solution writes the cut as a subtraction in other words: the answer is what
    # a given price comes to after a given percentage is taken off it
    rates = [Fraction(r) for r in re.findall(r"(\d+(?:\.\d+)?) ?%", f.story)]
    prices = [Fraction(p) for p in re.findall(r"[$£€] ?(\d+(?:\.\d+)?)", f.story)]
    for rate in rates:
        for price in prices:
            cut = price * rate / 100
            if f.final_answer == price - cut and cut != price - cut:
                return (
                    f"the question asks how much is saved ({show(cut)}); the solution answers with the price "
                    f"left to pay ({show(price - cut)})"
                )
    return ""


_UNIT_ASKED = re.compile(rf"\bhow many ({UNIT_PATTERN})\b|\bin ({UNIT_PATTERN})\?")


def unit_asked(f: ProblemFacts) -> str:
    """'How many minutes' answered '2.75 hours': the measure is right, the unit is not the one asked."""
    asked = _UNIT_ASKED.search(f.target)
    if not asked or f.final_answer is None:
        return ""
    wanted = unit(asked.group(1) or asked.group(2))
    said = re.findall(rf"(\d+(?:\.\d+)?) ?({UNIT_PATTERN})\b", f.final_sentence.lower())
    if wanted is None or not said:
        return ""
    number, name = said[-1]
    given = unit(name)
    if wanted.dimension not in ("time", "length", "mass", "volume"):
        return ""  # money: "$5.10" says its unit with a sign
    if given is None or given.dimension != wanted.dimension or given.scale == wanted.scale:
        return ""
    if any((u := unit(n)) is not None and u.scale == wanted.scale for _, n in said):
        return ""  # "2.75 hours = 165 minutes": the asked unit is there too
    return f"the question asks for {asked.group(1) or asked.group(2)}; the answer is {number} {name}"
