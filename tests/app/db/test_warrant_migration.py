"""Migration 0017: validity records and a project's required warrant, up and down on both databases."""

from __future__ import annotations

import asyncio

import pytest
from alembic import command
from sqlalchemy import inspect as sa_inspect
from sqlalchemy import text

from app.db import alembic_config, create_engine

pytestmark = [pytest.mark.both_databases, pytest.mark.empty_database]  # it migrates from 0016 itself


async def _tables_and_columns(database_url: str) -> tuple[set[str], set[str]]:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(
                lambda sync: (
                    set(sa_inspect(sync).get_table_names()),
                    {c["name"] for c in sa_inspect(sync).get_columns("projects")},
                )
            )
    finally:
        await engine.dispose()


async def test_0017_adds_records_and_the_project_bound_and_takes_them_back(database_url: str) -> None:
    config = alembic_config(database_url)
    await asyncio.to_thread(command.upgrade, config, "0016")
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO projects (id, name, created_at)"
                    " VALUES ('p1', 'north', '2026-11-01 10:00:00')"
                )
            )
    finally:
        await engine.dispose()
    await asyncio.to_thread(command.upgrade, config, "0017")
    tables, columns = await _tables_and_columns(database_url)
    assert "validity_records" in tables and "require_warrant" in columns
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            kept = (await connection.execute(text("SELECT name, require_warrant FROM projects"))).all()
            assert [tuple(row) for row in kept if row[0] == "north"] == [
                ("north", None)
            ]  # unset: the setting
            await connection.execute(
                text(
                    "INSERT INTO validity_records (id, project_id, panel_id, identity, judge_model, set_name,"
                    " set_hash, split, n_flawed, n_sound, false_accept, false_accept_high, specificity,"
                    " detection, adversarial_gap, measured_at) VALUES ('r1', 'p1', 'abc', '{}', 'sim', 's',"
                    " 'h', 'heldout', 120, 80, '{}', 0.08, '{}', '{}', '{}', '2026-11-26 23:00:00')"
                )
            )
    finally:
        await engine.dispose()
    await asyncio.to_thread(command.downgrade, config, "0016")
    tables, columns = await _tables_and_columns(database_url)
    assert "validity_records" not in tables and "require_warrant" not in columns and "projects" in tables
    await asyncio.to_thread(command.upgrade, config, "head")
    tables, columns = await _tables_and_columns(database_url)
    assert "validity_records" in tables and "require_warrant" in columns
