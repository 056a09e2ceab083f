"""The events rebuilt from a run's rounds and revisions (what completes a transcript that lost some)
are the ones the loop emitted live, in the same order of kinds."""

from __future__ import annotations

import json
from collections.abc import Callable

from agents.simulator import Rule, SimulatorServer
from graphs.context import RunContext
from graphs.events import RunEvent
from graphs.replay import described
from tests.helpers.driving import drive
from tests.helpers.problems import ORCHESTRA

REPLAYED = {"round.started", "judge.verdict", "round.scored", "revision.proposed"}


async def test_the_rebuilt_events_are_the_live_ones(
    sim: Callable[..., SimulatorServer], llm_context: Callable[..., RunContext]
) -> None:
    sim([Rule(role="^Judge", score=40, times=14)])  # two rounds fail: two revisions, three rounds
    for arm in ("loop", "control"):
        events: list[RunEvent] = []
        result = await drive(ORCHESTRA, llm_context(), arm=arm, on_event=events.append)
        live = [event.model_dump(mode="json") for event in events if event.type in REPLAYED]
        rebuilt = [
            event.model_dump(mode="json") for event in described(result.rounds, result.revisions, ORCHESTRA)
        ]
        # The same events (verdicts come live in the order the judges answer), kinds in the same order.
        assert sorted(map(json.dumps, rebuilt)) == sorted(map(json.dumps, live)), arm
        assert [e["type"] for e in rebuilt] == [e["type"] for e in live] and result.revisions, arm
