"""One model's connections, kept in small pools.

httpcore looks at every connection of its pool each time a request starts or ends: it asks each
idle connection's socket whether the server closed it (a poll, and anyio building the socket's
attribute table). With one pool keeping ``max_concurrency`` connections open, that is a cost per
request that grows with the model's concurrency: with 64 calls in flight a request paid for up to 128
such looks, about a tenth of an embedded batch's CPU (a profile of ``bench/batch_throughput.py``).
Shards of ``SHARD`` connections keep every open connection for the next call and bound the looks a
request costs by the shard, whatever the concurrency (``bench/connection_pool.py`` measures it).

The shards share one TLS context. httpx builds a context for every transport it is given no context
for, loading the CA bundle each time: 16 shards for a concurrency of 128 took about 1.5 s of CPU at
the first call of a process on a slow machine, with every run's event loop stalled meanwhile.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable

import httpx2

# Connections a shard keeps open: small enough that its per-request bookkeeping is cheap, large
# enough that a round of seven judges and a solver fits one shard when nothing else is in flight.
SHARD = 8


def http_shards() -> Callable[[int], httpx2.AsyncBaseTransport]:
    """A maker of plain httpx pools that all verify TLS with one context."""
    context = httpx2.create_ssl_context()  # the default verification, as httpx's own

    def http_shard(keep: int) -> httpx2.AsyncBaseTransport:
        """A pool that keeps ``keep`` connections open and caps none (the provider limiter bounds
        the calls)."""
        limits = httpx2.Limits(max_connections=None, max_keepalive_connections=keep)
        return httpx2.AsyncHTTPTransport(verify=context, limits=limits)

    return http_shard


class ShardedTransport(httpx2.AsyncBaseTransport):
    """Sends each request through the shard with the fewest requests in flight (the first such), so
    calls made one at a time reuse one connection and calls made at once spread over the shards.
    A request counts as in flight until its response body is closed (a streamed reply holds its
    connection while it streams)."""

    def __init__(
        self,
        connections: int,
        shard: int = SHARD,
        make_shard: Callable[[int], httpx2.AsyncBaseTransport] | None = None,
    ) -> None:
        make_shard = make_shard or http_shards()
        count = max(1, math.ceil(connections / shard))
        self._shards = [make_shard(shard) for _ in range(count)]
        self._in_flight = [0] * count

    @property
    def in_flight(self) -> tuple[int, ...]:
        """Requests in flight per shard."""
        return tuple(self._in_flight)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send through the least busy shard; the shard is held until the body is closed."""
        index = self._in_flight.index(min(self._in_flight))
        self._in_flight[index] += 1
        try:
            response = await self._shards[index].handle_async_request(request)
        except BaseException:
            self._in_flight[index] -= 1
            raise
        response.stream = _Released(response.stream, lambda: self._release(index))
        return response

    def _release(self, index: int) -> None:
        self._in_flight[index] -= 1

    async def aclose(self) -> None:
        """Close every shard's connections."""
        for shard in self._shards:
            await shard.aclose()


class _Released(httpx2.AsyncByteStream):
    """A response body that calls ``release`` once, when it is closed."""

    def __init__(self, inner: httpx2.AsyncByteStream | httpx2.SyncByteStream, release: Callable[[], None]):
        self._inner = inner
        self._release: Callable[[], None] | None = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert isinstance(self._inner, httpx2.AsyncByteStream)
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            if isinstance(self._inner, httpx2.AsyncByteStream):
                await self._inner.aclose()
        finally:
            release, self._release = self._release, None
            if release is not None:
                release()
