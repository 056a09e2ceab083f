"""A task cancelled mid-statement on SQLite leaves no write lock behind (the minute-long stops).

SQLAlchemy closes (invalidates) a connection whose statement is interrupted by a cancellation. If
the statement still had rows to hand back (a SELECT, or an UPDATE ... RETURNING such as the
heartbeat's lease renewal), Python's sqlite3 closed the connection with that statement still
active: SQLite then keeps the connection as a zombie, with its open transaction and its write lock,
until the statement is garbage collected. Every other writer (the checkpointer, the outbox,
``release_leases``) waited out the 30 s busy timeout meanwhile, once or more.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from app.db import create_engine, session_factory, short_session


def write_lock_free(path: str) -> bool:
    """Whether another connection can take SQLite's write lock at once (no busy wait)."""
    probe = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()


async def test_a_transaction_cancelled_mid_statement_releases_the_write_lock(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_url(database_url).database
    assert path is not None
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    # A gate instead of timing: the statement's rows are never fetched, and its cursor (so the
    # statement) stays referenced, as a traceback or a frame can keep it for a while.
    fetching, held = asyncio.Event(), []
    fetchall = aiosqlite.Cursor.fetchall

    async def parked(cursor: aiosqlite.Cursor) -> Any:
        held.append(cursor)
        fetching.set()
        await asyncio.Event().wait()  # cancelled here: after the statement ran, before its rows

    async def renew() -> None:
        async with short_session(sessions) as session:
            await session.execute(text("INSERT INTO probe (n) VALUES (1), (2)"))  # the write lock
            monkeypatch.setattr(aiosqlite.Cursor, "fetchall", parked)
            await session.execute(text("UPDATE probe SET n = n + 1 RETURNING n"))

    try:
        async with short_session(sessions) as session:
            await session.execute(text("CREATE TABLE probe (n INTEGER)"))
        task = asyncio.create_task(renew())
        await fetching.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        monkeypatch.setattr(aiosqlite.Cursor, "fetchall", fetchall)
        assert held, "the statement was never parked"
        assert write_lock_free(path)  # the cancelled transaction rolled back and let go of the lock
        async with short_session(sessions) as session:  # and nothing of it was stored
            assert (await session.execute(text("SELECT count(*) FROM probe"))).scalar() == 0
    finally:
        held.clear()
        await engine.dispose()
