"""One driver of the refinement graph: the README's main job, `judges validate` and the control arm
each go through ``RunExecutor`` (a run row under a lease, its rounds recorded, ended by its owner)."""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select
from typer.testing import CliRunner

from agents.llm.models import ModelRegistry, ModelSpec
from agents.panel import PanelFactory
from agents.simulator.server import SimulatorServer
from app.access.usage import spent_on
from app.cli import cli
from app.db import create_engine, migrate, migrations_at_head, session_factory, short_session
from app.models import DEFAULT_PROJECT, JudgementRow, Run, TranscriptEvent, utcnow
from app.runs import recorder, temporary
from app.runs import repository as repo
from app.runs.executor import RunExecutor, open_executor
from app.runs.temporary import temporary_runs
from app.settings import Settings
from graphs.context import RunContext
from graphs.events import JudgeVerdict
from graphs.scoring import get_policy
from tests.helpers import driving
from tests.helpers.problems import ORCHESTRA

runner = CliRunner()


@pytest.fixture
def executed(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """What the executor recorded: each round stored and each run ended, with the process that
    ended it (the lease's owner) and the executor that drove it."""
    seen: dict[str, list[Any]] = {"rounds": [], "ended": [], "executors": []}
    record_rounds, finish_run, drive = repo.record_rounds, repo.finish_run, RunExecutor._drive

    async def recording_rounds(session: Any, run_id: str, *args: Any, **kwargs: Any) -> list[int]:
        stored = await record_rounds(session, run_id, *args, **kwargs)
        seen["rounds"] += [(run_id, number) for number in stored]
        return stored

    async def recording_end(session: Any, run_id: str, status: str, *args: Any, **kwargs: Any) -> bool:
        seen["ended"].append((run_id, status, kwargs.get("owner")))
        return await finish_run(session, run_id, status, *args, **kwargs)

    async def driving(self: RunExecutor, attempt: Any, *args: Any, **kwargs: Any) -> Any:
        seen["executors"].append(self.worker)
        return await drive(self, attempt, *args, **kwargs)

    monkeypatch.setattr(repo, "record_rounds", recording_rounds)
    monkeypatch.setattr(repo, "finish_run", recording_end)
    monkeypatch.setattr(RunExecutor, "_drive", driving)
    return seen


def test_the_main_job_runs_through_the_executor(executed: dict[str, list[Any]]) -> None:
    """`thinkloop refine` (the README's main job and CI's smoke step) is a run of the executor: its two
    rounds are recorded, and the process holding its lease ends it. It still needs no database."""
    result = runner.invoke(cli, ["refine", "--example", "orchestra"])
    assert result.exit_code == 0, result.output
    assert "outcome screened" in result.output and "Round 2 verdicts" in result.output  # the live trace
    [(run_id, status, owner)] = executed["ended"]
    assert status == "screened" and owner == executed["executors"][0]
    assert executed["rounds"] == [(run_id, 1), (run_id, 2)]  # each stored once (checked again at its end)


def test_judges_validate_runs_each_version_through_the_executor(
    tmp_path: Path, executed: dict[str, list[Any]]
) -> None:
    sound = {
        "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
        "solution": "3 × 4 = 12, so Tom has 12 apples.",
    }
    flawed = {**sound, "solution": "3 × 4 = 13, so Tom has 13 apples."}
    items = [
        {"id": "c", "split": "tune", "kind": "control", **sound},
        {
            "id": "f",
            "split": "tune",
            "kind": "flawed",
            **flawed,
            "flaws": [{"type": "arithmetic_worded", "levels": ["apply"], "evidence": "3 × 4 is 12"}],
            "corrected": sound,
        },
    ]
    dataset = tmp_path / "set.jsonl"
    dataset.write_text("".join(json.dumps(item) + "\n" for item in items))
    result = runner.invoke(cli, ["judges", "validate", "--dataset", str(dataset), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["versions"] == 3
    ended = executed["ended"]
    assert len(ended) == 3 and len({run_id for run_id, *_ in ended}) == 3  # a run per version
    assert {owner for *_, owner in ended} == set(executed["executors"])
    assert {number for _, number in executed["rounds"]} == {1}  # each judged once
    assert {run_id for run_id, _ in executed["rounds"]} == {run_id for run_id, *_ in ended}


async def test_the_control_arm_is_a_checkpointed_run_of_the_graph(database_url: str) -> None:
    """A control run (a batch's zero-shot arm) is driven over the loop's graph: its blind revision
    and its one judged round are checkpointed and recorded like any round."""
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    settings = Settings(_env_file=None, database_url=database_url)
    factory = PanelFactory(ModelRegistry({}), {})
    try:
        async with open_executor(settings, sessions, factory) as executor:
            async with short_session(sessions) as session:
                problem = await repo.get_or_create_problem(session, ORCHESTRA.question, ORCHESTRA.solution)
                run = Run(
                    problem_id=problem.id,
                    status="queued",
                    model="rubric",
                    judge_model="rubric",
                    policy="default",
                    max_rounds=3,
                    arm="control",
                    lease_owner=executor.worker,
                    lease_until=executor.lease_deadline(),
                )
                session.add(run)
            kept: list[str] = []

            async def keep(run_id: str) -> None:  # an ended run's checkpoints go; keep them to read
                kept.append(run_id)

            executor._drop_state = keep  # type: ignore[method-assign]
            result = await executor.execute_here(run.id)
            assert kept == [run.id]
            assert result is not None and result.outcome == "exhausted" and len(result.rounds) == 1
            assert [r.round for r in result.revisions] == [0]  # the blind revision, then one round
            state = (await executor.graph.aget_state({"configurable": {"thread_id": run.id}})).values
            assert state["arm"] == "control" and state["decision"] == "exhausted"
            async with short_session(sessions) as session:
                verdicts = (
                    await session.execute(select(JudgementRow).where(col(JudgementRow.run_id) == run.id))
                ).all()
                types = (
                    await session.execute(
                        select(col(TranscriptEvent.type))
                        .where(col(TranscriptEvent.run_id) == run.id)
                        .order_by(col(TranscriptEvent.seq))
                    )
                ).scalars()
                stored = await session.get(Run, run.id)
            assert len(verdicts) == 7
            assert [t for t in types if t != "reviser.thinking"][:3] == [
                "run.started",
                "revision.proposed",
                "round.started",
            ]
            assert stored is not None and stored.status == "exhausted" and stored.lease_until is None
    finally:
        await engine.dispose()


def counted(
    open_session: Callable[[Any], AbstractAsyncContextManager[AsyncSession]], name: str, opened: list[str]
) -> Callable[[Any], AbstractAsyncContextManager[AsyncSession]]:
    """``short_session`` as a module uses it, noting each transaction it opens by the module's name."""

    @asynccontextmanager
    async def counting(sessions: Any) -> AsyncIterator[AsyncSession]:
        opened.append(name)
        async with open_session(sessions) as session:
            yield session

    return counting


async def test_a_temporary_stores_run_is_stored_once_at_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nobody reads a temporary store while its run runs (its caller follows the events live), so the
    run takes two transactions: its row, created running, and at its end everything it recorded
    with its end state (not one per event, nor a lookup of what its creation just stored). Its graph
    keeps no checkpoints (nothing can resume the run of a store that is gone). Everything a run
    records is there once it has ended."""
    transactions: list[str] = []
    for module in (temporary, sys.modules[RunExecutor.__module__], recorder):
        counting = counted(module.short_session, module.__name__, transactions)
        monkeypatch.setattr(module, "short_session", counting)
    factory = PanelFactory(ModelRegistry({}), {})
    context = RunContext.of(factory.build("rubric", "rubric"), get_policy("default"))
    seen: list[Any] = []
    async with temporary_runs(driving.settings()) as store:
        assert store.executor.graph.checkpointer is None
        result = await store.run(
            ORCHESTRA, context, model="rubric", judge_model="rubric", on_event=seen.append
        )
        async with short_session(store.sessions) as session:
            verdicts = (await session.execute(select(JudgementRow))).scalars().all()
            stored = (
                await session.execute(select(col(TranscriptEvent.type)).order_by(col(TranscriptEvent.seq)))
            ).scalars()
            types = [kind for kind in stored if kind != "reviser.thinking"]
    rounds = len(result.rounds)
    assert result.outcome == "screened" and rounds == 2
    assert transactions == ["app.runs.temporary", "app.runs.recorder"]  # its creation, then its end
    assert sorted((v.round, v.judge) for v in verdicts) == sorted(
        (o.round, o.judge) for r in result.rounds for o in r.outcomes
    )
    assert types[0] == "run.started" and types[-1] == "run.finished"
    assert types.count("judge.verdict") == 7 * rounds and types.count("round.scored") == rounds
    shown = [event.type for event in seen if event.type not in ("reviser.thinking", "run.finished")]
    assert types[1:-1] == shown  # stored in the order the caller saw them live


async def test_a_temporary_stores_run_whose_end_fails_keeps_what_it_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run whose writes wait for its end, and whose end transaction fails, still stores its rounds,
    verdicts and transcript (with the run's failure after them) and ends in error with the cause."""
    finish_run = repo.finish_run

    async def refusing(session: Any, run_id: str, status: str, *args: Any, **kwargs: Any) -> bool:
        if status != "error":
            raise RuntimeError("the end's transaction failed")
        return await finish_run(session, run_id, status, *args, **kwargs)

    monkeypatch.setattr(repo, "finish_run", refusing)
    factory = PanelFactory(ModelRegistry({}), {})
    context = RunContext.of(factory.build("rubric", "rubric"), get_policy("default"))
    async with temporary_runs(driving.settings()) as store:
        with pytest.raises(RuntimeError, match="end's transaction"):
            await store.run(ORCHESTRA, context, model="rubric", judge_model="rubric")
        async with short_session(store.sessions) as session:
            run = (await session.execute(select(Run))).scalars().one()
            verdicts = (await session.execute(select(JudgementRow))).scalars().all()
            by_seq = select(col(TranscriptEvent.type)).order_by(col(TranscriptEvent.seq))
            types = [kind for kind in (await session.execute(by_seq)).scalars() if kind != "reviser.thinking"]
    assert run.status == "error" and "the end's transaction failed" in (run.stop_reason or "")
    # an error run always names its failure: here one outside any model call (issue 53)
    assert run.failure is not None and (run.failure["kind"], run.failure["exception"]) == (
        "internal",
        "RuntimeError",
    )
    assert len(verdicts) == 14  # both rounds' seven judgements
    assert types[0] == "run.started" and types[-1] == "run.failed" and "run.finished" not in types
    assert types.count("judge.verdict") == 14 and types.count("round.scored") == 2


async def test_a_temporary_stores_run_ends_without_looking_anything_up(
    sim: Callable[..., SimulatorServer], spec: Callable[..., ModelSpec]
) -> None:
    """A temporary store's run stores its end without a query: nothing of its rounds and revisions
    can be stored before its end (they are stored with their events, which wait for it), its owner
    is on its row, and no webhook can be registered with the store. Its calls are still charged to
    its project's ledger, to the token."""
    sim(rules=[{"role": "^Judge|Five Keys", "score": 40}])  # below the bar: every round, and revisions
    factory = PanelFactory(ModelRegistry({"sim": spec()}), {})
    context = RunContext.of(factory.build("sim", "sim"), get_policy("default"))
    statements: list[str] = []

    def executed(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(" ".join(statement.split()[:3]).upper())

    async with factory, temporary_runs(driving.settings(), factory) as store:
        engine = store.sessions.kw["bind"].sync_engine
        event.listen(engine, "before_cursor_execute", executed)
        result = await store.run(ORCHESTRA, context, model="sim", judge_model="sim")
        event.remove(engine, "before_cursor_execute", executed)
        async with short_session(store.sessions) as session:
            tokens, _ = await spent_on(session, DEFAULT_PROJECT, utcnow().date())
    assert result.outcome == "exhausted" and len(result.rounds) == 3 and len(result.revisions) == 2
    end = statements[statements.index("INSERT INTO RUNS") + 1 :]  # after the run's creation
    assert end and not [done for done in end if done.startswith("SELECT")], statements
    assert tokens == result.usage.input_tokens + result.usage.output_tokens > 0


@pytest.mark.parametrize("judge", ["sim", "rubric"])
async def test_a_temporary_stores_verdict_text_is_stored_once_and_read_back_whole(
    sim: Callable[..., SimulatorServer], spec: Callable[..., ModelSpec], judge: str
) -> None:
    """A temporary store stores everything at the run's end: each ``judge.verdict`` event goes in as
    its headline, its text in its judgement row alone, and a reader gets the event back exactly as
    it was emitted, key order included (the offline panel's verdicts carry no answer of their own:
    ``own_answer`` is ``""``, which the row does not keep)."""
    sim(rules=[{"role": "^Judge|Five Keys", "score": 40}])
    factory = PanelFactory(ModelRegistry({"sim": spec()}), {})
    context = RunContext.of(factory.build(judge, "sim"), get_policy("default"))
    async with factory, temporary_runs(driving.settings(), factory) as store:
        result = await store.run(ORCHESTRA, context, model="sim", judge_model=judge)
        async with short_session(store.sessions) as session:
            query = select(TranscriptEvent).where(col(TranscriptEvent.type) == "judge.verdict")
            rows = (await session.execute(query.order_by(col(TranscriptEvent.seq)))).scalars().all()
            whole = await repo.with_verdict_text(session, rows[0].run_id, rows)
            rationales = (await session.execute(select(col(JudgementRow.rationale)))).scalars().all()
    emitted = {
        (o.round, o.judge): list(JudgeVerdict.of(o).model_dump(mode="json").items())
        for r in result.rounds
        for o in r.outcomes
    }
    assert len(rows) == len(emitted) == len(rationales) >= 7 and all(rationales)
    assert all(set(r.data).isdisjoint(JudgeVerdict.TEXT) for r in rows)
    assert {(d["round"], d["judge"]): list(d.items()) for d in whole} == emitted
    if judge == "rubric":
        assert {dict(items)["own_answer"] for items in emitted.values()} == {""}


async def test_a_machine_migrates_one_template_and_each_temporary_store_is_a_fresh_copy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Migrating a store costs about 0.4 CPU s and loads Alembic: a machine migrates once, into a
    template kept between processes, and each temporary store (one per `thinkloop refine`, one per
    `POST /v1/judges/validate`) starts as a copy of it, at head and empty, whatever the stores
    before it stored."""
    migrations: list[str] = []

    async def counted_migrate(url: str) -> None:
        migrations.append(url)
        await migrate(url)

    monkeypatch.setattr(temporary, "_template", None)  # as in a new process
    monkeypatch.setattr(temporary, "template_folder", lambda: tmp_path)
    monkeypatch.setattr(temporary, "migrate", counted_migrate)
    factory = PanelFactory(ModelRegistry({}), {})
    context = RunContext.of(factory.build("rubric", "rubric"), get_policy("default"))
    counts = []
    for _ in range(2):
        async with temporary_runs(driving.settings()) as store:
            engine = store.sessions.kw["bind"]
            assert await migrations_at_head(engine)
            async with short_session(store.sessions) as session:
                before = len((await session.execute(select(Run))).scalars().all())
            await store.run(ORCHESTRA, context, model="rubric", judge_model="rubric")
            async with short_session(store.sessions) as session:
                counts.append((before, len((await session.execute(select(Run))).scalars().all())))
    assert len(migrations) == 1 and counts == [(0, 1), (0, 1)]
    kept = tmp_path / temporary.template_name()
    assert temporary._template == kept and os.listdir(tmp_path) == [kept.name]
    monkeypatch.setattr(temporary, "_template", None)  # the next process finds it kept
    async with temporary_runs(driving.settings()) as store:
        assert await migrations_at_head(store.sessions.kw["bind"])
    assert len(migrations) == 1
    kept.unlink()  # a cache (or a long-lived server's /tmp) cleaned: the next store makes it anew
    async with temporary_runs(driving.settings()) as store:
        assert await migrations_at_head(store.sessions.kw["bind"])
    assert len(migrations) == 2 and kept.exists()


async def test_without_a_writable_cache_a_process_migrates_its_own_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    migrations: list[str] = []

    async def counted_migrate(url: str) -> None:
        migrations.append(url)
        await migrate(url)

    monkeypatch.setattr(temporary, "_template", None)
    monkeypatch.setattr(temporary, "template_folder", lambda: None)
    monkeypatch.setattr(temporary, "migrate", counted_migrate)
    for _ in range(2):
        async with temporary_runs(driving.settings()) as store:
            assert await migrations_at_head(store.sessions.kw["bind"])
    assert len(migrations) == 1


def test_a_template_is_named_by_the_migrations_that_made_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert temporary.template_folder() == tmp_path / "thinkloop"
    name = temporary.template_name()
    assert name.startswith("store-") and name.endswith(".db") and len(name) == len("store-") + 16 + 3


async def test_an_executor_freezes_the_heap_it_starts_with() -> None:
    """The start-up heap (modules, the model client stack) lives as long as the process: once an
    executor starts, the garbage collector no longer scans it (``app.heap``)."""
    async with temporary_runs(driving.settings()):
        assert gc.get_freeze_count() > 0
