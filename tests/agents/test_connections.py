"""Connections in shards: which shard a call goes through, and how long it holds it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx2
import pytest

from agents.llm.connections import ShardedTransport


class Body(httpx2.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b"{}"


class Gate(asyncio.Event):
    """Holds every request until set; ``all_arrived`` is set once ``expected`` requests wait."""

    def __init__(self, expected: int) -> None:
        super().__init__()
        self.expected, self.all_arrived = expected, asyncio.Event()

    def arrived(self) -> None:
        self.expected -= 1
        if self.expected == 0:
            self.all_arrived.set()


class FakeShard(httpx2.AsyncBaseTransport):
    """Answers every request (after ``gate`` opens, when one is set); counts what it was sent."""

    def __init__(self, keep: int, gate: Gate | None = None, fail: bool = False) -> None:
        self.keep, self.gate, self.fail = keep, gate, fail
        self.sent = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.sent += 1
        if self.gate is not None:
            self.gate.arrived()
            await self.gate.wait()
        if self.fail:
            raise httpx2.ConnectError("refused", request=request)
        return httpx2.Response(200, stream=Body(), request=request)


def sharded(connections: int, **fake: object) -> tuple[ShardedTransport, list[FakeShard]]:
    shards: list[FakeShard] = []

    def make(keep: int) -> FakeShard:
        shards.append(FakeShard(keep, **fake))  # type: ignore[arg-type]
        return shards[-1]

    return ShardedTransport(connections, shard=8, make_shard=make), shards


async def test_a_model_gets_shards_of_eight_kept_connections_for_its_concurrency() -> None:
    _, shards = sharded(20)
    assert [shard.keep for shard in shards] == [8, 8, 8]


async def test_calls_made_one_at_a_time_all_use_the_first_shard() -> None:
    transport, shards = sharded(64)
    async with httpx2.AsyncClient(transport=transport) as client:
        for _ in range(5):
            assert (await client.get("http://sim/v1/models")).status_code == 200
    assert [shard.sent for shard in shards] == [5, 0, 0, 0, 0, 0, 0, 0]
    assert transport.in_flight == (0,) * 8


async def test_calls_made_at_once_spread_evenly_over_the_shards() -> None:
    gate = Gate(expected=24)
    transport, _ = sharded(24, gate=gate)
    async with httpx2.AsyncClient(transport=transport) as client:
        calls = [asyncio.ensure_future(client.get("http://sim/")) for _ in range(24)]
        await gate.all_arrived.wait()
        assert transport.in_flight == (8, 8, 8)
        gate.set()
        await asyncio.gather(*calls)
    assert transport.in_flight == (0, 0, 0)


async def test_a_streamed_reply_holds_its_shard_until_its_body_is_closed() -> None:
    transport, shards = sharded(16)
    async with httpx2.AsyncClient(transport=transport) as client:
        async with client.stream("POST", "http://sim/v1/chat/completions") as streamed:
            assert transport.in_flight == (1, 0)
            await client.get("http://sim/v1/models")  # the first shard is busy streaming
            assert [shard.sent for shard in shards] == [1, 1]
            assert [chunk async for chunk in streamed.aiter_bytes()] == [b"{}"]
        assert transport.in_flight == (0, 0)


async def test_a_call_that_fails_frees_its_shard() -> None:
    transport, _ = sharded(16, fail=True)
    async with httpx2.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx2.ConnectError):
            await client.get("http://sim/")
    assert transport.in_flight == (0, 0)


async def test_the_shards_of_a_model_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx loads the CA bundle for every transport given no context: once per model, not per shard."""
    import httpcore2

    made: list[object] = []
    default = httpcore2.default_ssl_context

    def counted(**options: bool) -> object:
        made.append(default(**options))
        return made[-1]

    monkeypatch.setattr(httpcore2, "default_ssl_context", counted)
    transport = ShardedTransport(128)
    assert len(transport.in_flight) == 16
    assert len(made) == 1
    await transport.aclose()
