"""The real ChatOpenAI path against the simulator: structured output, faults and accounting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage, ChatMessageChunk

from agents.judges import JudgeRequest, LLMJudge
from agents.llm.client import RAW_OUTPUT_CAP, CachedReply, LLMClient, keep_raw
from agents.llm.models import Price
from agents.reviser import LLMReviser, RevisionRequest
from agents.schemas import HolisticReply, JudgeReply
from agents.simulator import Rule, SimulatorServer
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]
REQUEST = JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA)


async def test_verdict_is_parsed_and_accounted(sim: Sim, client: Callable[..., LLMClient]) -> None:
    sim()
    price = Price(input_per_mtok=2.5, output_per_mtok=10.0)
    outcome = await LLMJudge(client(price=price)).assess(REQUEST)
    assert isinstance(outcome.verdict, JudgeReply) and outcome.verdict.score == 90
    usage = outcome.usage
    assert usage.calls == 1 and usage.input_tokens > 0 and usage.output_tokens > 0 and usage.latency_s > 0
    assert usage.cost_usd == price.cost(usage.input_tokens, usage.output_tokens)
    assert outcome.prompt_version.startswith("judge_apply@") and outcome.model == "sim"


async def test_holistic_judge_gets_its_schema(sim: Sim, client: Callable[..., LLMClient]) -> None:
    server = sim()
    outcome = await LLMJudge(client()).assess(JudgeRequest("holistic", 1, ORCHESTRA, ORCHESTRA))
    assert isinstance(outcome.verdict, HolisticReply)
    body = server.state.requests[0].body
    assert body["response_format"]["json_schema"]["name"] == "HolisticVerdict"


async def test_malformed_output_is_re_asked_then_used(sim: Sim, client: Callable[..., LLMClient]) -> None:
    server = sim([Rule(malformed=True, times=1)])
    outcome = await LLMJudge(client()).assess(REQUEST)
    assert outcome.verdict is not None and len(outcome.raw_outputs) == 2
    assert len(server.state.requests) == 2


async def test_persistently_malformed_output_abstains_with_raw_text(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    sim([Rule(malformed=True)])
    # Sampling: every attempt may differ (at temperature 0 an identical one stops the call at once).
    outcome = await LLMJudge(client(parse_retries=2, temperature=0.7)).assess(REQUEST)
    assert outcome.verdict is None and outcome.abstained
    assert outcome.failure is not None and outcome.failure.kind == "malformed"
    assert (
        outcome.abstain_reason == outcome.failure.summary()
        and "did not fit the schema" in outcome.abstain_reason
    )
    assert len(outcome.raw_outputs) == 3 and all(raw.startswith("{") for raw in outcome.raw_outputs)


async def test_a_runaway_reply_is_kept_only_up_to_the_cap(sim: Sim, client: Callable[..., LLMClient]) -> None:
    huge = "x" * (RAW_OUTPUT_CAP * 64)  # a 1 MiB reply that is not a verdict
    sim([Rule(content=huge)])
    # Whole: langchain parses a streamed tool call's arguments again at every chunk (1 MiB of them).
    outcome = await LLMJudge(client(parse_retries=0, stream=False)).assess(REQUEST)
    (kept,) = outcome.raw_outputs
    assert outcome.abstained and kept.startswith("x" * RAW_OUTPUT_CAP)
    assert len(kept) < RAW_OUTPUT_CAP + 200 and f"{len(huge)} characters in all" in kept


def test_a_reply_within_the_cap_is_kept_whole() -> None:
    assert keep_raw("y" * RAW_OUTPUT_CAP) == "y" * RAW_OUTPUT_CAP


async def test_out_of_range_score_is_not_accepted(sim: Sim, client: Callable[..., LLMClient]) -> None:
    sim([Rule(score=150)])
    outcome = await LLMJudge(client(parse_retries=1)).assess(REQUEST)
    assert outcome.verdict is None and '"score": 150' in outcome.raw_outputs[0]


async def test_429_with_retry_after_is_retried(sim: Sim, client: Callable[..., LLMClient]) -> None:
    server = sim([Rule(status=429, retry_after=0.3, times=1)])
    outcome = await LLMJudge(client()).assess(REQUEST)
    assert outcome.verdict is not None
    assert [r.status for r in server.state.requests] == [429, 200]


async def test_500_is_retried(sim: Sim, client: Callable[..., LLMClient]) -> None:
    server = sim([Rule(status=500, times=2)])
    outcome = await LLMJudge(client(max_retries=2)).assess(REQUEST)
    assert outcome.verdict is not None
    assert [r.status for r in server.state.requests] == [500, 500, 200]


async def test_timeout_is_retried(sim: Sim, client: Callable[..., LLMClient]) -> None:
    server = sim([Rule(delay_s=3.0, times=1)])  # no first byte within the queue timeout
    outcome = await LLMJudge(client(queue_timeout_s=0.5, max_retries=1)).assess(REQUEST)
    assert outcome.verdict is not None and len(server.state.requests) == 2


async def test_exhausted_retries_abstain_instead_of_raising(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    sim([Rule(status=500)])
    outcome = await LLMJudge(client(max_retries=1)).assess(REQUEST)
    failure = outcome.failure
    assert outcome.verdict is None and failure is not None and failure.kind == "endpoint"
    assert (failure.model, failure.status, failure.exception) == ("sim", 500, "InternalServerError")
    assert (
        failure.host is not None
        and failure.host.startswith("127.0.0.1:")
        and "simulated 500" in failure.message
    )


class _Exploding(GenericFakeChatModel):
    """A chat model whose client stack raises what langchain-openai raised on a role-less stream."""

    calls: int = 0

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        ChatMessageChunk(content="x", role=None)  # raises ValidationError
        raise AssertionError("unreachable")


async def test_any_client_exception_is_a_failed_call_retried_within_bounds(spec: Callable[..., Any]) -> None:
    chat = _Exploding(messages=iter([]))
    client = LLMClient(spec(parse_retries=2, stream=False), chat)
    outcome = await LLMJudge(client).assess(REQUEST)
    assert chat.calls == 3  # one call and two more attempts, no more
    assert outcome.verdict is None and outcome.failure is not None
    assert (outcome.failure.kind, outcome.failure.exception) == ("client", "ValidationError")
    revision = await LLMReviser(LLMClient(spec(parse_retries=0), _Exploding(messages=iter([])))).revise(
        RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ()), lambda _: None
    )
    assert revision.problem is None and revision.failure is not None and revision.failure.kind == "client"


async def test_falls_back_to_tool_calling_without_json_schema(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    server = sim([Rule(reject_json_schema=True)])
    outcome = await LLMJudge(client()).assess(REQUEST)
    assert outcome.verdict is not None
    first, second = server.state.requests[0].body, server.state.requests[1].body
    assert "response_format" in first and "response_format" not in second
    assert second["tools"][0]["function"]["name"] == "JudgeVerdict"


async def test_tool_calling_mode_streams_too(sim: Sim, client: Callable[..., LLMClient]) -> None:
    sim()
    deltas: list[str] = []
    revision = await LLMReviser(client(structured_output="tool_calling")).revise(
        RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ()), deltas.append
    )
    assert revision.problem is not None and "".join(deltas) == revision.thinking


async def test_reviser_streams_thinking_and_keeps_usage(sim: Sim, client: Callable[..., LLMClient]) -> None:
    server = sim(chunk_chars=8, chunk_delay_s=0.05)  # pieces that come one by one stream one by one
    deltas: list[str] = []
    revision = await LLMReviser(client()).revise(
        RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ()), deltas.append
    )
    assert len(deltas) > 5 and "".join(deltas) == revision.thinking
    assert revision.problem is not None and revision.problem.question.endswith("(revised 1)")
    assert revision.usage.output_tokens > 0  # stream_usage keeps token counts when streaming
    assert server.state.requests[0].body["stream"] is True


async def test_truncated_stream_is_re_asked(sim: Sim, client: Callable[..., LLMClient]) -> None:
    sim([Rule(role="Reviser", truncate_stream=True, times=1)])
    deltas: list[str] = []
    request = RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ())
    revision = await LLMReviser(client()).revise(request, deltas.append)
    assert revision.problem is not None and len(revision.raw_outputs) == 2
    # The cut-off attempt's thinking, a break, then the retried attempt's thinking in full.
    first, _, second = "".join(deltas).partition("\n\n")
    assert revision.thinking.startswith(first) and second == revision.thinking


async def test_concurrency_limit_is_respected(sim: Sim, client: Callable[..., LLMClient]) -> None:
    # The gate holds every answer until a third request arrives, which a limit of 2 never lets
    # happen: the two first calls wait together until the gate gives up. Two in flight at once is
    # then certain however slow the machine, and a third would open the gate and be counted.
    server = sim(gate=3, gate_timeout_s=1.0)
    judge = LLMJudge(client(max_concurrency=2))
    await asyncio.gather(*(judge.assess(REQUEST) for _ in range(6)))
    assert server.state.max_in_flight == 2


async def test_every_call_the_limit_allows_is_in_flight_at_once_above_the_pool_default(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    # httpx's own pool holds 100 connections; a model allowed 120 calls must send 120 at once, each
    # once. The gate holds every answer until 120 requests have arrived (its timeout, and the
    # client's, only end a failure: calls waiting for the pool time out and are sent again).
    server = sim(gate=120, gate_timeout_s=150)
    judge = LLMJudge(client(max_concurrency=120, timeout_s=120))
    await asyncio.gather(*(judge.assess(REQUEST) for _ in range(120)))
    assert len(server.state.requests) == 120
    assert len({entry.connection for entry in server.state.requests}) == 120


async def test_a_round_of_parallel_calls_reuses_the_last_rounds_connections(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    # Every round opens as many connections as it has calls in flight; the next round finds them
    # open. With httpx's defaults 20 stayed open and each round opened the rest again.
    judge = LLMJudge(client(max_concurrency=40, timeout_s=120))
    seen: list[set[str]] = []
    for _ in range(3):
        server = sim(gate=40, gate_timeout_s=300)
        await asyncio.gather(*(judge.assess(REQUEST) for _ in range(40)))
        seen.append({entry.connection for entry in server.state.requests})
    assert len(seen[0]) == 40 and "" not in seen[0]
    assert seen[1] == seen[0] and seen[2] == seen[0]


class MemoryCache:
    def __init__(self) -> None:
        self.store: dict[str, str] = {}
        self.reported: dict[str, str | None] = {}

    async def get(self, key: str) -> CachedReply | None:
        text = self.store.get(key)
        return None if text is None else CachedReply(text, self.reported.get(key))

    async def put(self, key: str, model: str, text: str, reported_model: str | None = None) -> None:
        self.store.setdefault(key, text)
        self.reported.setdefault(key, reported_model)


async def test_identical_temperature_zero_calls_are_served_from_cache(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    server = sim()
    cache = MemoryCache()
    judge = LLMJudge(client(), cache)
    first, second = await judge.assess(REQUEST), await judge.assess(REQUEST)
    assert first.verdict == second.verdict and len(server.state.requests) == 1
    assert first.usage.calls == 1 and second.usage.calls == 0  # the cached answer costs nothing
    other = await judge.assess(JudgeRequest("create", 1, ORCHESTRA, ORCHESTRA))  # another prompt
    assert other.verdict is not None and len(server.state.requests) == 2


@pytest.mark.parametrize("stream", [True, False])
async def test_the_model_id_the_endpoint_reports_is_kept_with_the_verdict(
    sim: Sim, client: Callable[..., LLMClient], stream: bool
) -> None:
    sim()  # the request asks for sim-1, and the simulator answers as sim-1
    assert (await LLMJudge(client(stream=stream)).assess(REQUEST)).reported_model == "sim-1"
    sim(profile_overrides={"reported_model": "llama-3-8b-q4"})  # another model behind the same name
    judged = await LLMJudge(client(stream=stream)).assess(REQUEST)
    assert judged.reported_model == "llama-3-8b-q4" and judged.model == "sim"
    sim(profile_overrides={"bare_chunks": True})  # replies without id, object, created and model
    assert (await LLMJudge(client(stream=stream)).assess(REQUEST)).reported_model == ""  # named none


async def test_an_unanswered_call_reports_no_model_and_the_cache_keeps_the_reported_one(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    sim(rules=[Rule(status=503)])
    failed = await LLMJudge(client(max_retries=0)).assess(REQUEST)
    assert failed.failure is not None and failed.reported_model is None
    server = sim(profile_overrides={"reported_model": "llama-3-8b-q4"})
    cache = MemoryCache()
    judge = LLMJudge(client(), cache)
    first, second = await judge.assess(REQUEST), await judge.assess(REQUEST)
    assert len(server.state.requests) == 1 and second.usage.calls == 0  # the second from the cache
    assert first.reported_model == second.reported_model == "llama-3-8b-q4"


async def test_cache_is_not_used_above_temperature_zero_or_for_bad_replies(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    server = sim()
    cache = MemoryCache()
    warm = LLMJudge(client(temperature=0.7), cache)
    await warm.assess(REQUEST)
    await warm.assess(REQUEST)
    assert len(server.state.requests) == 2 and cache.store == {}
    cold = client()
    cache.store[cold.cache_key(*_judge_messages())] = "not json"
    assert (await LLMJudge(cold, cache).assess(REQUEST)).verdict is not None  # a bad entry is ignored
    assert len(server.state.requests) == 3


async def test_cached_reviser_still_streams_its_thinking(sim: Sim, client: Callable[..., LLMClient]) -> None:
    sim()
    cache, deltas = MemoryCache(), list[str]()
    reviser = LLMReviser(client(), cache)
    request = RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ())
    fresh = await reviser.revise(request, lambda _: None)
    cached = await reviser.revise(request, deltas.append)
    assert cached.usage.calls == 0 and "".join(deltas) == fresh.thinking == cached.thinking


def _judge_messages() -> tuple[list[BaseMessage], type[JudgeReply]]:
    from agents.judges import judge_messages
    from prompts import load_prompt

    return list(judge_messages(REQUEST, load_prompt("judge_apply"))), JudgeReply


@pytest.mark.parametrize("stream", [True, False])
async def test_the_servers_system_fingerprint_is_kept_with_the_verdict_and_the_revision(
    sim: Sim, client: Callable[..., LLMClient], stream: bool
) -> None:
    sim()  # the simulator sends no system_fingerprint unless its profile says so
    assert (await LLMJudge(client(stream=stream)).assess(REQUEST)).system_fingerprint is None
    sim(profile_overrides={"system_fingerprint": "fp_sim_b7", "reported_model": "llama-3-8b-q4"})
    judged = await LLMJudge(client(stream=stream)).assess(REQUEST)
    assert judged.system_fingerprint == "fp_sim_b7" and judged.reported_model == "llama-3-8b-q4"
    revised = await LLMReviser(client(stream=stream)).revise(
        RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ()), lambda _: None
    )
    assert revised.problem is not None
    assert revised.system_fingerprint == "fp_sim_b7" and revised.reported_model == "llama-3-8b-q4"


async def test_a_cached_reply_claims_no_system_fingerprint(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    server = sim(profile_overrides={"system_fingerprint": "fp_sim_b7"})
    judge = LLMJudge(client(), MemoryCache())
    first, second = await judge.assess(REQUEST), await judge.assess(REQUEST)
    assert len(server.state.requests) == 1  # the second came from the cache, not from the server
    assert first.system_fingerprint == "fp_sim_b7" and second.system_fingerprint is None
