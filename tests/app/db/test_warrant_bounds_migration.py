"""Migration 0026: a record's sound-passed bound and twins, and a project's required sound-passed
bound, up and down on both databases; a record saved before it has no bound (and meets no
required warrant)."""

from __future__ import annotations

import asyncio

import pytest
from alembic import command
from sqlalchemy import inspect as sa_inspect
from sqlalchemy import text

from app.db import alembic_config, create_engine

pytestmark = [pytest.mark.both_databases, pytest.mark.empty_database]  # it migrates from 0025 itself
ADDED = {
    ("validity_records", "specificity_low"),
    ("validity_records", "n_twins"),
    ("projects", "require_specificity"),
}


async def _columns(database_url: str) -> set[tuple[str, str]]:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(
                lambda sync: {
                    (table, c["name"])
                    for table in ("validity_records", "projects")
                    for c in sa_inspect(sync).get_columns(table)
                }
            )
    finally:
        await engine.dispose()


async def test_0026_adds_the_bounds_and_takes_them_back(database_url: str) -> None:
    config = alembic_config(database_url)
    await asyncio.to_thread(command.upgrade, config, "0025")
    assert not ADDED & await _columns(database_url)
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO validity_records (id, project_id, panel_id, identity, judge_model, set_name,"
                    " set_hash, split, n_flawed, n_sound, false_accept, false_accept_high, specificity,"
                    " detection, adversarial_gap, measured_at) VALUES ('r1', 'default', 'abc', '{}', 'sim',"
                    " 's', 'h', 'heldout', 120, 80, '{}', 0.08, '{}', '{}', '{}', '2026-11-26 23:00:00')"
                )
            )
    finally:
        await engine.dispose()
    await asyncio.to_thread(command.upgrade, config, "0026")
    assert await _columns(database_url) >= ADDED
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            kept = (
                await connection.execute(text("SELECT id, specificity_low, n_twins FROM validity_records"))
            ).all()
            assert [tuple(row) for row in kept] == [("r1", None, None)]  # no bound: it was never checked
            floors = (await connection.execute(text("SELECT require_specificity FROM projects"))).all()
            assert floors and all(row[0] is None for row in floors)  # the setting's
    finally:
        await engine.dispose()
    await asyncio.to_thread(command.downgrade, config, "0025")
    assert not ADDED & await _columns(database_url)
    await asyncio.to_thread(command.upgrade, config, "head")
    assert await _columns(database_url) >= ADDED
