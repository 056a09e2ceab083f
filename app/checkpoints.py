"""The LangGraph checkpointer on the service's own database (SQLite file or PostgreSQL)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from sqlalchemy.engine import make_url

from app.db import is_sqlite, normalize_url
from graphs.checkpoint import state_serde


@asynccontextmanager
async def open_checkpointer(database_url: str) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """A checkpointer whose tables live beside ours; closed on exit."""
    url = make_url(normalize_url(database_url))
    if is_sqlite(database_url):
        connection = await aiosqlite.connect(url.database or ":memory:", timeout=30)
        await connection.execute("PRAGMA journal_mode=WAL")
        try:
            saver = AsyncSqliteSaver(connection, serde=state_serde())
            await saver.setup()
            yield saver
        finally:
            await connection.close()
        return
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    async with AsyncPostgresSaver.from_conn_string(conninfo, serde=state_serde()) as postgres:
        await postgres.setup()
        yield postgres
