"""The refinement loop end to end on every server profile: accepted, exhausted and a failing judge."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from agents.judges import LLMJudge
from agents.llm.client import LLMClient
from agents.llm.models import build_chat_model
from agents.reviser import LLMReviser
from agents.schemas import JUDGES
from agents.simulator import Rule, SimulatorServer
from agents.simulator.profiles import PROFILE_NAMES, PROFILES, REASONING_TEXT
from graphs.context import RunContext
from graphs.events import ReviserThinking, RunEvent
from graphs.scoring import get_policy
from tests.helpers.driving import drive
from tests.helpers.problems import ORCHESTRA
from tests.helpers.profiles import AZURE_ENV, profile_spec

Sim = Callable[..., SimulatorServer]


@pytest.fixture
async def context_for(sim: Sim) -> AsyncIterator[Callable[..., RunContext]]:
    """``context_for(profile, rules)``: judges and reviser on one client of that profile (kept last
    in ``context_for.client``)."""
    clients: list[LLMClient] = []

    def make(profile: str, rules: list[Rule], policy: str = "default") -> RunContext:
        server = sim(rules, profile=profile)
        spec = profile_spec(server, profile)
        client = LLMClient(spec, build_chat_model(spec, AZURE_ENV))
        clients.append(client)
        make.client = client  # type: ignore[attr-defined]
        judge = LLMJudge(client)
        return RunContext(
            judges=dict.fromkeys(JUDGES, judge), reviser=LLMReviser(client), policy=get_policy(policy)
        )

    yield make
    for client in clients:
        await client.aclose()


@pytest.mark.parametrize("profile", PROFILE_NAMES)
async def test_accepted_after_a_revision_with_the_think_aloud(profile: str, context_for: Any) -> None:
    events: list[RunEvent] = []
    context = context_for(profile, [Rule(role="^Judge", score=40, times=7)])
    result = await drive(ORCHESTRA, context, on_event=events.append)
    assert result.outcome == "accepted" and len(result.rounds) == 2, result.stop_reason
    thinking = result.revisions[0].thinking
    streamed = "".join(e.delta for e in events if isinstance(e, ReviserThinking))
    assert streamed == thinking and "I read each reviewer" in thinking
    kind = PROFILES[profile].reasoning
    if kind not in ("none", "think_tag") or (
        kind == "think_tag" and context.reviser._client.mode != "tool_calling"
    ):
        assert thinking.startswith(REASONING_TEXT)  # the model's own reasoning channel, kept apart
        assert all(o.reasoning == REASONING_TEXT for o in result.rounds[0].outcomes)
    assert result.usage.calls >= 15


@pytest.mark.parametrize("profile", PROFILE_NAMES)
async def test_exhausted(profile: str, context_for: Any) -> None:
    result = await drive(ORCHESTRA, context_for(profile, [Rule(role="^Judge", score=40)]))
    assert result.outcome == "exhausted" and len(result.rounds) == 3 and len(result.revisions) == 2


@pytest.mark.parametrize("profile", PROFILE_NAMES)
async def test_a_judge_that_never_answers_in_shape(profile: str, context_for: Any) -> None:
    rules = [Rule(role="Judge: Create", malformed=True), Rule(role="^Judge", score=40)]
    result = await drive(ORCHESTRA, context_for(profile, rules))
    assert result.outcome == "error" and result.failure is not None and result.failure.kind == "malformed"
    paper = await drive(ORCHESTRA, context_for(profile, rules, "think-paper"))
    assert paper.outcome == "exhausted" and paper.rounds[0].n_failed == 1  # the reference scores it 0


def test_every_profile_is_a_different_server() -> None:
    shapes = {p.model_dump_json(exclude={"name", "server"}) for p in PROFILES.values()}
    assert len(shapes) == len(PROFILES)
