"""Announcing stored events (PostgreSQL NOTIFY) and the listener that wakes other processes' streams."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import create_engine, session_factory, short_session
from app.runs.stream import CHANNEL, Notifier, announce, listening


@pytest.fixture
async def sessions(postgres_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(postgres_url)
    yield session_factory(engine)
    await engine.dispose()


def libpq(url: str) -> str:
    return url.replace("+psycopg", "")


async def send(url: str, payload: str) -> None:
    """A notification from outside any transaction of ours (a sentinel that orders deliveries)."""
    async with await psycopg.AsyncConnection.connect(libpq(url), autocommit=True) as connection:
        await connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))


async def payloads(connection: psycopg.AsyncConnection[Any], count: int) -> list[str]:
    """The next ``count`` notifications' payloads heard on ``connection``, in order."""
    received = []
    async with asyncio.timeout(60):
        async for note in connection.notifies(stop_after=count):
            received.append(note.payload)
    return received


@pytest.mark.postgres
async def test_an_announcement_is_delivered_at_commit(
    postgres_url: str, sessions: async_sessionmaker[AsyncSession]
) -> None:
    async with await psycopg.AsyncConnection.connect(libpq(postgres_url), autocommit=True) as ear:
        await ear.execute(f"LISTEN {CHANNEL}")
        async with short_session(sessions) as session:
            await announce(session, "run-a", 7)
            await send(postgres_url, "sentinel:0")  # committed while the announcement's is open
        assert await payloads(ear, 2) == ["sentinel:0", "run-a:7"]  # delivered at commit, not before


@pytest.mark.postgres
async def test_a_rolled_back_announcement_is_never_delivered(
    postgres_url: str, sessions: async_sessionmaker[AsyncSession]
) -> None:
    async with await psycopg.AsyncConnection.connect(libpq(postgres_url), autocommit=True) as ear:
        await ear.execute(f"LISTEN {CHANNEL}")
        async with sessions() as session, session.begin():
            await announce(session, "run-b", 1)
            await session.rollback()
        await send(postgres_url, "sentinel:0")
        assert await payloads(ear, 1) == ["sentinel:0"]


async def test_on_sqlite_announcing_and_listening_do_nothing(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'one-process.db'}"
    engine = create_engine(url)
    statements: list[str] = []
    event.listen(engine.sync_engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    try:
        async with short_session(session_factory(engine)) as session:
            await announce(session, "run-c", 1)
    finally:
        await engine.dispose()
    assert statements == []
    async with listening(url, Notifier()) as listener:
        assert listener is None


@pytest.mark.postgres
async def test_the_listener_wakes_the_streams_of_an_announced_run(
    postgres_url: str, sessions: async_sessionmaker[AsyncSession]
) -> None:
    notifier = Notifier()
    async with listening(postgres_url, notifier) as listener:
        assert listener is not None
        await asyncio.wait_for(listener.listened(), 60)
        with notifier.following("run-d") as follow:
            waiter = asyncio.create_task(follow.wait(600))  # no re-read within the test
            async with short_session(sessions) as session:
                await announce(session, "run-d", 1)
            await asyncio.wait_for(waiter, 60)


@pytest.mark.postgres
async def test_the_listener_survives_its_connection_being_terminated(
    postgres_url: str, sessions: async_sessionmaker[AsyncSession]
) -> None:
    notifier = Notifier()
    async with listening(postgres_url, notifier) as listener:
        assert listener is not None
        await asyncio.wait_for(listener.listened(), 60)
        first = listener.backend_pid
        with notifier.following("run-e") as follow:
            waiting = asyncio.create_task(follow.wait(600))
            async with await psycopg.AsyncConnection.connect(libpq(postgres_url), autocommit=True) as admin:
                await admin.execute("SELECT pg_terminate_backend(%s)", (first,))
            await asyncio.wait_for(listener.listened(2), 60)
            # Whatever was stored while it was away: every stream looks again as soon as it is back.
            await asyncio.wait_for(waiting, 60)
            assert listener.backend_pid not in (None, first)
            waiter = asyncio.create_task(follow.wait(600))
            async with short_session(sessions) as session:
                await announce(session, "run-e", 2)
            await asyncio.wait_for(waiter, 60)
