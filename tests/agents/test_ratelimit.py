"""Provider limits: per process in memory, and shared by every worker through Redis."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from agents.llm.client import LLMClient
from agents.llm.models import ModelSpec, build_chat_model, limit_spec
from agents.llm.ratelimit import KEY_PREFIX, LimitSpec, LimitStore, estimate_tokens
from agents.schemas import JudgeReply
from agents.simulator import SimulatorServer
from tests.helpers.workers import redis_url

REDIS = redis_url("main")  # this xdist worker's own database


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def test_requests_per_minute_admits_exactly_the_limit() -> None:
    limiter = LimitStore().limiter(LimitSpec(unique("m"), 8, requests_per_minute=3))
    admitted = [await limiter.try_admit(10) for _ in range(5)]
    assert admitted == [True, True, True, False, False]


async def test_tokens_per_minute_counts_the_estimate_and_what_it_missed() -> None:
    limiter = LimitStore().limiter(LimitSpec(unique("m"), 8, tokens_per_minute=1000))
    assert await limiter.try_admit(600)
    assert not await limiter.try_admit(600)  # 1,200 would pass the window
    await limiter.settle(estimated_tokens=100, actual_tokens=450)  # a reply larger than estimated
    assert await limiter.try_admit(50)  # 600 + 350 + 50 = 1,000: just fits
    assert not await limiter.try_admit(1)


def test_estimate_is_about_four_characters_a_token_plus_the_reply() -> None:
    assert estimate_tokens(["x" * 400, "y" * 40], expected_output=100) == 210


@pytest.fixture
async def shared_stores() -> AsyncIterator[Callable[[], LimitStore]]:
    made: list[LimitStore] = []

    def make() -> LimitStore:
        made.append(LimitStore(REDIS))
        return made[-1]

    yield make
    for store in made:
        await store.aclose()


@pytest.mark.redis
async def test_two_workers_share_one_request_window(shared_stores: Callable[[], LimitStore]) -> None:
    spec = LimitSpec(unique("shared"), 8, requests_per_minute=4)
    first, second = shared_stores().limiter(spec), shared_stores().limiter(spec)
    admitted = [await limiter.try_admit(1) for limiter in (first, second, first, second, first, second)]
    assert admitted == [True, True, True, True, False, False]


@pytest.mark.redis
async def test_a_dead_workers_slot_expires(shared_stores: Callable[[], LimitStore]) -> None:
    spec = LimitSpec(unique("lease"), max_concurrency=1)
    store = shared_stores()
    # A worker died holding the only slot; its lease ran out a second ago.
    await store.redis().zadd(f"{KEY_PREFIX}:inflight:{spec.name}", {"dead-worker": time.time() - 1})
    async with store.limiter(spec).call(10):
        assert await store.redis().zcard(f"{KEY_PREFIX}:inflight:{spec.name}") == 1
    assert await store.redis().zcard(f"{KEY_PREFIX}:inflight:{spec.name}") == 0


async def _burst(clients: list[LLMClient], calls: int) -> None:
    messages = [SystemMessage("# Judge: Apply"), HumanMessage("judge this")]
    results = await asyncio.gather(
        *(clients[i % len(clients)].structured(messages, JudgeReply) for i in range(calls))
    )
    assert all(r.value is not None for r in results)


def _clients(spec: ModelSpec, stores: list[LimitStore]) -> list[LLMClient]:
    return [LLMClient(spec, build_chat_model(spec, {}), s.limiter(limit_spec(spec))) for s in stores]


@pytest.mark.redis
async def test_calls_in_flight_are_capped_across_workers(
    sim: Callable[..., SimulatorServer],
    spec: Callable[..., ModelSpec],
    shared_stores: Callable[[], LimitStore],
) -> None:
    server = sim(gate=3, gate_timeout_s=1.0)  # a third call in flight would open the gate
    model = spec(name=unique("cap"), max_concurrency=2)
    clients = _clients(model, [shared_stores(), shared_stores()])  # two workers, one endpoint
    try:
        await _burst(clients, 8)
    finally:
        for client in clients:
            await client.aclose()
    assert server.state.max_in_flight == 2
    assert len(server.state.requests) == 8


async def test_without_a_shared_store_each_process_has_its_own_cap(
    sim: Callable[..., SimulatorServer], spec: Callable[..., ModelSpec]
) -> None:
    server = sim(gate=4)  # answers are held until four calls are in flight at once
    model = spec(name=unique("local"), max_concurrency=2)
    clients = _clients(model, [LimitStore(), LimitStore()])
    try:
        await _burst(clients, 4)
    finally:
        for client in clients:
            await client.aclose()
    assert server.state.max_in_flight == 4


@pytest.mark.redis
async def test_a_call_longer_than_its_lease_keeps_its_slot(
    shared_stores: Callable[[], LimitStore],
) -> None:
    spec = LimitSpec(unique("renew"), max_concurrency=1, lease_s=1.0)
    worker, other = shared_stores().limiter(spec), shared_stores().limiter(spec)
    entered: list[str] = []

    async def second() -> None:
        async with other.call(10):
            entered.append("second")

    async with worker.call(10):
        waiting = asyncio.create_task(second())
        await asyncio.sleep(2.5)  # 2.5 leases: the slot is held only because it is renewed
        entered.append("first done")
    await asyncio.wait_for(waiting, 10)
    assert entered == ["first done", "second"]  # (a dead worker stops renewing: see the test above)
