"""The async engine, short-lived sessions, and migrations to head."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

if TYPE_CHECKING:  # Alembic loads when a database is migrated or checked, not with every command
    from alembic.config import Config


def normalize_url(url: str) -> str:
    """Pick our async drivers: aiosqlite for SQLite, psycopg 3 for PostgreSQL."""
    parsed = make_url(url)
    if parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    elif parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2", "postgresql+asyncpg"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    """Whether the URL names an SQLite database."""
    return make_url(url).get_backend_name() == "sqlite"


class RollingBackConnection(sqlite3.Connection):
    """An SQLite connection that rolls back its open transaction before it closes.

    SQLAlchemy closes a connection whose statement a cancellation interrupted (a task stopped
    mid-transaction: a run's writer, the heartbeat, the outbox, a request). If that statement still
    had rows to hand back (a SELECT, an UPDATE ... RETURNING), Python's sqlite3 (3.11) closed the
    connection with the statement active, and SQLite kept it as a zombie, its transaction and write
    lock with it, until the statement was garbage collected: every other writer waited out the busy
    timeout meanwhile (a stop with runs in flight took up to a minute). A rollback first ends the
    transaction (the statement is aborted), so nothing of it is kept and no lock outlives it.
    """

    def close(self) -> None:
        if self.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # closing anyway: closing rolls back too
                self.rollback()
        super().close()


def create_engine(url: str) -> AsyncEngine:
    """An async engine; SQLite gets WAL mode, foreign keys, a busy timeout, and connections that
    roll back before they close (``RollingBackConnection``)."""
    url = normalize_url(url)
    if not is_sqlite(url):
        return create_async_engine(url, pool_pre_ping=True)
    engine = create_async_engine(url, connect_args={"timeout": 30, "factory": RollingBackConnection})

    @event.listens_for(engine.sync_engine, "connect")
    def _pragmas(dbapi_connection: Any, _: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL never corrupts the database; a power cut (not a crash of the process)
        # may lose the last commits. FULL syncs every commit, and a run commits each event.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    return engine


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions that keep loaded objects usable after commit."""
    return async_sessionmaker(engine, expire_on_commit=False)


class _Owned(Protocol):
    project_id: str


_Row = TypeVar("_Row", bound=_Owned)


async def project_row(session: AsyncSession, table: type[_Row], row_id: str, project_id: str) -> _Row | None:
    """The project's row of ``table`` with this id; None for an unknown id and for another project's
    row alike. No id holds NUL (PostgreSQL would refuse to look it up), so such an id is unknown."""
    from app.text import unstorable_reason

    if unstorable_reason(row_id) is not None:
        return None
    row = await session.get(table, row_id)
    return row if row is not None and row.project_id == project_id else None


@asynccontextmanager
async def short_session(factory: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """A session that commits on success and is closed at once (streams and workers use these)."""
    async with factory() as session, session.begin():
        yield session


def alembic_config(url: str | None = None) -> Config:
    """Alembic's configuration, built in code so it works from an installed package too."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resources.files("migrations")))
    if url is not None:
        config.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    return config


class DatabaseUnreachable(RuntimeError):
    """The configured database cannot be reached: its message is one line, with where and why."""


def where(url: str) -> str:
    """Where a database URL points, for people, never with its password: host and port, or the file."""
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "sqlite":
        return f"the SQLite file {parsed.database or ':memory:'}"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.host or 'localhost'}{port} (database {parsed.database or '-'})"


def _cause(exc: BaseException) -> str:
    """The first line of the innermost error's message: 'Connection refused', 'unable to open
    database file', the name that did not resolve."""
    while exc.__cause__ is not None or getattr(exc, "orig", None) is not None:
        exc = getattr(exc, "orig", None) or exc.__cause__  # type: ignore[assignment]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.rsplit("failed: ", 1)[-1].strip()


async def reach(url: str, timeout_s: float = 10.0) -> None:
    """Connect once; DatabaseUnreachable (one line: where, and why) if that fails. PostgreSQL gets a
    connect timeout, so a host that drops packets is an error in seconds, not a hang."""
    url = normalize_url(url)
    connect_args: dict[str, Any] = {} if is_sqlite(url) else {"connect_timeout": max(1, int(timeout_s))}
    engine = create_async_engine(url, connect_args=connect_args)
    try:
        async with engine.connect():
            pass
    except Exception as exc:  # the driver's own errors differ (psycopg, sqlite3, socket); all say why
        raise DatabaseUnreachable(f"cannot reach the database at {where(url)}: {_cause(exc)}") from exc
    finally:
        await engine.dispose()


@contextmanager
def migration_lock(url: str) -> Iterator[None]:
    """On SQLite, hold an exclusive lock on ``<database>.migrate-lock`` beside the file while
    migrating: processes that start together (`serve` and `keys create`) migrate one at a time and
    the later ones find the schema at head. PostgreSQL serialises with an advisory lock in the
    migration's own transaction (``migrations/env.py``); an in-memory database is one process's."""
    parsed = make_url(normalize_url(url))
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        yield
        return
    with open(Path(database).with_name(Path(database).name + ".migrate-lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes, or the process dies
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _upgrade(url: str) -> None:
    from alembic import command

    with migration_lock(url):
        command.upgrade(alembic_config(url), "head")


async def migrate(url: str) -> None:
    """Upgrade the database to the newest migration, one process at a time; DatabaseUnreachable
    (one line) when it cannot be reached at all."""
    await reach(url)
    await asyncio.to_thread(_upgrade, url)


@cache
def head_revision() -> str | None:
    """The newest migration shipped with this code (read once: it cannot change while running)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def migrations_at_head(engine: AsyncEngine) -> bool:
    """Whether the database's revision is the newest one."""
    from alembic.runtime.migration import MigrationContext

    head = head_revision()
    async with engine.connect() as connection:
        current = await connection.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())
    return current == head


def dialect_insert(session: AsyncSession) -> Any:
    """The INSERT construct of the session's database (PostgreSQL's or SQLite's), for the
    ON CONFLICT clauses both have but plain SQLAlchemy does not."""
    from sqlalchemy.dialects.postgresql import insert as pg_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
