"""The LangGraph checkpointer on the service's own database (SQLite file or PostgreSQL)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from sqlalchemy.engine import make_url

from app.db import is_sqlite, normalize_url
from graphs.checkpoint import state_serde


@asynccontextmanager
async def open_checkpointer(
    database_url: str, max_connections: int = 4
) -> AsyncIterator[BaseCheckpointSaver[str]]:
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
    # A pool that checks each connection before lending it: after a database restart the saver
    # reconnects (one long-lived connection would fail every later run).
    pool: AsyncConnectionPool = AsyncConnectionPool(
        conninfo,
        min_size=1,
        max_size=max_connections,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        check=AsyncConnectionPool.check_connection,
        open=False,
    )
    await pool.open()
    try:
        postgres = AsyncPostgresSaver(pool, serde=state_serde())  # type: ignore[arg-type]
        await postgres.setup()
        yield postgres
    finally:
        await pool.close()
