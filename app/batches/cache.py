"""The response cache on the service's database (the `llm_cache` table)."""

from __future__ import annotations

import contextlib

from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import short_session
from app.models import CachedResponse


class SqlResponseCache:
    """A content-addressed cache shared by every process on the same database."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def get(self, key: str) -> str | None:
        """The stored reply for ``key``; a miss while the database is unreachable."""
        try:
            async with short_session(self._sessions) as session:
                row = await session.get(CachedResponse, key)
                return row.text if row else None
        except (OperationalError, InterfaceError):
            return None

    async def put(self, key: str, model: str, text: str) -> None:
        """Store a reply; a concurrent writer of the same key wins harmlessly, and an outage skips it."""
        with contextlib.suppress(IntegrityError, OperationalError, InterfaceError):
            async with short_session(self._sessions) as session:
                session.add(CachedResponse(key=key, model=model, text=text))
