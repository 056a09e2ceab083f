"""Migration 0022: items held by their runs' leases and in the runs' statuses, up and down, losing
nothing, on a database made by the previous head (0021), on both databases."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from alembic import command
from sqlalchemy import inspect as sa_inspect
from sqlalchemy import text

from app.db import alembic_config, create_engine

pytestmark = [pytest.mark.both_databases, pytest.mark.empty_database]  # it migrates from 0021 itself

NOW = "2026-11-27 04:00:00"
LATER = "2026-11-27 04:00:30"
# run id: (status, lease_owner, lease_until)
RUNS = {
    "r-held": ("running", "w1:1", LATER),  # held, as the old runner kept it with its item
    "r-free": ("running", None, None),  # its item's claim was the only one: carried to the run
    "r-accepted": ("accepted", None, None),
    "r-error": ("error", None, None),
    "r-screened": ("screened", None, None),
}
# item id: (status, outcome, claimed_by, lease_until, run_id)
ITEMS = {
    1: ("pending", None, None, None, None),
    2: ("running", None, "w1:1", LATER, "r-held"),
    3: ("running", None, "w2:2", LATER, "r-free"),
    4: ("done", "accepted", None, None, "r-accepted"),
    5: ("done", "screened", None, None, "r-screened"),
    6: ("done", None, None, None, "r-accepted"),  # no outcome stored: its run's
    7: ("failed", "error", None, None, "r-error"),
    8: ("cancelled", "cancelled", None, None, None),
    9: ("done", None, None, None, None),  # no outcome anywhere
}


def _value(v: str | None) -> str:
    return "NULL" if v is None else f"'{v}'"


async def _seed(database_url: str) -> None:
    statements = [
        "INSERT INTO problems (id, content_hash, question, solution, created_at)"
        f" VALUES ('p1', 'c1', 'q', 's', '{NOW}')",
        "INSERT INTO datasets (id, project_id, name, format, n_problems, created_at)"
        f" VALUES ('d1', 'default', 'd', 'jsonl', 1, '{NOW}')",
        "INSERT INTO batches (id, project_id, dataset_id, models, judge_model, policy, max_rounds, repeats,"
        " control_arm, use_cache, status, created_at)"
        f" VALUES ('b1', 'default', 'd1', '[\"m\"]', 'j', 'default', 1, 1, false, true, 'running', '{NOW}')",
    ]
    for run, (status, owner, until) in RUNS.items():
        statements.append(
            "INSERT INTO runs (id, problem_id, status, model, judge_model, policy, max_rounds, arm,"
            " created_at, batch_id, lease_owner, lease_until) VALUES"
            f" ('{run}', 'p1', '{status}', 'm', 'j', 'default', 3, 'loop', '{NOW}', 'b1',"
            f" {_value(owner)}, {_value(until)})"
        )
    for item, (status, outcome, owner, until, run_id) in ITEMS.items():
        claimed_at = _value(NOW if status != "pending" else None)
        error = _value("boom" if status == "failed" else None)
        statements.append(
            "INSERT INTO batch_items (id, batch_id, problem_id, model, repeat, arm, status, outcome,"
            " attempts, claimed_by, claimed_at, lease_until, run_id, error, cache_hits, input_tokens,"
            " output_tokens, cost_usd, latency_s) VALUES"
            f" ({item}, 'b1', 'p1', 'm', {item}, 'loop', '{status}', {_value(outcome)}, 1, {_value(owner)},"
            f" {claimed_at}, {_value(until)}, {_value(run_id)}, {error},"
            f" {item}, {item * 100}, {item}, 0.5, 1.5)"
        )
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            for statement in statements:
                await connection.execute(text(statement))
    finally:
        await engine.dispose()


async def _read(database_url: str) -> tuple[set[str], dict[int, dict[str, Any]], dict[str, tuple[Any, ...]]]:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            columns = await connection.run_sync(
                lambda sync: {c["name"] for c in sa_inspect(sync).get_columns("batch_items")}
            )
            rows = (await connection.execute(text("SELECT * FROM batch_items ORDER BY id"))).mappings().all()
            runs = (await connection.execute(text("SELECT id, lease_owner, lease_until FROM runs"))).all()
    finally:
        await engine.dispose()
    items = {int(row["id"]): dict(row) for row in rows}
    leases = {r: (owner, str(until)[:19] if until is not None else None) for r, owner, until in runs}
    return columns, items, leases


async def test_0022_moves_item_claims_to_run_leases_and_statuses_to_the_run_vocabulary(
    database_url: str,
) -> None:
    config = alembic_config(database_url)
    await asyncio.to_thread(command.upgrade, config, "0021")
    await _seed(database_url)

    await asyncio.to_thread(command.upgrade, config, "0022_one_lease")
    columns, items, leases = await _read(database_url)
    assert not {"claimed_by", "lease_until", "outcome"} & columns and "claimed_at" in columns
    assert {i: row["status"] for i, row in items.items()} == {
        1: "queued",
        2: "running",
        3: "running",
        4: "accepted",
        5: "screened",
        6: "accepted",
        7: "error",
        8: "cancelled",
        9: "needs_review",
    }
    # The running items are held by their runs' leases: the one the run had, or the item's own.
    assert leases["r-held"] == ("w1:1", LATER) and leases["r-free"] == ("w2:2", LATER)
    assert leases["r-accepted"] == (None, None)
    # Everything else of every item is as it was.
    for i, row in items.items():
        assert (row["run_id"], row["attempts"], row["input_tokens"], row["latency_s"]) == (
            ITEMS[i][4],
            1,
            i * 100,
            1.5,
        )
        assert (row["claimed_at"] is None) == (i == 1) and row["cache_hits"] == i
    assert items[7]["error"] == "boom"

    await asyncio.to_thread(command.downgrade, config, "0021")
    columns, items, leases = await _read(database_url)
    assert {"claimed_by", "lease_until", "outcome"} <= columns
    back = {i: (row["status"], row["outcome"], row["claimed_by"]) for i, row in items.items()}
    assert back == {
        1: ("pending", None, None),
        2: ("running", None, "w1:1"),
        3: ("running", None, "w2:2"),
        4: ("done", "accepted", None),
        5: ("done", "screened", None),
        6: ("done", "accepted", None),  # its run's outcome, kept from now on
        7: ("failed", "error", None),
        8: ("cancelled", "cancelled", None),
        9: ("done", "needs_review", None),
    }
    assert str(items[3]["lease_until"])[:19] == LATER

    await asyncio.to_thread(command.upgrade, config, "head")
    columns, items, _ = await _read(database_url)
    assert "claimed_by" not in columns and items[2]["status"] == "running" and items[1]["status"] == "queued"
