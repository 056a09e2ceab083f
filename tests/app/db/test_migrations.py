"""The SQLModel tables and the Alembic migrations describe the same schema, on both databases."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect as sa_inspect
from sqlmodel import SQLModel

import app.models  # noqa: F401  (registers the tables)
from app.db import create_engine, migrate, migrations_at_head

# Each test migrates (or half-migrates) a database from zero itself.
pytestmark = [pytest.mark.both_databases, pytest.mark.empty_database]


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


async def test_projects_migration_keeps_what_exists_and_moves_metadata_to_submissions(
    database_url: str,
) -> None:
    """A database at 0007 with a key, a problem with metadata, a run of it and a dataset row: after
    0008 they are in the project 'default', and the metadata is the run's and the row's."""
    from alembic import command
    from sqlalchemy import text

    from app.db import alembic_config

    await asyncio.to_thread(command.upgrade, alembic_config(database_url), "0007")
    engine = create_engine(database_url)
    meta = '{"student": "Alice", "flaw": "unit_mismatch"}'
    try:
        async with engine.begin() as connection:
            now = "2026-11-01 10:00:00"
            await connection.execute(
                text(
                    "INSERT INTO api_keys (id, name, prefix, key_hash, scopes, created_at) "
                    "VALUES ('k1', 'old', 'tlk_old', 'h1', '[\"read\"]', :now)"
                ),
                {"now": now},
            )
            await connection.execute(
                text(
                    "INSERT INTO problems (id, content_hash, question, solution, meta, created_at) "
                    "VALUES ('p1', 'c1', 'q', 's', :meta, :now)"
                ),
                {"meta": meta, "now": now},
            )
            await connection.execute(
                text(
                    "INSERT INTO runs (id, problem_id, status, model, judge_model, policy, max_rounds, arm,"
                    " created_at) VALUES ('r1', 'p1', 'accepted', 'm', 'j', 'default', 3, 'loop', :now)"
                ),
                {"now": now},
            )
            await connection.execute(
                text(
                    "INSERT INTO datasets (id, name, format, n_problems, created_at) "
                    "VALUES ('d1', 'set', 'jsonl', 1, :now)"
                ),
                {"now": now},
            )
            await connection.execute(
                text("INSERT INTO dataset_items (dataset_id, problem_id, position) VALUES ('d1', 'p1', 0)")
            )
        await migrate(database_url)
        async with engine.connect() as connection:
            key = (await connection.execute(text("SELECT project_id FROM api_keys"))).scalar()
            run = (await connection.execute(text("SELECT project_id, meta FROM runs"))).one()
            dataset = (await connection.execute(text("SELECT project_id FROM datasets"))).scalar()
            row = (await connection.execute(text("SELECT meta FROM dataset_items"))).scalar()
            names = (await connection.execute(text("SELECT name FROM projects"))).scalars().all()
            columns = await connection.run_sync(
                lambda sync: [c["name"] for c in sa_inspect(sync).get_columns("problems")]
            )
    finally:
        await engine.dispose()
    assert key == dataset == run[0] == "default" and names == ["default"]
    as_dict = [json.loads(v) if isinstance(v, str) else v for v in (run[1], row)]
    assert as_dict == [json.loads(meta)] * 2
    assert "meta" not in columns


async def test_quality_migration_moves_stored_metrics_to_q_scale_and_back(database_url: str) -> None:
    """A run stored at 0010 with AvgQualityScore 84.5 (0-100) in its result and its run.finished
    event reads 0.845 after 0011, like Q in its rounds; 0011's downgrade restores 84.5."""
    from alembic import command
    from sqlalchemy import text

    from app.db import alembic_config

    config = alembic_config(database_url)
    await asyncio.to_thread(command.upgrade, config, "0010")
    engine = create_engine(database_url)
    metrics = {
        "avg_quality_final": 84.5,
        "avg_quality_all_steps": 70.25,
        "quality_change": -3.0,
        "passed": True,
    }
    finished = {"type": "run.finished", "final_quality": 0.845, "avg_quality_final": 84.5, "metrics": metrics}
    try:
        async with engine.begin() as connection:
            now = "2026-11-01 10:00:00"
            await connection.execute(
                text(
                    "INSERT INTO problems (id, content_hash, question, solution, created_at) "
                    "VALUES ('p1', 'c1', 'q', 's', :now)"
                ),
                {"now": now},
            )
            await connection.execute(
                text(
                    "INSERT INTO runs (id, problem_id, status, model, judge_model, policy, max_rounds, arm,"
                    " created_at, result)"
                    " VALUES ('r1', 'p1', 'accepted', 'm', 'j', 'default', 3, 'loop', :now, :result)"
                ),
                {"now": now, "result": json.dumps({"outcome": "accepted", "metrics": metrics})},
            )
            await connection.execute(
                text(
                    "INSERT INTO transcript_events (run_id, seq, type, data, created_at) "
                    "VALUES ('r1', 1, 'run.finished', :data, :now)"
                ),
                {"now": now, "data": json.dumps(finished)},
            )

        async def stored() -> tuple[dict[str, object], dict[str, object]]:
            async with engine.connect() as connection:
                result = (await connection.execute(text("SELECT result FROM runs"))).scalar()
                event = (await connection.execute(text("SELECT data FROM transcript_events"))).scalar()
            return tuple(json.loads(v) if isinstance(v, str) else v for v in (result, event))  # type: ignore[return-value]

        await migrate(database_url)
        result, event = await stored()
        assert result["metrics"] == {
            **metrics,
            "avg_quality_final": 0.845,
            "avg_quality_all_steps": 0.7025,
            "quality_change": -0.03,
        }
        assert event["avg_quality_final"] == 0.845 == event["final_quality"]
        assert event["metrics"] == result["metrics"]
        await asyncio.to_thread(command.downgrade, config, "0010")
        result, event = await stored()
        assert result["metrics"] == metrics and event == finished
    finally:
        await engine.dispose()


async def test_usage_ledger_migration_starts_from_the_stored_calls(database_url: str) -> None:
    """A run stored at 0013 with two judgements and a revision: after 0014 its project's ledger
    holds their tokens and cost on the day the run was created."""
    from alembic import command
    from sqlalchemy import text

    from app.db import alembic_config

    await asyncio.to_thread(command.upgrade, alembic_config(database_url), "0013")
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            now = "2026-11-01 10:00:00"
            await connection.execute(
                text(
                    "INSERT INTO problems (id, content_hash, question, solution, created_at) "
                    "VALUES ('p1', 'c1', 'q', 's', :now)"
                ),
                {"now": now},
            )
            await connection.execute(
                text(
                    "INSERT INTO runs (id, problem_id, status, model, judge_model, policy, max_rounds, arm,"
                    " created_at) VALUES ('r1', 'p1', 'accepted', 'm', 'j', 'default', 3, 'loop', :now)"
                ),
                {"now": now},
            )
            for judge, cost in (("remember", 0.5), ("apply", None)):
                await connection.execute(
                    text(
                        "INSERT INTO judgements (run_id, round, judge, model, prompt_version, input_tokens,"
                        " output_tokens, latency_s, cost_usd, reasoning, raw_outputs)"
                        " VALUES ('r1', 1, :judge, 'j', 'v', 100, 10, 0.1, :cost, '', '[]')"
                    ),
                    {"judge": judge, "cost": cost},
                )
            await connection.execute(
                text(
                    "INSERT INTO revisions (run_id, round, model, prompt_version, input_tokens,"
                    " output_tokens, latency_s, cost_usd, thinking, raw_outputs)"
                    " VALUES ('r1', 1, 'm', 'v', 7, 3, 0.1, 0.25, '', '[]')"
                )
            )
        await migrate(database_url)
        async with engine.connect() as connection:
            query = "SELECT project_id, day, input_tokens, output_tokens, cost_usd FROM daily_usage"
            rows = (await connection.execute(text(query))).all()
    finally:
        await engine.dispose()
    assert [(p, str(d), i, o, c) for p, d, i, o, c in rows] == [("default", "2026-11-01", 207, 23, 0.75)]


async def test_key_ledger_migration_charges_api_and_batch_runs_to_their_keys(database_url: str) -> None:
    """At 0014: a run of key k1, a batch item's run of a batch k2 created (the audit log says so)
    and a CLI run, each with one judgement. After 0015 the batch has its key, the key ledger holds
    k1's and k2's calls on their runs' day, and the CLI run is charged to no key."""
    from alembic import command
    from sqlalchemy import text

    from app.db import alembic_config

    await asyncio.to_thread(command.upgrade, alembic_config(database_url), "0014")
    engine = create_engine(database_url)
    now = {"now": "2026-11-02 09:00:00"}
    statements = [
        "INSERT INTO problems (id, content_hash, question, solution, created_at)"
        " VALUES ('p1', 'c1', 'q', 's', :now)",
        "INSERT INTO datasets (id, project_id, name, format, n_problems, created_at)"
        " VALUES ('d1', 'default', 'd', 'jsonl', 1, :now)",
        "INSERT INTO batches (id, project_id, dataset_id, models, judge_model, policy, max_rounds, repeats,"
        " control_arm, use_cache, status, created_at)"
        " VALUES ('b1', 'default', 'd1', '[\"m\"]', 'j', 'default', 1, 1, false, true, 'completed', :now)",
        "INSERT INTO audit_events (id, created_at, project_id, key_id, actor, action, target_type, target_id)"
        " VALUES ('a1', :now, 'default', 'k2', 'app', 'created', 'batch', 'b1')",
    ]
    runs = {"r1": ("'k1'", "NULL"), "r2": ("NULL", "'b1'"), "r3": ("NULL", "NULL")}
    for run, (key, batch) in runs.items():
        statements.append(
            "INSERT INTO runs (id, problem_id, status, model, judge_model, policy, max_rounds, arm,"
            " created_at, api_key_id, batch_id)"
            f" VALUES ('{run}', 'p1', 'accepted', 'm', 'j', 'default', 3, 'loop', :now, {key}, {batch})"
        )
        statements.append(
            "INSERT INTO judgements (run_id, round, judge, model, prompt_version, input_tokens,"
            " output_tokens, latency_s, cost_usd, reasoning, raw_outputs)"
            f" VALUES ('{run}', 1, 'apply', 'j', 'v', 100, 10, 0.1, 0.5, '', '[]')"
        )
    try:
        async with engine.begin() as connection:
            for statement in statements:
                await connection.execute(text(statement), now)
        await migrate(database_url)
        async with engine.connect() as connection:
            query = "SELECT api_key_id, day, input_tokens, output_tokens, cost_usd FROM key_daily_usage"
            rows = sorted((await connection.execute(text(query))).all())
            batch_key = (await connection.execute(text("SELECT api_key_id FROM batches"))).scalar()
            caps = (await connection.execute(text("SELECT daily_tokens, daily_cost_usd FROM projects"))).all()
    finally:
        await engine.dispose()
    assert batch_key == "k2"
    assert [(k, str(d), i, o, c) for k, d, i, o, c in rows] == [
        ("k1", "2026-11-02", 100, 10, 0.5),
        ("k2", "2026-11-02", 100, 10, 0.5),
    ]
    assert caps == [(None, None)]


async def test_verdict_text_migration_keeps_one_copy_where_the_row_holds_it(database_url: str) -> None:
    """At 0033 a verdict's text was in its event and its row. 0034 drops it from the event whose row
    holds the same text, and from no other: an earlier attempt's verdict (its text differs from the
    row's) and a verdict with no row keep theirs. Its downgrade puts the text back as it was."""
    from alembic import command
    from sqlalchemy import text

    from app.db import alembic_config

    config = alembic_config(database_url)
    await asyncio.to_thread(command.upgrade, config, "0033")
    engine = create_engine(database_url)
    usage = {"input_tokens": 100, "output_tokens": 10, "calls": 1}
    failure = {"kind": "endpoint", "model": "j", "host": None, "status": 503}
    failure |= {"exception": "E", "message": "m"}

    def verdict(judge: str, rationale: str | None, **more: object) -> dict[str, object]:
        return {
            "type": "judge.verdict",
            "round": 1,
            "judge": judge,
            "score": 80 if rationale else None,
            "confidence": 70 if rationale else None,
            "rationale": rationale,
            "own_answer": more.get("own_answer"),
            "abstained": rationale is None,
            "abstain_reason": more.get("abstain_reason"),
            "failure": more.get("failure"),
            "reasoning": more.get("reasoning", ""),
            "model": "j",
            "usage": usage,
        }

    events = {
        "apply": verdict("apply", "The totals add up.", own_answer="42", reasoning="3 + 39 = 42"),
        "evaluate": verdict("evaluate", None, abstain_reason="the endpoint failed", failure=failure),
        "analyze": verdict("analyze", "An earlier attempt's reading."),  # its row says otherwise
        "create": verdict("create", "No row was ever stored for this one."),
        # No answer of its own (the offline panel's): the event says "", the row keeps nothing.
        "remember": verdict("remember", "Every quantity is given.", own_answer=""),
        # Written before the event carried its failure and reasoning: kept as it is.
        "understand": {
            k: v for k, v in verdict("understand", "Clear.").items() if k not in {"failure", "reasoning"}
        },
    }
    rows = [
        ("apply", "The totals add up.", json.dumps({"own_answer": "42"}), None, None, "3 + 39 = 42"),
        ("evaluate", None, None, "the endpoint failed", json.dumps(failure), ""),
        ("analyze", "The reading that counted.", None, None, None, ""),
        ("remember", "Every quantity is given.", None, None, None, ""),
        ("understand", "Clear.", None, None, None, ""),
    ]
    try:
        async with engine.begin() as connection:
            now = "2026-11-01 10:00:00"
            await connection.execute(
                text(
                    "INSERT INTO problems (id, content_hash, question, solution, created_at) "
                    "VALUES ('p1', 'c1', 'q', 's', :now)"
                ),
                {"now": now},
            )
            await connection.execute(
                text(
                    "INSERT INTO runs (id, problem_id, status, model, judge_model, policy, max_rounds, arm,"
                    " created_at) VALUES ('r1', 'p1', 'accepted', 'm', 'j', 'default', 3, 'loop', :now)"
                ),
                {"now": now},
            )
            for judge, rationale, details, reason, failed, reasoning in rows:
                await connection.execute(
                    text(
                        "INSERT INTO judgements (run_id, round, judge, rationale, details, abstain_reason,"
                        " failure, model, prompt_version, input_tokens, output_tokens, latency_s, reasoning,"
                        " raw_outputs) VALUES ('r1', 1, :judge, :rationale, :details, :reason, :failure, 'j',"
                        " 'v', 100, 10, 0.1, :reasoning, '[]')"
                    ),
                    {
                        "judge": judge,
                        "rationale": rationale,
                        "details": details,
                        "reason": reason,
                        "failure": failed,
                        "reasoning": reasoning,
                    },
                )
            for seq, data in enumerate(events.values(), 1):
                await connection.execute(
                    text(
                        "INSERT INTO transcript_events (run_id, seq, type, data, created_at) "
                        "VALUES ('r1', :seq, 'judge.verdict', :data, :now)"
                    ),
                    {"seq": seq, "data": json.dumps(data), "now": now},
                )

        async def stored() -> dict[str, dict[str, object]]:
            async with engine.connect() as connection:
                datas = (await connection.execute(text("SELECT data FROM transcript_events"))).scalars()
                loaded = [json.loads(v) if isinstance(v, str) else v for v in datas]
            return {str(data["judge"]): data for data in loaded}

        await migrate(database_url)
        upgraded = await stored()
        text_keys = {"rationale", "own_answer", "abstain_reason", "failure", "reasoning"}
        for judge in ("apply", "evaluate", "remember"):
            assert upgraded[judge] == {k: v for k, v in events[judge].items() if k not in text_keys}
        for judge in ("analyze", "create", "understand"):
            assert upgraded[judge] == events[judge]
        await asyncio.to_thread(command.downgrade, config, "0033")
        downgraded = await stored()
        assert downgraded == events
        assert {j: list(d) for j, d in downgraded.items()} == {
            j: list(d) for j, d in events.items()
        }  # key order
    finally:
        await engine.dispose()
