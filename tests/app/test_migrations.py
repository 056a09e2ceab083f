"""The SQLModel tables and the Alembic migrations describe the same schema, on both databases."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

import app.models  # noqa: F401  (registers the tables)
from app.db import create_engine, migrate, migrations_at_head


async def test_models_and_migrations_agree(database_url: str) -> None:
    await migrate(database_url)
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            diff = await connection.run_sync(
                lambda sync: compare_metadata(MigrationContext.configure(sync), SQLModel.metadata)
            )
        assert diff == []
        assert await migrations_at_head(engine)
    finally:
        await engine.dispose()


async def test_migrating_twice_is_harmless(database_url: str) -> None:
    await migrate(database_url)
    await migrate(database_url)
    engine = create_engine(database_url)
    try:
        assert await migrations_at_head(engine)
    finally:
        await engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_processes_that_start_together_migrate_one_at_a_time(database_url: str) -> None:
    env = os.environ | {"THINKLOOP_DATABASE_URL": database_url}
    command = [sys.executable, "-m", "app", "migrate"]
    processes = [
        await asyncio.create_subprocess_exec(*command, env=env, stderr=asyncio.subprocess.PIPE)
        for _ in range(3)
    ]
    results = [(await p.wait(), (await p.stderr.read()).decode()[-500:]) for p in processes if p.stderr]
    assert [code for code, _ in results] == [0, 0, 0], results
