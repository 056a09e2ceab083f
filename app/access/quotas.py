"""Quotas: requests per minute per key and per project, daily token and cost caps for the runs of
a project and of a key, and a brake on repeated failed sign-ins from one client.

Rate windows come from the `limits` library (a moving window per key, atomic in Redis), in this
process's memory or, with a Redis URL (THINKLOOP_LIMITS_URL, else a Redis broker), shared by every
API process, so N replicas together keep one limit. A limit of 0 is no limit.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass

import structlog
from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.asyncio import ConnectionPool
from redis.exceptions import RedisError
from sqlalchemy.ext.asyncio import AsyncSession

from app.access import usage
from app.access.reserve import Amount, reserve
from app.errors import TooManyRequests
from app.models import ApiKey, utcnow
from app.settings import Settings

KEY_PREFIX = "thinkloop:quotas"
log = structlog.get_logger(__name__)
# The shared store is away (a Redis restart): quotas let requests through meanwhile.
_STORE_DOWN = (RedisError, OSError)


@dataclass(frozen=True)
class Window:
    """Where a caller stands in its tightest window: for the RateLimit-* headers."""

    limit: int
    remaining: int
    reset_s: int

    def headers(self) -> dict[str, str]:
        """The RateLimit-Limit / -Remaining / -Reset headers (IETF httpapi draft, in seconds)."""
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset_s),
        }


class Quotas:
    """The limits every API process checks before it does a request's work."""

    def __init__(self, settings: Settings) -> None:
        url = settings.shared_limits_url()
        self._pool = ConnectionPool.from_url(url) if url else None
        self.storage: Storage = (
            RedisStorage(
                f"async+{url}",
                implementation="redispy",
                key_prefix=KEY_PREFIX,
                connection_pool=self._pool,  # type: ignore[arg-type]
            )
            if url
            else MemoryStorage()
        )
        self.limiter = MovingWindowRateLimiter(self.storage)
        self.settings = settings
        self._per_key = _per_minute(settings.key_requests_per_minute)
        self._per_project = _per_minute(settings.project_requests_per_minute)
        self._failures = _per_minute(settings.signin_failures_per_minute)

    async def admit(self, key: ApiKey) -> Window | None:
        """Count a request of ``key`` against its key's and its project's windows; TooManyRequests
        (with Retry-After and RateLimit-* headers) when either is spent. Returns the tighter window.
        While the shared store (Redis) is unreachable the request is let through and a warning
        logged: an outage of the limiter must not become an outage of the API."""
        try:
            return await self._admit(key)
        except _STORE_DOWN as exc:
            log.warning("quotas.unavailable", error=type(exc).__name__)
            return None

    async def _admit(self, key: ApiKey) -> Window | None:
        windows = []
        for item, scope, who in (
            (self._per_key, "key", key.id),
            (self._per_project, "project", key.project_id),
        ):
            if item is None:
                continue
            if not await self.limiter.hit(item, scope, who):
                window = await self._window(item, scope, who)
                raise TooManyRequests(
                    f"This {scope} made {item.amount} requests in the last minute, its limit; "
                    f"try again in {window.reset_s} s.",
                    headers=window.headers() | {"Retry-After": str(window.reset_s)},
                )
            windows.append(await self._window(item, scope, who))
        return min(windows, key=lambda w: w.remaining, default=None)

    async def check_signin(self, client: str) -> None:
        """TooManyRequests while ``client`` is over its failed sign-ins of the last minute (the brake
        is off while the shared store is unreachable)."""
        if self._failures is None:
            return
        try:
            if await self.limiter.test(self._failures, "signin", client):
                return
        except _STORE_DOWN as exc:
            log.warning("quotas.unavailable", error=type(exc).__name__)
            return
        window = await self._window(self._failures, "signin", client)
        raise TooManyRequests(
            f"Too many failed sign-ins from this client; try again in {window.reset_s} s.",
            headers={"Retry-After": str(window.reset_s)},
        )

    async def signin_failed(self, client: str) -> None:
        """Count a failed sign-in of ``client``."""
        if self._failures is not None:
            with contextlib.suppress(*_STORE_DOWN):
                await self.limiter.hit(self._failures, "signin", client)

    async def _window(self, item: RateLimitItem, *ids: str) -> Window:
        stats = await self.limiter.get_window_stats(item, *ids)
        reset = max(1, math.ceil(stats.reset_time - time.time()))
        return Window(item.amount, max(0, stats.remaining), reset)

    async def check_daily(self, session: AsyncSession, key: ApiKey) -> None:
        """QuotaExceeded when today's (UTC) spend plus reservations of the key's project, or of the
        key itself, has reached a daily token or cost cap: checked before model work that reserves
        nothing of its own (``app.access.reserve`` reserves as it checks). A project's own caps,
        where set, stand in for the global ones."""
        await reserve(session, self.settings, "", (key.project_id, key.id), Amount())

    async def aclose(self) -> None:
        """Close the Redis connections, if any."""
        if self._pool is not None:
            await self._pool.aclose()


async def spent_today(session: AsyncSession, project_id: str) -> tuple[int, float]:
    """Tokens and cost the project's LLM calls spent today (UTC), from the usage ledger: runs
    deleted since keep counting."""
    return await usage.spent_on(session, project_id, utcnow().date())


def _per_minute(amount: int) -> RateLimitItem | None:
    return RateLimitItemPerMinute(amount) if amount > 0 else None
