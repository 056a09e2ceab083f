"""The events that describe a run's rounds and revisions, rebuilt from its state: what completes a
transcript that lost some of them (a process killed, or its database cut, after the checkpoint that
holds them was stored but before their events were)."""

from __future__ import annotations

from collections.abc import Sequence

from agents.schemas import Problem, RevisionResult
from graphs.events import JudgeVerdict, RevisionProposed, RoundScored, RoundStarted
from graphs.refinement import proposed
from graphs.state import Round

Described = RoundStarted | JudgeVerdict | RoundScored | RevisionProposed


def described(
    rounds: Sequence[Round], revisions: Sequence[RevisionResult], original: Problem
) -> list[Described]:
    """Every round's and revision's events, in the order the loop emits them: a control's blind
    revision (round 0, of the original), then each round started, judged and scored, and its revision."""
    revised = {revision.round: revision for revision in revisions}
    events: list[Described] = []
    if 0 in revised:
        events.append(proposed(revised[0], original))
    for record in rounds:
        events.append(RoundStarted(round=record.round, problem=record.problem))
        events += [JudgeVerdict.of(outcome) for outcome in record.outcomes]
        events.append(RoundScored.of_round(record))
        if record.round in revised:
            events.append(proposed(revised[record.round], record.problem))
    return events
