"""Provider limits per endpoint: calls in flight, requests and tokens per minute.

In one process the state is in memory; with a Redis URL every worker shares it, so N workers
together stay inside what the provider allows. Rate windows come from the `limits` library
(sliding-window counters: O(1) state per key, atomic admission, a cost per hit for tokens); the
shared concurrency limit is a Redis sorted set of leases, so a killed worker's slots expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import structlog
from tenacity import retry, retry_if_exception, stop_after_delay

from agents.llm.retrying import OUTAGE_BACKOFF, log_retry

log = structlog.get_logger(__name__)
KEY_PREFIX = "thinkloop:limits"
_POLL_S = 0.05

# Take a slot if fewer than ARGV[2] unexpired leases exist: KEYS[1] zset, ARGV now, limit, expiry, token.
_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], math.ceil((tonumber(ARGV[3]) - tonumber(ARGV[1])) * 1000))
  return 1
end
return 0
"""


if TYPE_CHECKING:  # redis-py loads only with a Redis URL (a quarter second of every CLI start)
    from limits import RateLimitItemPerMinute
    from limits.aio.storage import Storage
    from limits.aio.strategies import SlidingWindowCounterRateLimiter
    from redis.asyncio import Redis


def _redis_away(exc: BaseException) -> bool:
    """A lost connection or a timeout: Redis restarting, not a mistake in the call."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return isinstance(exc, RedisConnectionError | RedisTimeoutError)


def _redis_error() -> type[Exception]:
    from redis.exceptions import RedisError

    return RedisError


# A call waits while Redis is away (a restart) instead of failing; after five minutes it gives up.
_WAIT_FOR_REDIS = retry(
    retry=retry_if_exception(_redis_away),
    wait=OUTAGE_BACKOFF,
    stop=stop_after_delay(300),
    before_sleep=log_retry("llm.limits_unavailable"),
    reraise=True,
)


@dataclass(frozen=True)
class LimitSpec:
    """What one endpoint allows; None means no limit of that kind."""

    name: str
    max_concurrency: int
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    lease_s: float = 30.0  # renewed every third of it while the call runs


class LimitStore:
    """Where limit state lives: this process (no URL) or a Redis server shared by every worker."""

    def __init__(self, redis_url: str | None = None) -> None:
        self.redis_url = redis_url
        self._redis: Redis | None = None
        if redis_url:  # one connection pool for the windows and the in-flight leases
            from redis.asyncio import ConnectionPool, Redis

            self._redis = Redis(connection_pool=ConnectionPool.from_url(redis_url))
            self.acquire_slot = self._redis.register_script(_ACQUIRE)  # hashed once, not per call

    # The windows are built on first use: a process whose panel calls no endpoint (the offline
    # panel of `thinkloop refine`) never loads the limits library.
    @cached_property
    def storage(self) -> Storage:
        """Where the request and token windows are counted: Redis with a URL, else this process."""
        if self._redis is None:
            from limits.aio.storage import MemoryStorage

            return MemoryStorage()
        from limits.aio.storage import RedisStorage

        return RedisStorage(
            f"async+{self.redis_url}",
            implementation="redispy",
            key_prefix=KEY_PREFIX,
            connection_pool=self._redis.connection_pool,  # type: ignore[arg-type]
        )

    @cached_property
    def windows(self) -> SlidingWindowCounterRateLimiter:
        """The sliding-window counter over :attr:`storage`."""
        from limits.aio.strategies import SlidingWindowCounterRateLimiter

        return SlidingWindowCounterRateLimiter(self.storage)

    def redis(self) -> Redis:
        """The redis-py asyncio client (only with a URL)."""
        if self._redis is None:
            raise RuntimeError("this limit store keeps its state in memory")
        return self._redis

    async def aclose(self) -> None:
        """Close the Redis connections, if any."""
        if self._redis is not None:
            await self._redis.aclose()
            await self._redis.connection_pool.aclose()

    def limiter(self, spec: LimitSpec) -> ProviderLimiter:
        """The limiter of one endpoint on this store."""
        return ProviderLimiter(spec, self)


class ProviderLimiter:
    """Admission for calls to one endpoint; waits (never fails) until the call may go."""

    def __init__(self, spec: LimitSpec, store: LimitStore) -> None:
        self.spec, self.store = spec, store
        from limits import RateLimitItemPerMinute

        self._local = asyncio.Semaphore(spec.max_concurrency)  # this process's share, always
        self._rpm = RateLimitItemPerMinute(spec.requests_per_minute) if spec.requests_per_minute else None
        self._tpm = RateLimitItemPerMinute(spec.tokens_per_minute) if spec.tokens_per_minute else None
        self._slots_key = f"{KEY_PREFIX}:inflight:{spec.name}"

    @asynccontextmanager
    async def call(self, estimated_tokens: int) -> AsyncIterator[None]:
        """Hold a slot for one call, after the request and token windows admitted it."""
        async with self._local:
            # Each check runs only when it can make the call wait: the retry wrapper around it costs
            # about a millisecond of CPU per call, paid on the event loop that every run shares.
            token = await self._acquire_shared_slot() if self.store.redis_url is not None else None
            renewing = asyncio.create_task(self._renew(token)) if token is not None else None
            try:
                if self._rpm is not None:
                    await self._wait_window(self._rpm, 1)
                if self._tpm is not None:
                    await self._wait_window(self._tpm, estimated_tokens)
                yield
            finally:
                if renewing is not None:
                    renewing.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await renewing
                if token is not None:
                    with contextlib.suppress(_redis_error()):  # unreachable: the lease expires instead
                        await self.store.redis().zrem(self._slots_key, token)

    async def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        """Charge tokens the estimate missed (best effort: a full window does not block a done call)."""
        extra = actual_tokens - estimated_tokens
        if self._tpm is not None and extra > 0:
            await self._hit(self._tpm, extra)

    async def try_admit(self, estimated_tokens: int) -> bool:
        """One admission attempt against both windows (a request is charged once admitted)."""
        if self._rpm is not None and not await self._hit(self._rpm, 1):
            return False
        return self._tpm is None or await self._hit(self._tpm, estimated_tokens)

    @_WAIT_FOR_REDIS
    async def _wait_window(self, item: RateLimitItemPerMinute | None, cost: int) -> None:
        if item is None:
            return
        waited = 0.0
        while not await self._hit(item, cost):
            stats = await self.store.windows.get_window_stats(item, self.spec.name, self._kind(item))
            pause = min(max(stats.reset_time - time.time(), _POLL_S), 1.0)
            waited += pause
            await asyncio.sleep(pause)
        if waited:
            log.info("llm.rate_limited", model=self.spec.name, waited_s=round(waited, 2))

    async def _hit(self, item: RateLimitItemPerMinute, cost: int) -> bool:
        # A call larger than the whole window could never pass: it waits for an empty window instead.
        cost = max(1, min(cost, item.amount))
        return await self.store.windows.hit(item, self.spec.name, self._kind(item), cost=cost)

    def _kind(self, item: RateLimitItemPerMinute) -> str:
        return "requests" if item is self._rpm else "tokens"

    @_WAIT_FOR_REDIS
    async def _acquire_shared_slot(self) -> str | None:
        """A lease in the shared in-flight set (Redis only); expires if this process dies."""
        if self.store.redis_url is None:
            return None
        token = uuid.uuid4().hex
        while True:
            now = time.time()
            args: list[float | int | str] = [now, self.spec.max_concurrency, now + self.spec.lease_s, token]
            if await self.store.acquire_slot(keys=[self._slots_key], args=args):
                return token
            await asyncio.sleep(_POLL_S)

    async def _renew(self, token: str) -> None:
        """Keep a lease alive while its call runs (a missed renewal leaves two more tries)."""
        while True:
            await asyncio.sleep(self.spec.lease_s / 3)
            with contextlib.suppress(_redis_error()):
                async with self.store.redis().pipeline(transaction=True) as pipe:
                    pipe.zadd(self._slots_key, {token: time.time() + self.spec.lease_s}, xx=True)
                    pipe.pexpire(self._slots_key, math.ceil(self.spec.lease_s * 1000))
                    await pipe.execute()


def estimate_tokens(texts: list[str], expected_output: int) -> int:
    """A provider-agnostic estimate: about four characters a token, plus the expected reply."""
    return math.ceil(sum(len(t) for t in texts) / 4) + expected_output
