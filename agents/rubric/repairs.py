"""Deterministic repairs for the defects the offline checks find.

Repairs edit parsed spans, never text by search-and-replace: a wrong result is replaced at the
offset where it stands (``13 + 3 = 3`` becomes ``13 + 3 = 16``, not ``116 + 16 = 16``), and
every sentence the reviser writes names this problem's own quantities and story.

A repair is made soundly or not at all: it never changes a quantity the question gives (the givens
are diffed), a corrected result is carried to every later use so the solution is re-derived from
its first step, and the repaired version must pass the verifier's chain check. A repair that
cannot meet that is dropped, with a note that says why.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from agents.rubric.detectors import _INJECTION, _first_duration
from agents.rubric.facts import ProblemFacts
from agents.schemas import Problem
from agents.verify.expressions import Evaluator, NotArithmetic, tokens
from agents.verify.givens import changed_givens, givens
from agents.verify.text import ZERO_WIDTH, disguised, plain
from agents.verify.verifier import verify

# "expression = result" in digits, as written: the result's span is what a repair may replace.
_CLAIM = re.compile(
    r"(?P<expr>(?<![\w.^])(?:\(\s*)*\d+(?:\.\d+)?(?:/\d+)?(?:\s*[-+×x*÷/]\s*(?:\(\s*)*\d+(?:\.\d+)?(?:/\d+)?(?:\s*\))*)+)"
    r"\s*=\s*\$?(?P<result>-?\d+(?:\.\d+)?(?:/\d+)?)(?![\d/^]|\.\d|\s?[×x*·]\s?10\b|[eE]\d)"
)


@dataclass
class Draft:
    """The problem being repaired, and what the reviser says about each step."""

    question: str
    solution: str
    notes: list[str]

    @property
    def facts(self) -> ProblemFacts:
        """Fresh facts for the current text."""
        return ProblemFacts(self.question, self.solution)


def format_number(value: Fraction) -> str:
    """12 → '12', 5/2 → '2.5', 1/3 → '0.33'."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.2f}".rstrip("0").rstrip(".")


def _evaluate(expression: str) -> Fraction | None:
    text = re.sub(r"(?<=[\d)])\s*[x*]\s*(?=[\d(])", " × ", expression)
    try:
        value = Evaluator(tokens(text, set())).run().value
    except (NotArithmetic, ZeroDivisionError, ValueError):
        return None
    return value if isinstance(value, Fraction) else None


def _fix_arithmetic(draft: Draft) -> None:
    """Re-derive the solution from its first step: correct the first wrong result at its own span,
    carry the corrected value to every later use of the old one, and go on until every claim
    holds (a later total computed from the old value is then wrong, and corrected in its turn)."""
    data = {g.value for g in givens(draft.question)}
    for _ in range(_MAX_CORRECTIONS):
        wrong = _first_wrong(draft.solution)
        if wrong is None:
            _carry_stale(draft, data)
            if _first_wrong(draft.solution) is None:
                return
            continue
        match, actual = wrong
        stated = match["result"]
        value = _like(stated, actual)
        start, end = match.span("result")
        claim = match.group(0)
        carried = _carry(draft.solution[end:], Fraction(stated), value, data)
        draft.solution = draft.solution[:start] + value + carried[0]
        note = f"'{claim}' is wrong: {claim.split('=')[0].strip()} is {value}. I correct that result"
        draft.notes.append(
            note + (f" and carry {value} to its {carried[1]} later use(s)." if carried[1] else ".")
        )


def _carry_stale(draft: Draft, data: set[Fraction]) -> None:
    """A result corrected earlier but not carried ("14 × 8.65 = 121.1", then "120.10 + 12"): the
    chain check names the stale number and the result it stands for; every use of the stale
    number is written as that result (a later total then is wrong, and corrected in its turn)."""
    for error in verify(draft.solution, draft.question).errors:
        if error.kind != "chain":
            continue
        stale, result = Fraction(error.stated), Fraction(error.actual)
        carried, count = _carry(draft.solution, stale, format_number(result), data)
        if count:
            draft.solution = carried
            draft.notes.append(
                f"{error.stated} is an old value of a result now {error.actual}: I carry {error.actual} "
                f"to its {count} use(s)."
            )
            return


_MAX_CORRECTIONS = 12
_LITERAL = re.compile(r"(?<![\w.:/])\d+(?:\.\d+)?(?![\d:/]|\.\d)")


def _first_wrong(solution: str) -> tuple[re.Match[str], Fraction] | None:
    """The first claim whose stated result is not what its expression computes."""
    for match in _CLAIM.finditer(solution):
        actual = _evaluate(match["expr"])
        if actual is not None and actual != Fraction(match["result"]):
            return match, actual
    return None


def _carry(rest: str, old: Fraction, new: str, data: set[Fraction]) -> tuple[str, int]:
    """``rest`` with each number equal to the old result written as the corrected one. A number the
    question also gives is left alone (it may be that given, not the old result): the chain check
    then decides whether the repair holds."""
    if old in data:
        return rest, 0
    count = 0

    def one(match: re.Match[str]) -> str:
        nonlocal count
        if Fraction(match.group(0)) != old:
            return match.group(0)
        count += 1
        return _like(match.group(0), Fraction(new))

    return _LITERAL.sub(one, rest), count


def _like(written: str, value: Fraction) -> str:
    """``value`` written like ``written``: with its decimals when it has as few (120.10 → 121.10)."""
    places = len(written.split(".")[1]) if "." in written else 0
    if places and (value * 10**places).denominator == 1:
        return f"{float(value):.{places}f}"
    return format_number(value)


def _drop_instructions(draft: Draft) -> None:
    """Remove every sentence addressed to a grader or a model (hidden characters undone first)."""
    removed = 0
    for field in ("question", "solution"):
        text = getattr(draft, field)
        sentences = re.split(r"(?<=[.?!\]\)])\s+", text)
        kept = [s for s in sentences if not (_INJECTION.search(plain(s)) or disguised(s))]
        if len(kept) < len(sentences):
            removed += len(sentences) - len(kept)
            setattr(draft, field, ZERO_WIDTH.sub("", " ".join(kept)).strip())
    if removed:
        draft.notes.append(f"{removed} sentence(s) address the grader, not the pupil: I remove them.")


def _fix_duration(draft: Draft) -> None:
    """Say the duration stays the same and answer with it (in this problem's own words)."""
    facts = draft.facts
    duration = _first_duration(facts.q.lower())
    unit = re.search(r"\d+(?:\.\d+)? ?(seconds?|minutes?|hours?|days?)\b", facts.q)
    if duration is None or unit is None:
        return
    amount = f"{format_number(duration)} {unit.group(1)}"
    asked = facts.asks[-1] if facts.asks else facts.question
    if asked in draft.question:
        draft.question = draft.question.replace(
            asked, f"It takes the same time however many take part. {asked}", 1
        )
    draft.solution = (
        f"The time does not depend on how many take part: they all do it at the same time, so it still "
        f"takes {amount}. The answer is {amount}."
    )
    draft.notes.append(
        f"The solution scales the {amount} as if more participants changed it, but they all take part "
        f"at once. I say so in the question and answer {amount}."
    )


def _single_question(draft: Draft) -> None:
    asks = draft.facts.asks
    if len(asks) > 1:
        for extra in asks[1:]:
            draft.question = draft.question.replace(extra, "").strip()
        draft.notes.append(f"The text asks {len(asks)} things: I keep the first question, “{asks[0]}”.")


_UP = re.compile(r"\b(?:needed|needs?|must|enough|required|at least|to (?:carry|hold|seat|fit|take))\b")
_DOWN = re.compile(
    r"\b(?:can|could)\b(?: \w+)? (?:make|fill|buy|afford|cut|bake|get|pack|serve|sew)\b|\b(?:full|complete)\b"
)


def _whole_count(draft: Draft) -> None:
    """Answer a count with a whole number, rounded the way the question asks: up for what is needed
    (buses for 200 pupils), down for what can be made (full boxes). The fractional count is kept as
    the computed value it is, no longer stated as a count. When the question does not say which
    way, no rounding is sound (7.5 eggs for 30 muffins: 7 eggs make 28, 8 eggs 32): no repair."""
    facts = draft.facts
    answer, asked = facts.final_answer, re.search(r"how many (\w+)", facts.target)
    if answer is None or answer.denominator == 1 or not asked:
        return
    noun, up = asked.group(1), bool(_UP.search(facts.target))
    if up == bool(_DOWN.search(facts.target)):
        draft.notes.append(
            f"{format_number(answer)} {noun} is not a whole number, and the question does not say whether "
            f"it asks for enough {noun} (round up) or for whole {noun} that suffice (round down): no "
            f"rounding answers it soundly, so I do not repair the count."
        )
        return
    whole = -(-answer.numerator // answer.denominator) if up else answer.numerator // answer.denominator
    draft.solution = _uncounted(draft.solution, answer, noun) + (
        f" {noun.capitalize()} come whole, so the answer is {whole} {noun} "
        f"({'one more is needed for the rest' if up else 'the part left over is not enough for another'})."
    )
    draft.notes.append(
        f"{format_number(answer)} {noun} is not a whole number: I round {'up' if up else 'down'} to {whole} "
        f"and no longer call {format_number(answer)} a number of {noun}."
    )


def _uncounted(solution: str, value: Fraction, noun: str) -> str:
    """The solution without a sentence that states ``value`` (not whole) as a count of ``noun``: the
    noun is dropped after the computed value, and a sentence that only restates it goes."""
    count = re.compile(rf"(?<![\d.])(\d+(?:\.\d+)?|\d+/\d+)\s+{re.escape(noun)}\b")
    kept = []
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", solution.strip()):
        if any(_number(m.group(1)) == value for m in count.finditer(sentence)):
            if not re.search(r"[=×÷+\-*/]", sentence):
                continue  # "So she needs 4.44 buses.": a restatement of a fractional count
            sentence = count.sub(
                lambda m: m.group(1) if _number(m.group(1)) == value else m.group(0), sentence
            )
        kept.append(sentence)
    return " ".join(kept)


def _number(text: str) -> Fraction:
    return Fraction(text)


def fractional_counts(solution: str, noun: str) -> list[str]:
    """Where the solution states a count of ``noun`` that is not whole ("7.5 eggs")."""
    count = re.compile(rf"(?<![\d.])(\d+\.\d+|\d+/\d+|\d+ \d+/\d+)\s+{re.escape(noun)}\b")
    return [m.group(0) for m in count.finditer(solution) if "." in m.group(1) or "/" in m.group(1)]


# Which repairs answer which reported checks, in the order they are applied.
REPAIRS: tuple[tuple[frozenset[str], Callable[[Draft], None]], ...] = (
    (frozenset({"no_instructions_in_text"}), _drop_instructions),
    (frozenset({"no_false_proportionality"}), _fix_duration),
    (frozenset({"arithmetic_correct"}), _fix_arithmetic),
    (frozenset({"one_task"}), _single_question),
    (frozenset({"whole_counts"}), _whole_count),
)


def repair(problem: Problem, reported: set[str]) -> tuple[Problem, list[str]]:
    """Apply, in a fixed order, every repair that answers a reported check and is sound: one that
    would change a given of the question, or leave the solution's chain broken, is dropped (its
    note says why) and the repairs before it stand."""
    draft = Draft(problem.question, problem.solution, [])
    for answers, fix in REPAIRS:
        if answers & reported:
            before = Draft(draft.question, draft.solution, list(draft.notes))
            fix(draft)
            refusal = _unsound(before, draft, fix)
            if refusal:
                draft.question, draft.solution = before.question, before.solution
                draft.notes = [*before.notes, *draft.notes[len(before.notes) :], refusal]
    return Problem(question=draft.question, solution=draft.solution), draft.notes


# The repairs that rewrite the solution's computations: what they leave must hold as a chain.
_REDERIVING = (_fix_arithmetic, _whole_count, _fix_duration)


def _unsound(before: Draft, after: Draft, fix: Callable[[Draft], None]) -> str:
    """Why the step from ``before`` to ``after`` is no repair ("" when it is one). Removing a
    sentence addressed to the checker may remove its numbers: they are no data of the story."""
    if (before.question, before.solution) == (after.question, after.solution):
        return ""
    changed = changed_givens(before.question, after.question) if fix is not _drop_instructions else []
    if changed:
        return f"That would change the data of the problem ({'; '.join(changed)}), so I do not make it."
    old, new = verify(before.solution, before.question), verify(after.solution, after.question)
    if len(new.errors) > len(old.errors) or (fix in _REDERIVING and new.errors):
        return f"That would leave the solution's chain broken ({new.errors[0].line()}), so I do not make it."
    asked = re.search(r"how many (\w+)", after.facts.target)
    stale = fractional_counts(after.solution, asked.group(1)) if asked and fix is _whole_count else []
    if stale:
        return f"A sentence would still state '{stale[0]}' above the whole answer, so I do not make it."
    return ""
