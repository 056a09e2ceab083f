"""How a run ends: the one definition of the outcome words.

It lives in the lowest layer that needs it (``agents.labelled.repair`` classifies runs by their
outcome, and agents may not import graphs). Everything else reads these words from here:
``graphs.scoring.Decision`` is an outcome or ``revise``; ``app.models.RunStatus`` is ``queued``,
``running`` or an outcome, and a batch item's outcome is this type. The Python client keeps its own
copy (it may not import the server), and a test checks that the two are the same.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """How a run (or a batch item) ends: exactly one of these (docs/outcomes.md).

    ``screened`` is the offline panel's pass: its checks found no flaw, which is not a judgement of
    soundness (a deterministic screen can refuse with evidence, it never certifies). Only a
    model-backed panel gives ``accepted``.
    """

    ACCEPTED = "accepted"
    SCREENED = "screened"
    EXHAUSTED = "exhausted"
    NEEDS_REVIEW = "needs_review"
    ERROR = "error"
    CANCELLED = "cancelled"


# Outcomes that are the model's pass or failure; the others are counted apart, never scored.
# ``screened`` is the pass of an offline arm (it passed the screen), reported as such, never as accepted.
SCORED_OUTCOMES: frozenset[str] = frozenset({Outcome.ACCEPTED, Outcome.SCREENED, Outcome.EXHAUSTED})
# The outcomes (and round decisions) in which the panel let the version through.
PASSED_OUTCOMES: frozenset[str] = frozenset({Outcome.ACCEPTED, Outcome.SCREENED})
# The outcome in which the panel refused every version: the loop ran out of rounds.
REFUSED_OUTCOMES: frozenset[str] = frozenset({Outcome.EXHAUSTED})
# The outcomes a run reaches by judging (not by an error or a cancellation).
JUDGED_OUTCOMES: frozenset[str] = SCORED_OUTCOMES | {Outcome.NEEDS_REVIEW}
