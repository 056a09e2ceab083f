"""At temperature 0, a retry of a deterministic failure changes something (a correction) or stops."""

from __future__ import annotations

from collections.abc import Callable

from agents.judges import JudgeRequest, LLMJudge
from agents.llm.client import LLMClient
from agents.simulator import Rule, SimulatorServer
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]
Client = Callable[..., LLMClient]
REQUEST = JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA)
JUNK = '{"score": "high", "note": "the solution looks right to me"}'  # JSON, but not a verdict


async def test_an_identical_malformed_reply_at_temperature_0_stops_with_its_cause(
    sim: Sim, client: Client
) -> None:
    server = sim([Rule(role="^Judge", content=JUNK)])  # the same junk, whatever it is told
    outcome = await LLMJudge(client(parse_retries=2, temperature=0)).assess(REQUEST)
    first, second = (r.body for r in server.state.requests)  # two asks, not three identical replies
    correction = second["messages"][-1]["content"]
    assert "did not match the required JSON schema" in correction  # the retry changed: a repair prompt
    assert second["messages"][-2]["content"] == JUNK and first["messages"] == second["messages"][:-2]
    assert outcome.abstained and outcome.failure is not None and outcome.failure.kind == "malformed"
    assert outcome.failure.message.startswith("deterministic failure: identical reply")
    assert outcome.raw_outputs == [JUNK, JUNK] and outcome.usage.calls == 2


async def test_a_sampling_model_is_asked_again_after_an_identical_reply(sim: Sim, client: Client) -> None:
    server = sim([Rule(role="^Judge", content=JUNK)])
    outcome = await LLMJudge(client(parse_retries=2, temperature=0.7)).assess(REQUEST)
    assert len(server.state.requests) == 3 and outcome.failure is not None
    assert "did not fit the schema" in outcome.failure.message


async def test_a_correction_that_works_is_used_at_temperature_0(sim: Sim, client: Client) -> None:
    server = sim([Rule(role="^Judge", content=JUNK, times=1)])
    outcome = await LLMJudge(client(parse_retries=2, temperature=0)).assess(REQUEST)
    assert outcome.verdict is not None and len(server.state.requests) == 2
