"""One record: a round's verdicts are stored as rows and transcript events only, a batch item's
result is a query over its run's rows, and migration 0020 moves what the old JSON held."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import DateTime, MetaData, Table, event, inspect, select, text
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import col

from app.batches import repository as batches_repo
from app.datasets import repository as datasets_repo
from app.db import create_engine, migrate, session_factory, short_session
from app.models import Batch, JudgementRow, RevisionRow, RoundRow, Run
from app.reporting.batch import DEFINITIONS, build_report
from app.reporting.data import load_entries
from app.reporting.item_result import item_results
from app.reporting.item_rows import item_rows
from tests.helpers.batches import settle, start
from tests.helpers.paths import APP_DATA
from tests.helpers.service import Service

pytestmark = pytest.mark.both_databases

# A batch made by the code at migration 0018 (`thinkloop batch run` of three problems of the sample
# set, loop and control, call counts, cache hits and one warrant set), with the report and the item
# rows that code printed for it.
OLD = APP_DATA / "db_0018_batch.json"


async def _tables(connection: AsyncConnection) -> dict[str, Table]:
    meta = MetaData()
    await connection.run_sync(lambda sync: meta.reflect(sync))
    return dict(meta.tables)


def _cells(value: Any) -> str:
    """A stored value as text to search: JSON as its dump, bytes (checkpoint blobs) as UTF-8."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


async def _checkpoint_rows(connection: AsyncConnection) -> int:
    """Rows in the checkpointer's tables (SQLite's saver names them apart from PostgreSQL's)."""
    tables = await _tables(connection)
    names = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "writes")
    states = [tables[n] for n in names if n in tables]
    assert states, "the checkpointer's tables are not in this database"
    return sum([len((await connection.execute(select(t))).all()) for t in states])


async def _no_states(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        for _ in range(200):  # a hang guard, not a timing check
            async with engine.connect() as connection:
                if not await _checkpoint_rows(connection):
                    return
            await asyncio.sleep(0.05)
    finally:
        await engine.dispose()
    raise AssertionError("the ended runs' checkpoints are still there")


async def test_a_verdicts_text_is_stored_once_in_its_row(service: Service, database_url: str) -> None:
    """After a batch ran (no response cache: it keeps the endpoint's replies, by design), a
    verdict's rationale is in its judgements row and in no other table: not in the transcript
    (whose ``judge.verdict`` events keep the headline), ``runs.result``, the batch items, or the
    checkpointer's tables."""
    batch = await start(service, use_cache=False, control_arm=True)
    await settle(service, batch["id"])
    await _no_states(database_url)  # each run deletes its states just after its end commits
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            query = select(col(JudgementRow.rationale)).where(
                col(JudgementRow.round) == 1, col(JudgementRow.rationale).is_not(None)
            )
            rationales = [r for (r,) in (await connection.execute(query)).all() if r]
            assert rationales, "no verdict with a rationale was stored"
            # searchable as it is in JSON text and msgpack alike
            needle = max(rationales, key=len)[:80]
            assert len(needle) >= 20 and '"' not in needle and "\\" not in needle, needle
            found: dict[str, int] = {}
            tables = await _tables(connection)
            for name, table in tables.items():
                rows = (await connection.execute(select(table))).all()
                hits = sum(1 for row in rows if any(needle in _cells(v) for v in row if v is not None))
                if hits:
                    found[name] = hits
            checkpoint_rows = await _checkpoint_rows(connection)
    finally:
        await engine.dispose()
    assert found == {"judgements": found.get("judgements", 0)} and found["judgements"] >= 1, found
    assert checkpoint_rows == 0  # every run ended: their states went with their ends


async def test_a_batchs_results_are_read_in_three_queries_whatever_its_size(
    service: Service, database_url: str
) -> None:
    """Every finished item's result comes from three set-based queries (runs, rounds, verdicts),
    never one per item; the items list and the export read them the same way."""
    batch = await start(service, use_cache=False, control_arm=True)
    await settle(service, batch["id"])
    engine = create_engine(database_url)
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    try:
        async with short_session(session_factory(engine)) as session:
            items = await batches_repo.items(session, batch["id"])
            event.listen(engine.sync_engine, "before_cursor_execute", seen)
            results = await item_results(session, items)
            event.remove(engine.sync_engine, "before_cursor_execute", seen)
    finally:
        await engine.dispose()
    assert len(items) == 24 and len(results) == 24
    assert all(r.rounds and r.metrics is not None for r in results.values())
    assert len(statements) == 3, statements


def _values(table: Table, row: dict[str, Any]) -> dict[str, Any]:
    """A dumped row as the table takes it: timestamps as aware datetimes, no surrogate ids of rows
    the migration may add to (their sequences would lag behind)."""
    out = {}
    for name, value in row.items():
        if name not in table.c:
            continue
        if name == "id" and table.name in ("rounds", "judgements", "revisions", "dataset_items"):
            continue
        if isinstance(value, str) and isinstance(table.c[name].type, DateTime):
            moment = datetime.fromisoformat(value)
            value = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        out[name] = value
    return out


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


@pytest.mark.empty_database
async def test_the_migration_keeps_every_report_of_a_batch_made_at_0018(database_url: str) -> None:
    """A batch stored by the code at 0018, with one round, its seven verdicts and one revision
    missing from the rows (held only in ``runs.result``): after 0020 its report and its item rows
    are what that code printed, the missing rows are rows, ``runs.result`` holds only the run's
    facts and ``batch_items.result`` is gone; a downgrade gives every item its summary back."""
    from alembic import command

    from app.db import alembic_config

    old = json.loads(OLD.read_text())
    dumped: dict[str, list[dict[str, Any]]] = old["tables"]
    loop_run = next(r for r in dumped["runs"] if r["arm"] == "loop")["id"]
    # The stream of this run "missed" its second round and its revision: only the JSON holds them.
    dropped = {
        "rounds": [r for r in dumped["rounds"] if (r["run_id"], r["round"]) == (loop_run, 2)],
        "judgements": [r for r in dumped["judgements"] if (r["run_id"], r["round"]) == (loop_run, 2)],
        "revisions": [r for r in dumped["revisions"] if (r["run_id"], r["round"]) == (loop_run, 1)],
    }
    assert [len(v) for v in dropped.values()] == [1, 7, 1]
    await asyncio.to_thread(command.upgrade, alembic_config(database_url), "0018")
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            tables = await _tables(connection)
            order = ["problems", "datasets", "dataset_items", "batches", "runs", "batch_items"]
            for name in [*order, "rounds", "judgements", "revisions"]:
                rows = [r for r in dumped[name] if r not in dropped.get(name, [])]
                await connection.execute(tables[name].insert(), [_values(tables[name], r) for r in rows])
            if connection.dialect.name == "postgresql":
                await connection.execute(
                    text("SELECT setval(pg_get_serial_sequence('batch_items', 'id'), 100)")
                )
        await migrate(database_url)

        sessions = session_factory(engine)
        async with short_session(sessions) as session:
            batch = (await session.execute(select(Batch))).scalars().one()
            items = await batches_repo.items(session, batch.id)
            flaws = await datasets_repo.flaw_labels(session, batch.dataset_id)
            report = build_report(batch, await load_entries(session, items), flaws)
            external = await batches_repo.external_ids(session, batch.dataset_id)
            rows = item_rows(items, await item_results(session, items), external, flaws)
            restored = (
                (await session.execute(select(RoundRow).where(col(RoundRow.run_id) == loop_run)))
                .scalars()
                .all()
            )
            verdicts = (
                (
                    await session.execute(
                        select(JudgementRow).where(
                            col(JudgementRow.run_id) == loop_run, col(JudgementRow.round) == 2
                        )
                    )
                )
                .scalars()
                .all()
            )
            revisions = (
                (await session.execute(select(RevisionRow).where(col(RevisionRow.run_id) == loop_run)))
                .scalars()
                .all()
            )
            results = [run.result for run in (await session.execute(select(Run))).scalars().all()]
            hits = sorted(item.cache_hits for item in items)
        async with engine.connect() as connection:
            columns = await connection.run_sync(lambda sync: inspect(sync).get_columns("batch_items"))
    finally:
        await engine.dispose()
    report["manifest"].pop("written_by")
    assert report.pop("teachers") is None  # added since (#50): no run of 0018 was reviewed
    # added since (#55): most passes of 0018 carry no warrant (screened), so nothing is corrected
    correction = report.pop("correction")
    assert correction["status"] == "uncorrected" and "carry no warrant" in correction["reason"], correction
    assert [c.pop("corrected") for c in report["comparisons"]] == [None] * len(report["comparisons"])
    for row in report["rows"]:  # added after 0018 (migration 0023): nothing stored before read a cache
        assert row.pop("cached_input_tokens") == 0, row
        # added since (#52): the dataset of 0018 carries no answer keys, so the rows have no repair figures
        assert row.pop("repair") is None, row
        # added since (#53): a run of 0018 predates the check that a revision revises
        assert row.pop("not_revised") == 0, row
        # added since (#49): a warrant of 0018 names no sound-passed bound, no sound n and no set hash
        for cited in row["warrants"]["cited"]:
            assert cited.pop("source") is None  # added since (#50): a warrant of 0018 names no source
            assert (cited.pop("sound_passed_lower"), cited.pop("n_sound"), cited.pop("set_hash")) == (
                None,
                0,
                None,
            )
    # Added since: the definitions of the two per-level figures, and why a κ is undefined (an
    # undefined Cohen's κ was 0, or 1 on the diagonal, or already null, before it was always null).
    assert report.pop("definitions") == DEFINITIONS
    for arm, agreement in report["agreement"].items():
        agreement.pop("fleiss_kappa_undefined")
        printed = old["report"]["agreement"][arm]["cohen_kappa"]
        for judge, others in agreement.pop("cohen_kappa_undefined").items():
            for other in others:
                assert agreement["cohen_kappa"][judge][other] is None
                was = printed[judge][other]
                assert was is None or abs(was - (1.0 if judge == other else 0.0)) < 1e-9, was
                agreement["cohen_kappa"][judge][other] = printed[judge][other]
    assert _plain(report) == old["report"]
    # Migration 0022 (one lease) says an item's status in its run's words: the rows' only change.
    shared = {"pending": "queued", "failed": "error"}
    # (#49) the export's sound-passed cells: empty for a warrant of 0018, which names no such bound
    sound = {"warrant_sound_passed_lower": None, "warrant_n_sound": None}
    expected = [
        r
        | {"status": r["outcome"] if r["status"] == "done" else shared.get(r["status"], r["status"])}
        | sound
        for r in old["item_rows"]
    ]
    assert _plain(rows) == expected
    assert [r.round for r in restored] == [1, 2] and len(verdicts) == 7 and len(revisions) == 1
    (gone,) = dropped["judgements"][:1]
    holistic = next(v for v in verdicts if v.judge == gone["judge"])
    assert (holistic.score, holistic.rationale, holistic.raw_outputs) == (
        gone["score"],
        gone["rationale"],
        gone["raw_outputs"],
    )
    assert all(r is not None and set(r) == {"metrics", "warrant", "llm_calls", "retries"} for r in results)
    assert "result" not in {c["name"] for c in columns} and hits == [0, 1, 2, 3, 4, 5]

    await asyncio.to_thread(command.downgrade, alembic_config(database_url), "0018")
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            tables = await _tables(connection)
            summaries = dict(
                (
                    await connection.execute(
                        select(tables["batch_items"].c.id, tables["batch_items"].c.result)
                    )
                ).all()
            )
    finally:
        await engine.dispose()
    assert {i: _plain(s) for i, s in summaries.items()} == {
        r["id"]: r["result"] for r in dumped["batch_items"]
    }


@pytest.mark.empty_database
async def test_the_migration_refuses_to_drop_an_item_result_no_run_holds(database_url: str) -> None:
    """An item finished before 0007 (a result, no run): no row can hold its rounds, so 0020 stops
    and says what to do, and the database stays at 0018 with the result in place."""
    from alembic import command

    from app.db import alembic_config

    dumped = json.loads(OLD.read_text())["tables"]
    await asyncio.to_thread(command.upgrade, alembic_config(database_url), "0018")
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            tables = await _tables(connection)
            for name in ("problems", "datasets", "dataset_items", "batches"):
                await connection.execute(
                    tables[name].insert(), [_values(tables[name], r) for r in dumped[name]]
                )
            legacy = dumped["batch_items"][0] | {"run_id": None}
            await connection.execute(tables["batch_items"].insert(), [_values(tables["batch_items"], legacy)])
        with pytest.raises(RuntimeError, match="before migration 0007"):
            await migrate(database_url)
        async with engine.connect() as connection:
            kept = (await connection.execute(text("SELECT result FROM batch_items"))).scalar_one()
            version = (await connection.execute(text("SELECT version_num FROM alembic_version"))).scalar_one()
    finally:
        await engine.dispose()
    assert kept is not None and version == "0018"
