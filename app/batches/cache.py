"""The response cache on the service's database (the `llm_cache` table)."""

from __future__ import annotations

import contextlib
import hashlib

from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import short_session
from app.models import DEFAULT_PROJECT, CachedResponse


class SqlResponseCache:
    """A content-addressed cache shared by every process on the same database, and seen by one
    project only: a project's replies are stored under keys no other project asks for, so a cached
    reply (and whether there is one) never crosses projects. The default project keeps the plain
    keys, so what it cached before projects existed stays usable."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], project_id: str = DEFAULT_PROJECT) -> None:
        self._sessions, self._project = sessions, project_id

    def _scoped(self, key: str) -> str:
        if self._project == DEFAULT_PROJECT:
            return key
        return hashlib.sha256(f"{self._project}\n{key}".encode()).hexdigest()

    async def get(self, key: str) -> str | None:
        """The stored reply for ``key``; a miss while the database is unreachable."""
        try:
            async with short_session(self._sessions) as session:
                row = await session.get(CachedResponse, self._scoped(key))
                return row.text if row else None
        except (OperationalError, InterfaceError):
            return None

    async def put(self, key: str, model: str, text: str) -> None:
        """Store a reply; a concurrent writer of the same key wins harmlessly, and an outage skips it."""
        with contextlib.suppress(IntegrityError, OperationalError, InterfaceError):
            async with short_session(self._sessions) as session:
                session.add(CachedResponse(key=self._scoped(key), model=model, text=text))
