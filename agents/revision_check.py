"""Did a revision revise? What makes a reply of the model under test a failed attempt.

A reply that is a problem is not yet a revision. It is a failed attempt when:

- it is the version it was asked to revise again, up to white space (*unchanged*);
- it pastes the feedback it was given into the problem: it holds a sentence of a finding or a
  suggestion (of :data:`PASTE_WORDS` words or more) nearly whole — :data:`PASTE_SHARE` of its words,
  in runs of :data:`QUOTE_WORDS` words that the version it revised lacks. The feedback's quotations
  are left out (wording a judge proposes, in quotes, may be adopted), and so is what the revised
  version already held (feedback that quotes the problem is not pasted back by keeping it); a clause
  of a finding reused in a sentence of the revision's own is no paste;
- the verifier reads the same givens in its question and the same computations and final answer in
  its solution (:class:`Reading`, not the text), and either the loop refused the version on that
  reading (the verifier's errors, the solver's disagreement: no rewording mends a computation), or
  every word it changes is one no finding names. A finding names a word when the word stands in the
  finding's own text, outside what the finding quotes of the version (a run of
  :data:`QUOTE_WORDS` words or more shared with it); words of three letters or fewer name nothing
  alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from fractions import Fraction

from agents.answers import stated_answer
from agents.schemas import Problem
from agents.verify.givens import givens
from agents.verify.verifier import verify

PASTE_WORDS = 8  # a feedback sentence shorter than this is a phrase, which a revision may share
PASTE_SHARE = 0.8  # the share of a feedback sentence a revision holds when it pasted the sentence
QUOTE_WORDS = 4  # a run this long shared with a text is a copy of it, not words in common
_WORD = re.compile(r"\w+(?:[.,:/]\w+)*")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’|(?<!\w)'[^']*'(?!\w)")

UNCHANGED = "it returned the version it was asked to revise unchanged"


@dataclass(frozen=True)
class Reading:
    """A version as the verifier reads it: the givens of its question (value and noun), the
    computations of its solution (operands and stated result) and its final answer."""

    givens: Counter[tuple[Fraction, str]]
    computations: Counter[tuple[tuple[Fraction, ...], Fraction | None]]
    answer: float | None


def reading(problem: Problem) -> Reading:
    """How the verifier reads ``problem``."""
    found = verify(problem.solution, problem.question)
    answer = stated_answer(problem.solution)
    return Reading(
        givens=Counter(g.key for g in givens(problem.question)),
        computations=Counter((step.operands, step.result) for step in found.steps),
        answer=answer.value if answer is not None else None,
    )


def words(text: str) -> list[str]:
    """The words of ``text`` as the checks compare them (case folded, numbers kept whole)."""
    return _WORD.findall(text.casefold())


def not_revised(
    previous: Problem, revised: Problem, feedback: Sequence[str], refused: Sequence[str] = ()
) -> str | None:
    """Why ``revised`` is no revision of ``previous`` (None: it is one). ``feedback``: the findings
    and suggestions the model under test was given; ``refused``: the loop's evidence against
    ``previous`` (the verifier's errors, the solver's disagreement)."""
    before, after = _text(previous), _text(revised)
    if before == after:
        return UNCHANGED
    pasted = _pasted(before, after, feedback)
    if pasted:
        return f"it pasted the panel's feedback into the problem ('{pasted}')"
    if reading(previous) != reading(revised):
        return None
    if refused:
        return (
            "it kept every given and every computation of the version it was asked to revise, and with "
            f"them the error found in it ({refused[0]})"
        )
    changed = _changes(before, after)
    if not _named(changed, before, feedback):
        shown = ", ".join(f"'{a}' → '{b}'" for a, b in changed[:3]) or "spacing and punctuation"
        return f"it changed only wording no judge's finding names ({shown})"
    return None


def _text(problem: Problem) -> list[str]:
    return [*words(problem.question), "\n", *words(problem.solution)]


def _runs(tokens: Sequence[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def _pasted(before: list[str], after: list[str], feedback: Sequence[str]) -> str | None:
    """The first sentence of the feedback's own words (outside its quotations) of PASTE_WORDS words
    or more that ``after`` holds nearly whole (PASTE_SHARE of its words, in runs of QUOTE_WORDS that
    ``before`` lacks); None when there is none."""
    new = _runs(after, QUOTE_WORDS) - _runs(before, QUOTE_WORDS)
    for text in feedback:
        for sentence in _SENTENCE.split(_QUOTED.sub(" ", text)):
            tokens = words(sentence)
            if len(tokens) >= PASTE_WORDS and _covered(tokens, new) >= PASTE_SHARE * len(tokens):
                return " ".join(tokens[:12]) + (" …" if len(tokens) > 12 else "")
    return None


def _covered(tokens: list[str], runs: set[tuple[str, ...]]) -> int:
    """How many of ``tokens`` lie in a run of QUOTE_WORDS of them that is one of ``runs``."""
    return sum(_inside(tokens, runs))


def _inside(tokens: list[str], runs: set[tuple[str, ...]]) -> list[bool]:
    inside = [False] * len(tokens)
    for i in range(len(tokens) - QUOTE_WORDS + 1):
        if tuple(tokens[i : i + QUOTE_WORDS]) in runs:
            inside[i : i + QUOTE_WORDS] = [True] * QUOTE_WORDS
    return inside


def _changes(before: list[str], after: list[str]) -> list[tuple[str, str]]:
    """Each changed stretch of words: (what it was, what it became)."""
    matcher = SequenceMatcher(a=before, b=after, autojunk=False)
    return [
        (" ".join(before[i1:i2]), " ".join(after[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _named(changed: list[tuple[str, str]], before: list[str], feedback: Sequence[str]) -> bool:
    """Whether the change is one a finding asks for: it deletes a passage of QUOTE_WORDS words or
    more (an injected sentence, a distractor: no rewording), or a finding names a word of it (what it
    replaced or removed, or, a pure insertion, what it inserted) in the finding's own text."""
    own = set().union(*(_own_words(text, before) for text in feedback))
    for old, new in changed:
        if not new and len(old.split()) >= QUOTE_WORDS:
            return True
        candidates = (old or new).split()
        if any(len(word) > 3 and word in own for word in candidates):
            return True
    return False


def _own_words(finding: str, version: list[str]) -> set[str]:
    """The finding's words outside every run of QUOTE_WORDS or more it shares with the version."""
    tokens = words(finding)
    hidden = _inside(tokens, _runs(version, QUOTE_WORDS))
    return {word for word, quoted in zip(tokens, hidden, strict=True) if not quoted}
