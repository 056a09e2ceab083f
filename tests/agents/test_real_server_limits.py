"""What a real local server needs (issue 36): bounded replies, calls timed from their first byte,
no more calls at once than its slots, and junk replies that become failures with their cause."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agents.judges import JudgeRequest, LLMJudge
from agents.llm.client import LLMClient
from agents.llm.models import ModelRegistry, ModelSpec, build_chat_model
from agents.probe import probe
from agents.reviser import LLMReviser, RevisionRequest
from agents.simulator import Rule, SimulatorServer
from agents.solver import LLMSolver
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]
Client = Callable[..., LLMClient]
REQUEST = JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA)


def bound_of(body: dict[str, Any]) -> int | None:
    """The reply bound a request carried (langchain-openai sends ``max_completion_tokens``)."""
    return body.get("max_completion_tokens", body.get("max_tokens"))


async def test_every_kind_of_call_carries_its_max_tokens(sim: Sim, client: Client) -> None:
    server = sim()
    model = client()
    await LLMJudge(model).assess(REQUEST)
    await LLMSolver(model).solve(ORCHESTRA, 1)
    await LLMReviser(model).revise(RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ()), lambda _: None)
    assert [bound_of(r.body) for r in server.state.requests] == [1000, 500, 2000]


async def test_a_models_file_overrides_max_tokens_per_kind(sim: Sim, tmp_path: Any) -> None:
    server = sim()
    path = tmp_path / "models.toml"
    path.write_text(
        f'[models.gemma]\nmodel = "g"\nbase_url = "{server.base_url}"\n\n'
        "[models.gemma.max_tokens]\njudge = 300\nsolver = 120\n"
    )
    spec = ModelRegistry.from_sources(path).get("gemma")
    assert spec is not None and (spec.max_tokens.judge, spec.max_tokens.solver) == (300, 120)
    assert (spec.max_tokens.reviser, spec.max_tokens.probe) == (2000, 64)  # the rest keep their defaults
    model = LLMClient(spec, build_chat_model(spec, {}))
    try:
        await LLMJudge(model).assess(REQUEST)
    finally:
        await model.aclose()
    assert bound_of(server.state.requests[0].body) == 300


def test_max_tokens_can_be_set_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.settings import Settings

    monkeypatch.setenv("THINKLOOP_MODELS__GEMMA__MODEL", "g")
    monkeypatch.setenv("THINKLOOP_MODELS__GEMMA__MAX_TOKENS__JUDGE", "256")
    settings = Settings(_env_file=None)
    spec = ModelRegistry.from_sources(extra=settings.models).get("gemma")
    assert spec is not None and spec.max_tokens.judge == 256 and spec.max_tokens.solver == 500


async def test_a_rambling_reply_is_asked_once_shorter_then_fails_with_the_cause(
    sim: Sim, client: Client
) -> None:
    server = sim([Rule(role="^Judge", ramble=True)])
    outcome = await LLMJudge(client(parse_retries=2)).assess(REQUEST)
    first, second = (r.body for r in server.state.requests)  # two asks, not three identical ones
    assert outcome.abstained and outcome.failure is not None and outcome.failure.kind == "malformed"
    assert outcome.abstain_reason is not None and "hit max_tokens (1000) twice" in outcome.abstain_reason
    assert len(outcome.raw_outputs) == 2 and all(len(raw) == 4000 for raw in outcome.raw_outputs)
    shorter = second["messages"][-1]["content"]
    assert "cut off at the limit of 1000 tokens" in shorter and "briefly" in shorter
    # The ramble is not sent back: the second ask is the first one plus the instruction, no more.
    assert second["messages"][:-1] == first["messages"] and second["temperature"] == 0


async def test_a_ramble_then_a_short_reply_is_a_verdict(sim: Sim, client: Client) -> None:
    server = sim([Rule(role="^Judge", ramble=True, times=1)])
    outcome = await LLMJudge(client()).assess(REQUEST)
    assert outcome.verdict is not None and len(server.state.requests) == 2


async def test_models_check_is_bounded_by_the_probe_max_tokens(sim: Sim, client: Client) -> None:
    server = sim([Rule(ramble=True)], slots=3)  # a base model: it writes until something stops it
    model = client()
    found = await probe(model.spec, model.chat)
    assert [bound_of(r.body) for r in server.state.requests] == [64, 64, 64, 1]  # 1: the prompt-rate read
    assert found.slots == 3 and found.as_dict()["slots"] == 3


async def test_a_call_queued_behind_busy_slots_is_not_a_failure(sim: Sim, client: Client) -> None:
    # One slot; each reply takes about 1.4 s to generate, a piece every 0.03 s; the client allows 1 s
    # of silence. Three calls at once: the last waits about 2.8 s in the server's queue.
    server = sim(slots=1, chunk_chars=2, chunk_delay_s=0.03)
    judge = LLMJudge(client(timeout_s=1.0, max_concurrency=4, max_retries=0, parse_retries=0))
    outcomes = await asyncio.gather(*(judge.assess(REQUEST) for _ in range(3)))
    assert [o.failure for o in outcomes] == [None, None, None]
    assert sum(o.usage.retries for o in outcomes) == 0 and len(server.state.requests) == 3
    # They did wait in the server's queue, not in ours: with one slot, two in flight means one queued.
    # (Not 3: under load the first reply can begin before the other two arrive; that is no failure.)
    assert server.state.max_in_flight >= 2


async def test_a_reply_that_stops_midway_is_still_timed_out(sim: Sim, client: Client) -> None:
    sim([Rule(role="^Judge", stall_s=5.0)])
    outcome = await LLMJudge(client(timeout_s=0.5, max_retries=0, parse_retries=0)).assess(REQUEST)
    assert outcome.abstained and outcome.failure is not None
    assert "no byte for 0.5 s" in outcome.failure.message or "Timeout" in outcome.failure.exception


async def test_a_server_that_tells_its_slots_gets_no_more_calls_at_once(sim: Sim, client: Client) -> None:
    server = sim(slots=2, gate=3, gate_timeout_s=1.0)  # two calls meet at the gate, however slow the machine
    model = client()  # max_concurrency not configured: the server's own figure is used
    judge = LLMJudge(model)
    outcomes = await asyncio.gather(*(judge.assess(REQUEST) for _ in range(6)))
    assert all(o.verdict is not None for o in outcomes)
    assert model.slots == 2 and server.state.max_in_flight == 2
    assert any("GET /props" in why for why in model.learned)


async def test_a_configured_concurrency_is_kept_whatever_the_server_says(sim: Sim, client: Client) -> None:
    server = sim(slots=2, latency_s=0.3)
    judge = LLMJudge(client(max_concurrency=6))
    await asyncio.gather(*(judge.assess(REQUEST) for _ in range(6)))
    assert server.state.max_in_flight > 2


async def test_a_server_without_props_is_used_as_it_is(sim: Sim, client: Client) -> None:
    sim()
    model = client()
    assert (await LLMJudge(model).assess(REQUEST)).verdict is not None
    assert model.slots is None and model.learned == []


def test_the_simulator_answers_props_only_with_slots(spec: Callable[..., ModelSpec]) -> None:
    from agents.llm.slots import props_url

    assert props_url(spec(base_url="http://127.0.0.1:8080/v1")) == "http://127.0.0.1:8080/props"
    assert props_url(spec(base_url=None)) is None  # api.openai.com: nothing to ask


async def test_a_server_that_never_answers_props_costs_its_short_timeout_not_the_queue_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``/props`` is answered at once where it exists: its own timeout holds, not the first-byte
    wait of a generation (which would hold every first call of the model for queue_timeout_s)."""
    import agents.llm.slots

    done = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)  # take the request, answer nothing until the test ends
        await done.wait()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    monkeypatch.setattr(agents.llm.slots, "PROPS_TIMEOUT_S", 0.5)
    spec = ModelSpec(
        name="silent", model="m", base_url=f"http://127.0.0.1:{port}/v1", queue_timeout_s=3600, timeout_s=60
    )
    chat = build_chat_model(spec, {})
    try:
        assert await agents.llm.slots.server_slots(spec, chat) is None
    finally:
        await chat.root_async_client.close()
        done.set()
        server.close()
        await server.wait_closed()
