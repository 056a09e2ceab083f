"""Alembic environment: runs migrations over the async engine, against SQLModel's metadata."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import app.models  # noqa: F401  (registers the tables)
from app.db import create_engine

target_metadata = SQLModel.metadata
MIGRATION_LOCK = 0x7468696E6B  # any constant shared by every thinkloop process: 'think'


def _run(connection: Connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        # SQLite alters a table by copying it into a new one and dropping the old; with foreign keys
        # enforced, dropping a table other rows point at fails (or would delete them). So they are
        # off while migrating (the pragma only takes effect outside a transaction) and every
        # reference is checked before the migration commits.
        connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
        connection.commit()  # end the transaction SQLAlchemy began for it, so the migration has its own
    _migrate(connection)
    if sqlite:
        connection.exec_driver_sql("PRAGMA foreign_keys=ON")
        connection.commit()


def _migrate(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Processes that start together (API replicas, workers) migrate one at a time; the
            # later ones then find the schema at head. Alembic reads the heads after this point.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        context.run_migrations()
        if connection.dialect.name == "sqlite":
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise RuntimeError(f"the migration left rows pointing at nothing: {broken[:5]}")


async def _online() -> None:
    engine = create_engine(context.config.get_main_option("sqlalchemy.url") or "")
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
    finally:  # a migration that stops leaves no connection open behind it
        await engine.dispose()


if context.is_offline_mode():
    context.configure(url=context.config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_online())
