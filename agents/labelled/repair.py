"""Was a flawed problem *repaired*? One finished run judged against its labelled answer key.

A run of the loop on a flawed problem ends with a final version. It counts as **repaired** only
when all four of these hold, each read by the project's own checkers (never by comparing text), and
the fifth below:

- the final version passed the panel (accepted, or for the offline panel screened);
- the verifier checked its solution's chain whole (``verify(...).verified``);
- its final answer equals the answer key after converting units, within rounding
  (:func:`agents.answers.agree`; answers of different dimensions are not equal). The key is the
  corrected version's answer: the item's labelled ``answer`` where it states one that can be read,
  else the final answer its corrected solution states (:func:`agents.labelled.evidence.answer_key`).
  The labelled answer comes first because a corrected solution may end with a check ("Check: 20 %
  of €60 is €12, and 60 − 12 = €48"), whose last number is not the answer;
- the givens of its question, as the verifier reads them (:func:`agents.verify.givens.givens`: each
  quantity's value and what it counts), are those of the original question or of the corrected one
  (as a multiset: a reordered story keeps its givens, a changed or added number does not).

One more condition holds of every repair: the final version is not the flawed original itself (its
question and solution, whitespace collapsed). A panel that let the flawed original through unchanged
has repaired nothing, even where its stated answer happens to be the key's (a missing-data problem
whose solution assumes the missing number): that run is **unrevised**.

A final version that passed with another answer is **accepted but wrong**, whatever else holds (the
flawed original passed with its wrong answer is one); one that passed with the key's answer is
**unrevised** when it is the original, else **givens changed** when its givens are neither the
original's nor the correction's, else **unverified** when the verifier could not check its chain.
A loop that ended refused (``exhausted``) **gave up**. A run that ended in no verdict of the panel
(an error, held for review, cancelled) is **undecided** and is counted apart, never in a rate.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from agents.answers import FinalAnswer, agree, stated_answer
from agents.labelled.evidence import answer_key
from agents.labelled.labels import LabelledItem
from agents.outcome import PASSED_OUTCOMES, REFUSED_OUTCOMES
from agents.schemas import Problem
from agents.verify.givens import changed_givens, givens
from agents.verify.units import SIGNS
from agents.verify.verifier import verify

RepairVerdict = Literal[
    "repaired", "accepted_but_wrong", "unrevised", "givens_changed", "unverified", "gave_up", "undecided"
]
VERDICTS: tuple[RepairVerdict, ...] = (
    "repaired",
    "accepted_but_wrong",
    "unrevised",
    "givens_changed",
    "unverified",
    "gave_up",
    "undecided",
)


@dataclass(frozen=True)
class RepairKey:
    """What a repair is checked against: the flawed original, its corrected version, and the
    answer key (the corrected version's final answer)."""

    original: Problem
    corrected: Problem
    answer: FinalAnswer

    @classmethod
    def of(cls, original: Problem, corrected: Problem, answer: str | None = None) -> RepairKey | None:
        """The key of a flawed problem and its correction, whose final answer is ``answer`` when it
        is given and can be read, else the one the corrected solution states; None when neither can
        be read (no repair can then be checked)."""
        key = (stated_answer(answer) if answer else None) or answer_key(corrected.solution)
        return None if key is None else cls(original, corrected, key)

    @classmethod
    def of_item(cls, item: LabelledItem) -> RepairKey | None:
        """The key of a labelled flawed item; None for a control or an item with no corrected
        version, or none whose answer can be read."""
        if item.kind != "flawed" or item.corrected is None:
            return None
        return cls.of(item.problem, item.corrected, item.answer)


@dataclass(frozen=True)
class Repair:
    """One run classified: its verdict, and why it is not a repair (lines a person reads)."""

    verdict: RepairVerdict
    reasons: tuple[str, ...] = ()
    answer: str | None = None  # the final version's answer as written ("25 minutes"), None if none

    @property
    def repaired(self) -> bool:
        """All four conditions held."""
        return self.verdict == "repaired"

    @property
    def decided(self) -> bool:
        """The run ended in the panel's verdict (passed, or refused after its last round)."""
        return self.verdict != "undecided"


def classify(key: RepairKey, outcome: str, final: Problem) -> Repair:
    """Classify a finished run of ``key``'s flawed problem that ended in ``outcome`` with ``final``
    as its last judged version."""
    if outcome in REFUSED_OUTCOMES:
        return Repair("gave_up", ("the loop ended without the panel passing a version",))
    if outcome not in PASSED_OUTCOMES:
        return Repair("undecided", (f"the run ended {outcome}: no verdict of the panel",))
    stated = stated_answer(final.solution)
    reasons = [
        *_answer_reasons(stated, key.answer),
        *_unrevised_reasons(key, final),
        *_givens_reasons(key, final.question),
        *_chain_reasons(final),
    ]
    written = shown(stated) if stated is not None else None
    if not reasons:
        return Repair("repaired", (), written)
    return Repair(_verdict(stated, key, final), tuple(reasons), written)


def _verdict(stated: FinalAnswer | None, key: RepairKey, final: Problem) -> RepairVerdict:
    """The first condition that failed, in the order wrong answer, unrevised, givens, chain."""
    if _answer_reasons(stated, key.answer):
        return "accepted_but_wrong"
    if _unrevised_reasons(key, final):
        return "unrevised"
    return "givens_changed" if _givens_reasons(key, final.question) else "unverified"


def _unrevised_reasons(key: RepairKey, final: Problem) -> list[str]:
    if _collapsed(final) == _collapsed(key.original):
        return ["the final version is the flawed original, unrevised: nothing was repaired"]
    return []


def _collapsed(problem: Problem) -> tuple[str, str]:
    """A version's text as compared: runs of whitespace are one space."""
    return " ".join(problem.question.split()), " ".join(problem.solution.split())


def shown(answer: FinalAnswer) -> str:
    """An answer as read: its value and unit ("25 minutes", "40 %", "$36")."""
    number = f"{answer.value:g}"
    if answer.percent:
        return f"{number} %"
    if len(answer.unit_text) == 1 and answer.unit_text in SIGNS:
        return answer.unit_text + number
    return f"{number} {answer.unit_text}".strip()


def _answer_reasons(stated: FinalAnswer | None, key: FinalAnswer) -> list[str]:
    if stated is None:
        return [f"the final solution states no answer that can be read; the key is {shown(key)}"]
    if agree(stated, key) is not True:
        return [f"the final answer is {shown(stated)}; the key is {shown(key)}"]
    return []


def same_givens(question: str, reference: str) -> bool:
    """Whether two questions give the same quantities (value and what it counts), in any order."""
    return Counter(g.key for g in givens(question)) == Counter(g.key for g in givens(reference))


def _givens_reasons(key: RepairKey, question: str) -> list[str]:
    if same_givens(question, key.original.question) or same_givens(question, key.corrected.question):
        return []
    changes = changed_givens(key.corrected.question, question) or changed_givens(
        key.original.question, question
    )
    detail = "; ".join(changes[:3]) if changes else "the same givens in another order"
    return [f"the givens are neither the original's nor the correction's ({detail})"]


def _chain_reasons(final: Problem) -> list[str]:
    found = verify(final.solution, final.question)
    if found.verified:
        return []
    lines = [e.line() for e in found.errors] + [s.line() for s in found.unverified]
    first = lines[0] if lines else "nothing it could check"
    return [f"the verifier did not check the solution's chain whole ({first})"]
