"""Migration 0021: an Idempotency-Key becomes the project's. Two runs that two keys of one project
sent with the same Idempotency-Key before it both stay; the key stays with the older run."""

from __future__ import annotations

import asyncio

import pytest
from alembic import command
from sqlalchemy import text

from app.db import alembic_config, create_engine, migrate

pytestmark = [pytest.mark.both_databases, pytest.mark.empty_database]


async def test_duplicates_within_a_project_keep_their_rows_and_the_older_keeps_the_key(
    database_url: str,
) -> None:
    await asyncio.to_thread(command.upgrade, alembic_config(database_url), "0018")
    engine = create_engine(database_url)
    statements = [
        "INSERT INTO problems (id, content_hash, question, solution, created_at)"
        " VALUES ('p1', 'c1', 'q', 's', '2026-11-01 10:00:00')",
        "INSERT INTO projects (id, name, created_at) VALUES ('north', 'north', '2026-11-01 10:00:00')",
    ]
    runs = [  # (id, project, api key, created): r1 and r2 share a project and a key string
        ("r1", "default", "k1", "2026-11-01 10:00:00"),
        ("r2", "default", "k2", "2026-11-01 11:00:00"),
        ("r3", "north", "k3", "2026-11-01 12:00:00"),
    ]
    for run, project, key, created in runs:
        statements.append(
            "INSERT INTO runs (id, project_id, problem_id, status, model, judge_model, policy, max_rounds,"
            " arm, created_at, api_key_id, idempotency_key)"
            f" VALUES ('{run}', '{project}', 'p1', 'accepted', 'm', 'j', 'default', 3, 'loop', '{created}',"
            f" '{key}', 'same')"
        )
    try:
        async with engine.begin() as connection:
            for statement in statements:
                await connection.execute(text(statement))
        await migrate(database_url)
        async with engine.connect() as connection:
            rows = (await connection.execute(text("SELECT id, idempotency_key FROM runs ORDER BY id"))).all()
        assert [tuple(row) for row in rows] == [("r1", "same"), ("r2", None), ("r3", "same")]
        async with engine.connect() as connection:
            with pytest.raises(Exception, match=r"(?i)unique"):
                await connection.execute(
                    text(
                        "INSERT INTO runs (id, project_id, problem_id, status, model, judge_model, policy,"
                        " max_rounds, arm, created_at, api_key_id, idempotency_key) VALUES ('r4',"
                        " 'default', 'p1', 'queued', 'm', 'j', 'default', 3, 'loop', '2026-11-02 10:00:00',"
                        " 'k9', 'same')"
                    )
                )
    finally:
        await engine.dispose()
    down = alembic_config(database_url)
    await asyncio.to_thread(command.downgrade, down, "0018")  # and back: the key-scoped constraint again
