"""One version of a labelled item, judged once: what the bench's figures are computed over.

The validity bench (:mod:`graphs.benches.validity`) drives the loop on each version and records it
as a :class:`Judged`; the figures (:mod:`graphs.analysis.validity_metrics`,
:mod:`graphs.analysis.votes_worth`, :mod:`graphs.analysis.validity_sources`) read only these records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents.labelled.matching import check_matches, gate_matches
from agents.outcome import PASSED_OUTCOMES, REFUSED_OUTCOMES, Outcome
from agents.schemas import JudgeName
from graphs.scoring import Vote

Version = Literal["flawed", "corrected", "control", "twin", "paraphrase"]

# Outcomes that are the panel's verdict on a version: passed (accepted, or screened: the offline
# panel's "found nothing") or refused.
PASSED: frozenset[str] = PASSED_OUTCOMES
REFUSED: frozenset[str] = REFUSED_OUTCOMES


@dataclass(frozen=True)
class Judged:
    """One version of one labelled item, judged once."""

    item: str
    split: str
    flaw_type: str
    levels: tuple[JudgeName, ...]
    version: Version
    twin: str
    decision: str
    quality: float | None
    votes: tuple[Vote, ...]
    gate: tuple[str, ...]
    flaw_types: tuple[str, ...] = ()
    reported: frozenset[str] = frozenset()  # the model ids its answered judge and solver calls reported
    # Model judges whose refusal names the labelled evidence (agents.labelled.evidence).
    named: frozenset[str] = frozenset()
    # The solver's answer equals the answer key and differs from the flawed solution's.
    solver_found: bool = False
    # The solver's answer against the version's answer key (None: no solver answer, or no key).
    solver_right: bool | None = None
    # Why the run ended as it did, when not in the panel's verdict alone (``causes_of``).
    causes: tuple[str, ...] = ()
    solver_failure: str | None = None  # the solver's failed call, in a line (None: none failed)
    # Where the item comes from (its ``source``: name and kind; "" when it names none), its source's
    # own category for its first flaw, and the pair it shares with its sound original.
    source: str = ""
    source_kind: str = ""
    category: str = ""
    pair: str | None = None

    @property
    def should_pass(self) -> bool:
        """Corrected versions, controls and paraphrases should pass; flawed ones and twins not."""
        return self.version in ("corrected", "control", "paraphrase")

    @property
    def passed(self) -> bool:
        """The panel let the version through: accepted, or (offline panel) screened."""
        return self.decision in PASSED

    @property
    def decided(self) -> bool:
        """The run ended in the panel's verdict (passed, refused, or held for review) with every
        judge call answered: not an error, not undecided, and not a verdict a failed call helped
        make (a policy may score a round with a failed call, think-paper as 0; a failure is never
        part of a measurement)."""
        return (self.decision in PASSED or self.decision in REFUSED or self.held) and not self.failed_calls

    @property
    def held(self) -> bool:
        """Held for a person (needs_review) with every judge's verdict given: the panel's verdict
        that the version may not pass unreviewed (the verifier's hold, a split, an uncertified
        panel). It is no pass: a held flawed version is no false accept, a held sound one counts
        against specificity, so holding everything cannot flatter a panel. Held because judges
        gave no verdict, it stays undecided."""
        return self.decision == Outcome.NEEDS_REVIEW and not self.abstentions

    @property
    def errored(self) -> bool:
        """Excluded because something failed: the run ended in error, or a judge call failed."""
        return self.decision == Outcome.ERROR or self.failed_calls > 0

    @property
    def failed_calls(self) -> int:
        """Judge calls of this version that failed."""
        return sum(v.failed for v in self.votes)

    @property
    def abstentions(self) -> int:
        """Judges that gave no verdict although their call did not fail."""
        return sum(v.abstained for v in self.votes)

    @property
    def matched(self) -> bool:
        """A check whose label matches the flaw fired: a model's judge of the flaw's levels failed
        naming the flaw's evidence, an offline judge reported a check of the flaw's type, the
        verifier's evidence is of its kind, or the solver reached the answer key."""
        for vote in self.votes:
            if vote.passed is not False:
                continue
            if vote.offline and any(check_matches(c, self.flaw_types) for c in vote.findings):
                return True
            if not vote.offline and vote.judge in self.levels and vote.judge in self.named:
                return True
        for line in self.gate:
            if line.startswith("solver:"):
                if self.solver_found and gate_matches(line, self.flaw_types):
                    return True
            elif gate_matches(line, self.flaw_types):
                return True
        return False
