"""The LangGraph checkpointer on the service's own database (SQLite file or PostgreSQL)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from sqlalchemy.engine import make_url

from app.db import is_sqlite, normalize_url
from graphs.checkpoint import RerunsFailedTasks, state_serde

SETUP_LOCK = 7_246_115_002  # the advisory lock key of the checkpointer's table setup


class SqliteSaver(RerunsFailedTasks, AsyncSqliteSaver):
    """LangGraph's SQLite checkpointer; a resumed run executes its failed step again in full."""


class PostgresSaver(RerunsFailedTasks, AsyncPostgresSaver):
    """LangGraph's PostgreSQL checkpointer; a resumed run executes its failed step again in full."""


@asynccontextmanager
async def open_checkpointer(
    database_url: str, max_connections: int = 4
) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """A checkpointer whose tables live beside ours; closed on exit."""
    url = make_url(normalize_url(database_url))
    if is_sqlite(database_url):
        # Autocommit: each checkpoint write is one statement, so a run cancelled mid-write can never
        # leave a transaction open on this shared connection (holding SQLite's write lock).
        connection = await aiosqlite.connect(url.database or ":memory:", timeout=30, isolation_level=None)
        await connection.execute("PRAGMA journal_mode=WAL")
        await connection.execute("PRAGMA synchronous=NORMAL")  # as the service's own connections
        try:
            saver = SqliteSaver(connection, serde=state_serde())
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
        max_size=max(2, max_connections),  # setup holds one for its lock and uses another
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        check=AsyncConnectionPool.check_connection,
        open=False,
    )
    await pool.open()
    try:
        postgres = PostgresSaver(pool, serde=state_serde())  # type: ignore[arg-type]
        # Processes starting together would race to create the same tables: one at a time. Waiting
        # by polling, not in pg_advisory_lock: a waiting statement's snapshot would stall the
        # holder's CREATE INDEX CONCURRENTLY, which waits for every older snapshot.
        async with pool.connection() as lock:
            while not await _try_lock(lock):  # noqa: ASYNC110 - held by another process: no event to wait on
                await asyncio.sleep(0.1)
            try:
                await postgres.setup()
            finally:
                await lock.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
        yield postgres
    finally:
        await pool.close()


async def _try_lock(connection: AsyncConnection[Any]) -> bool:
    row = await (await connection.execute("SELECT pg_try_advisory_lock(%s)", (SETUP_LOCK,))).fetchone()
    return bool(row and next(iter(row.values())))
