"""The response cache on the service's database (the `llm_cache` table)."""

from __future__ import annotations

import contextlib
import hashlib

from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agents.llm.client import CachedReply
from app.db import dialect_insert, short_session
from app.models import DEFAULT_PROJECT, CachedResponse, CacheUse


class SqlResponseCache:
    """A content-addressed cache shared by every process on the same database, and seen by one
    project only: a project's replies are stored under keys no other project asks for, so a cached
    reply (and whether there is one) never crosses projects. The default project keeps the plain
    keys, so what it cached before projects existed stays usable.

    With a ``batch_id``, every reply the batch stores or reuses is noted as used by it, so deleting
    the batch deletes the replies no other batch used."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        project_id: str = DEFAULT_PROJECT,
        batch_id: str | None = None,
    ) -> None:
        self._sessions, self._project, self._batch = sessions, project_id, batch_id
        self.hits = 0  # replies answered from the cache through this object (one per batch item)

    def _scoped(self, key: str) -> str:
        if self._project == DEFAULT_PROJECT:
            return key
        return hashlib.sha256(f"{self._project}\n{key}".encode()).hexdigest()

    async def get(self, key: str) -> CachedReply | None:
        """The stored reply for ``key`` and the model id its endpoint reported; a miss while the
        database is unreachable."""
        try:
            async with short_session(self._sessions) as session:
                row = await session.get(CachedResponse, self._scoped(key))
                if row is not None:
                    await self._used(session, row.key)
                    self.hits += 1
                return CachedReply(row.text, row.reported_model) if row else None
        except (OperationalError, InterfaceError):
            return None

    async def put(self, key: str, model: str, text: str, reported_model: str | None = None) -> None:
        """Store a reply; a concurrent writer of the same key wins harmlessly, and an outage skips it."""
        scoped = self._scoped(key)
        with contextlib.suppress(IntegrityError, OperationalError, InterfaceError):
            async with short_session(self._sessions) as session:
                session.add(CachedResponse(key=scoped, model=model, text=text, reported_model=reported_model))
        with contextlib.suppress(OperationalError, InterfaceError):
            async with short_session(self._sessions) as session:
                await self._used(session, scoped)

    async def _used(self, session: AsyncSession, scoped: str) -> None:
        if self._batch is None:
            return
        insert = dialect_insert(session)
        await session.execute(
            insert(CacheUse).values(key=scoped, batch_id=self._batch).on_conflict_do_nothing()
        )
