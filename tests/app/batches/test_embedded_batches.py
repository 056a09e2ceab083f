"""Batches on the embedded broker: every item done exactly once, control arm, budget, lifecycle."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlmodel import col

from agents.llm.models import ModelRegistry
from agents.panel import PanelFactory
from agents.simulator import SimulatorServer
from app.batches.broker import build_broker
from app.batches.service import BatchService, BatchSpec, BatchStateError
from app.cli.batch_views import status_text
from app.datasets.parsing import parse_dataset
from app.datasets.repository import store_dataset
from app.db import create_engine, migrate, session_factory, short_session
from app.models import Batch, BatchItem, CachedResponse
from app.settings import Settings
from tests.helpers.batches import VERDICTS, batch_runner, verdicts
from tests.helpers.paths import SAMPLES

pytestmark = pytest.mark.both_databases

SAMPLE = SAMPLES / "datasets" / "flawed-problems.jsonl"


def stored_ids(ids: Iterable[int | None]) -> list[int]:
    """The ids of stored batch items, in order: a stored row always has one."""
    listed = list(ids)
    assert None not in listed, listed
    return [i for i in listed if i is not None]


@dataclass
class Harness:
    service: BatchService
    dataset_id: str
    sessions: object

    async def wait(self, batch_id: str, seconds: float = 60) -> dict[str, Any]:
        for _ in range(int(seconds * 20)):
            progress = await self.service.progress(batch_id)
            items = progress["items"]
            assert isinstance(items, dict)
            if progress["status"] not in ("queued", "running") and not items.get("running"):
                return progress  # ended, and items already in flight have finished too
            await asyncio.sleep(0.05)
        raise AssertionError(f"batch did not finish: {progress}")


@pytest.fixture
async def harness(database_url: str, simulator_server: SimulatorServer) -> AsyncIterator[Harness]:
    simulator_server.state.configure(
        simulator_server.state.config.model_copy(update={"rules": [], "latency_s": 0.0})
    )
    await migrate(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    registry = ModelRegistry.from_sources(
        extra={
            name: {"model": name, "base_url": simulator_server.base_url, "max_retries": 0}
            for name in ("m1", "m2")
        }
        # an endpoint that answers every call with 404: its items fail (an unknown model stays pending)
        | {"broken": {"model": "b", "base_url": f"{simulator_server.base_url}/missing", "max_retries": 0}}
    )
    factory = PanelFactory(registry, {})
    broker = build_broker(None, held=8, redelivery_s=30)
    async with batch_runner(sessions, factory, database_url, lease_s=60, concurrency=4) as runner:
        broker.state.runner = runner
        await broker.startup()
        async with short_session(sessions) as session:
            dataset = await store_dataset(session, "sample", parse_dataset(SAMPLE.read_bytes(), SAMPLE.name))
        try:
            yield Harness(BatchService(sessions, broker), dataset.id, sessions)
        finally:
            await runner.drain()
            await broker.shutdown()
            await factory.aclose()
            await engine.dispose()


async def item_count(harness: Harness, **where: object) -> int:
    async with short_session(harness.sessions) as session:  # type: ignore[arg-type]
        query = select(func.count()).select_from(BatchItem)
        for column, value in where.items():
            query = query.where(getattr(BatchItem, column) == value)
        return int((await session.execute(query)).scalar_one())


async def test_batch_completes_every_item_exactly_once(harness: Harness) -> None:
    spec = BatchSpec(harness.dataset_id, ["m1", "m2"], judge_model="rubric", repeats=2)
    batch = await harness.service.create(spec)
    progress = await harness.wait(batch.id)
    assert progress["status"] == "completed" and progress["total"] == 12 * 2 * 2
    assert verdicts(progress["items"]) == {"verdict": 48}
    assert await item_count(harness, batch_id=batch.id, attempts=1) == 48  # each ran once
    assert progress["input_tokens"] > 0 and progress["eta_s"] is None


async def test_control_arm_and_response_cache(harness: Harness, simulator_server: SimulatorServer) -> None:
    spec = BatchSpec(harness.dataset_id, ["m1"], judge_model="m1", max_rounds=2, control_arm=True, repeats=2)
    batch = await harness.service.create(spec)
    progress = await harness.wait(batch.id)
    assert verdicts(progress["items"]) == {"verdict": 48} and await item_count(harness, arm="control") == 24
    calls = len(simulator_server.state.requests)
    async with short_session(harness.sessions) as session:  # type: ignore[arg-type]
        cached = (await session.execute(select(func.count()).select_from(CachedResponse))).scalar_one()
    assert cached > 0 and calls < 48 * 8  # the second repeat is served from the cache


async def test_budget_cap_stops_cleanly(harness: Harness) -> None:
    spec = BatchSpec(harness.dataset_id, ["m1"], judge_model="m1", budget_tokens=1, use_cache=False)
    batch = await harness.service.create(spec)
    progress = await harness.wait(batch.id)
    assert progress["status"] == "budget_exhausted" and "budget reached" in str(progress["stop_reason"])
    items = progress["items"]
    assert isinstance(items, dict) and items.get("cancelled", 0) > 0 and "queued" not in items
    assert "running" not in items  # every item ended in a definite state


async def test_pause_resume_cancel_and_retry(harness: Harness, simulator_server: SimulatorServer) -> None:
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"latency_s": 0.05}))
    batch = await harness.service.create(
        BatchSpec(harness.dataset_id, ["m1"], judge_model="m1", use_cache=False)
    )
    await harness.service.pause(batch.id)
    await asyncio.sleep(0.5)
    paused = await harness.service.progress(batch.id)
    assert paused["status"] == "paused" and paused["items"].get("queued", 0) > 0
    with pytest.raises(BatchStateError):
        await harness.service.pause(batch.id)
    await harness.service.resume(batch.id)
    assert (await harness.wait(batch.id))["status"] == "completed"
    with pytest.raises(BatchStateError):
        await harness.service.cancel(batch.id)
    other = await harness.service.create(
        BatchSpec(harness.dataset_id, ["m2"], judge_model="m2", use_cache=False)
    )
    cancelled = await harness.service.cancel(other.id)
    assert cancelled.status == "cancelled"
    settled = await harness.wait(other.id)
    assert set(verdicts(settled["items"])) <= {"cancelled", "verdict"}


async def test_failed_items_can_be_retried_alone(harness: Harness, simulator_server: SimulatorServer) -> None:
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"latency_s": 0.0}))
    spec = BatchSpec(harness.dataset_id, ["m1", "broken"], judge_model="rubric", use_cache=False)
    batch = await harness.service.create(spec)
    progress = await harness.wait(batch.id)
    items = progress["items"]
    assert isinstance(items, dict)
    # the failing endpoint's items fail where it is called (problems passing at once never call it)
    failed = items["error"]
    assert failed > 0 and verdicts(items) == {"verdict": 24 - failed, "error": failed}
    assert await harness.service.retry_failed(batch.id) == failed
    again = await harness.wait(batch.id)
    assert again["items"] == items
    assert await item_count(harness, batch_id=batch.id, model="broken", attempts=2) == failed


async def test_a_process_that_does_not_know_the_model_leaves_its_items_pending(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    """A process whose registry lacks the batch's model (a viewer on a laptop) neither claims nor
    fails its items; a process that knows the model completes the batch later."""
    await migrate(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    idle = build_broker(None, held=1, redelivery_s=30)  # never started: items wait in the database
    async with short_session(sessions) as session:
        dataset = await store_dataset(session, "sample", parse_dataset(SAMPLE.read_bytes(), SAMPLE.name))
    service = BatchService(sessions, idle)
    batch = await service.create(BatchSpec(dataset.id, ["elsewhere"], judge_model="rubric", use_cache=False))
    async with short_session(sessions) as session:
        query = select(col(BatchItem.id)).where(col(BatchItem.batch_id) == batch.id)
        ids = stored_ids((await session.execute(query)).scalars().all())
    stranger = PanelFactory(ModelRegistry.from_sources(extra={}), {})
    knower = PanelFactory(
        ModelRegistry.from_sources(
            extra={"elsewhere": {"model": "m", "base_url": simulator_server.base_url, "max_retries": 0}}
        ),
        {},
    )
    try:
        async with batch_runner(sessions, stranger, database_url, worker="viewer") as runner:
            outcomes = {await runner.process(item_id) for item_id in ids}
        assert outcomes == {"unknown model elsewhere"}
        untouched = await service.progress(batch.id)
        assert untouched["status"] == "queued" and untouched["items"] == {"queued": 12}
        # The batch says why its items wait, and the status a person reads says what to do.
        reason = "viewer has no model 'elsewhere' in its registry"
        assert untouched["waiting"] == [{"reason": reason, "items": 12}]
        async with short_session(sessions) as session:
            shown = status_text(await session.get_one(Batch, batch.id), untouched, {})
        assert f"waiting    12 queued item(s) left alone: {reason}; add the model" in shown
        async with short_session(sessions) as session:
            attempts = select(func.sum(col(BatchItem.attempts))).where(col(BatchItem.batch_id) == batch.id)
            assert (await session.execute(attempts)).scalar_one() == 0  # never claimed
        async with batch_runner(sessions, knower, database_url, worker="lab") as runner:
            outcomes = {await runner.process(item_id) for item_id in ids}
        assert outcomes <= VERDICTS
        finished = await service.progress(batch.id)
        assert finished["status"] == "completed" and verdicts(finished["items"]) == {"verdict": 12}
        assert finished["waiting"] == []
        async with short_session(sessions) as session:
            left = select(func.count()).where(
                col(BatchItem.batch_id) == batch.id, col(BatchItem.waiting).is_not(None)
            )
            assert (await session.execute(left)).scalar_one() == 0  # a claim clears the reason
    finally:
        await stranger.aclose()
        await knower.aclose()
        await engine.dispose()


@pytest.mark.parametrize("resume", [True, False])
async def test_the_resume_batches_setting_decides_whether_a_start_resends_active_batches(
    database_url: str, resume: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.batches import runtime
    from app.settings import Settings

    sent: list[object] = []

    async def record(broker: object, runner: object) -> int:
        sent.append(broker)
        return 0

    monkeypatch.setattr(runtime, "resume_active", record)
    settings = Settings(_env_file=None, database_url=database_url, resume_batches=resume)
    broker = build_broker(None, held=1, redelivery_s=30)
    async with runtime.consuming(broker, object(), settings):  # type: ignore[arg-type]
        pass
    assert len(sent) == (1 if resume else 0)


async def test_stalled_items_are_found_for_resending(database_url: str) -> None:
    from datetime import timedelta

    from app.batches.repository import stalled
    from app.models import Batch, ProblemRow, Run, utcnow

    await migrate(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    long_ago = utcnow() - timedelta(minutes=10)
    try:
        async with short_session(sessions) as session:
            dataset = await store_dataset(session, "s", parse_dataset(SAMPLE.read_bytes(), SAMPLE.name))
            problem = (await session.execute(select(col(ProblemRow.id)))).scalars().first()
            assert problem is not None
            quiet = Batch(
                dataset_id=dataset.id,
                models=["m"],
                judge_model="m",
                policy="default",
                max_rounds=1,
                repeats=1,
                status="running",
            )
            busy = Batch(
                dataset_id=dataset.id,
                models=["m"],
                judge_model="m",
                policy="default",
                max_rounds=1,
                repeats=1,
                status="running",
            )
            session.add_all([quiet, busy])
            await session.flush()

            def run(owner: str, until: datetime) -> str:
                """An unfinished run, held by ``owner`` until ``until``: its item's lease."""
                held = Run(
                    problem_id=problem,
                    status="running",
                    model="m",
                    judge_model="m",
                    policy="default",
                    max_rounds=1,
                    batch_id=quiet.id,
                    lease_owner=owner,
                    lease_until=until,
                )
                session.add(held)
                return held.id

            def item(
                batch: Batch,
                repeat: int,
                status: str,
                claimed_at: datetime | None = None,
                finished_at: datetime | None = None,
                run_id: str | None = None,
            ) -> BatchItem:
                return BatchItem(
                    batch_id=batch.id,
                    problem_id=problem,
                    model="m",
                    repeat=repeat,
                    arm="loop",
                    status=status,
                    claimed_at=claimed_at,
                    finished_at=finished_at,
                    run_id=run_id,
                )

            dead, alive = run("dead", long_ago), run("alive", utcnow() + timedelta(minutes=10))
            await session.flush()
            session.add_all(
                [
                    item(quiet, 0, "queued"),
                    item(quiet, 1, "running", claimed_at=long_ago, run_id=dead),  # its lease lapsed
                    item(quiet, 2, "accepted", claimed_at=long_ago, finished_at=long_ago),
                    item(quiet, 3, "running", claimed_at=long_ago, run_id=alive),  # held: a long item
                    item(busy, 0, "queued"),
                    item(busy, 1, "accepted", claimed_at=utcnow(), finished_at=utcnow()),
                ]
            )
        async with short_session(sessions) as session:
            found = await stalled(session, stall=timedelta(seconds=30))
            statuses = {(await session.get_one(BatchItem, item_id)).status for item_id in found}
        assert len(found) == 2 and statuses == {"queued", "running"}  # only the quiet batch's leftovers
    finally:
        await engine.dispose()


@dataclass
class SweepWorld:
    """A stored batch of the sample whose items nothing runs, and what the sweep sent (the broker's
    enqueue recorded, the stream reader idle)."""

    sessions: Any
    broker: Any
    batch_id: str
    sent: list[list[int]]

    async def items(self) -> list[BatchItem]:
        async with short_session(self.sessions) as session:
            query = (
                select(BatchItem).where(col(BatchItem.batch_id) == self.batch_id).order_by(col(BatchItem.id))
            )
            return list((await session.execute(query)).scalars().all())

    @asynccontextmanager
    async def sweep(self, database_url: str, redelivery_s: float) -> AsyncIterator[Any]:
        """The Redis runtime's sweep work, registered on a stand-in executor while items are consumed."""
        from app.batches import runtime

        executor = SimpleNamespace(sweepers=[])
        runner = SimpleNamespace(executor=executor, sessions=self.sessions)
        settings = Settings(
            _env_file=None, database_url=database_url, broker_url="redis://x", redelivery_s=redelivery_s
        )
        async with runtime.consuming(self.broker, runner, settings):  # type: ignore[arg-type]
            [resend] = executor.sweepers
            yield resend
        assert executor.sweepers == []  # consuming stopped: the sweep has no items to send


@pytest.fixture
async def sweep_world(database_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SweepWorld]:
    from app.batches import runtime

    await migrate(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    sent: list[list[int]] = []

    async def record(broker: object, ids: list[int]) -> int:
        sent.append(list(ids))
        return len(ids)

    async def no_stream(*_: object) -> None:  # the stream reader: not tested here
        await asyncio.Event().wait()

    monkeypatch.setattr(runtime, "enqueue", record)
    monkeypatch.setattr(runtime, "receive", no_stream)
    try:
        async with short_session(sessions) as session:
            dataset = await store_dataset(session, "s", parse_dataset(SAMPLE.read_bytes(), SAMPLE.name))
        broker = build_broker(None, held=1, redelivery_s=30)  # never started: nothing runs the items
        created = await BatchService(sessions, broker).create(
            BatchSpec(dataset.id, ["m"], judge_model="m", use_cache=False)
        )
        yield SweepWorld(sessions, broker, created.id, sent)
    finally:
        await engine.dispose()


async def test_the_sweep_resends_a_quiet_batchs_items_at_most_once_a_redelivery_period(
    sweep_world: SweepWorld, database_url: str
) -> None:
    """On Redis, re-sending stalled items is the executor's one sweep's work (no loop of its own):
    registered while items are consumed, and at most once per THINKLOOP_REDELIVERY_S however
    often the sweep runs."""
    queued = stored_ids(item.id for item in await sweep_world.items())
    sent = sweep_world.sent
    async with sweep_world.sweep(database_url, redelivery_s=0.5) as resend:
        await asyncio.sleep(0.6)  # the batch is quiet for longer than a redelivery period
        assert await resend() == len(queued) and sorted(sent[0]) == sorted(queued)
        assert await resend() == 0  # the sweep runs again at once: nothing is sent twice
        await asyncio.sleep(0.6)
        assert await resend() == len(queued) and len(sent) == 2


async def test_an_orphan_of_a_busy_batch_is_sent_again_at_the_next_sweep(
    sweep_world: SweepWorld, database_url: str
) -> None:
    """Takeover within a lease and a sweep of a crash: an item whose run's lease lapsed (its worker
    died) is sent again at the next sweep, though its batch is busy (another item claimed just now)
    and the stall period is long; the batch's queued items wait for the stall period as before."""
    from datetime import timedelta

    from app.models import Run, utcnow

    async with short_session(sweep_world.sessions) as session:
        query = (
            select(BatchItem)
            .where(col(BatchItem.batch_id) == sweep_world.batch_id)
            .order_by(col(BatchItem.id))
        )
        orphan, busy = (await session.execute(query)).scalars().all()[:2]
        now = utcnow()
        for item, owner, until in (
            (orphan, "dead-host:1", now - timedelta(seconds=1)),
            (busy, "live-host:2", now + timedelta(seconds=60)),
        ):
            run = Run(
                problem_id=item.problem_id,
                status="running",
                model="m",
                judge_model="m",
                policy="default",
                max_rounds=3,
                batch_id=sweep_world.batch_id,
                lease_owner=owner,
                lease_until=until,
            )
            session.add(run)
            await session.flush()
            item.run_id, item.status, item.claimed_at = run.id, "running", now
    sent = sweep_world.sent
    async with sweep_world.sweep(database_url, redelivery_s=600) as resend:
        assert await resend() == 1 and sent == [[orphan.id]]  # the batch is busy: the orphan only
        assert await resend() == 1 and sent[-1] == [orphan.id]  # every sweep, until it is claimed


async def test_the_stream_reader_sends_again_what_a_restarted_redis_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After the broker failed, the next listener starts only after everything nobody holds was
    sent again (a restarted Redis lost its stream): work resumes as soon as Redis returns."""
    from taskiq import receiver as taskiq_receiver

    from app.batches import runtime

    steps: list[str] = []
    listened = asyncio.Event()

    class FlakyReceiver:
        def __init__(self, *_: object, **__: object) -> None:
            pass

        async def listen(self, _: asyncio.Event) -> None:
            steps.append("listen")
            if steps.count("listen") == 1:
                raise ConnectionError("Redis went away")
            listened.set()
            await asyncio.Event().wait()

    async def returned() -> int:
        steps.append("resend")
        return 0

    monkeypatch.setattr(taskiq_receiver, "Receiver", FlakyReceiver)
    settings = Settings(_env_file=None, broker_url="redis://x")
    reading = asyncio.create_task(runtime.receive(SimpleNamespace(), settings, returned))  # type: ignore[arg-type]
    try:
        await asyncio.wait_for(listened.wait(), 60)  # a hang guard, not a timing check
    finally:
        reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reading
    assert steps == ["listen", "resend", "listen"]


async def test_items_are_built_in_problem_order_with_models_interleaved(database_url: str) -> None:
    from app.batches.repository import create_items
    from app.models import Batch, DatasetItem

    await migrate(database_url)
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            dataset = await store_dataset(session, "s", parse_dataset(SAMPLE.read_bytes(), SAMPLE.name))
            batch = Batch(
                dataset_id=dataset.id,
                models=["b", "a"],
                judge_model="j",
                policy="default",
                max_rounds=1,
                repeats=2,
                control_arm=True,
                status="queued",
            )
            session.add(batch)
            await session.flush()
            assert await create_items(session, batch) == 12 * 2 * 2 * 2
            query = select(col(DatasetItem.problem_id)).where(col(DatasetItem.dataset_id) == dataset.id)
            problems = (await session.execute(query.order_by(col(DatasetItem.position)))).scalars().all()
            in_order = (
                select(BatchItem).where(col(BatchItem.batch_id) == batch.id).order_by(col(BatchItem.id))
            )
            items = (await session.execute(in_order)).scalars().all()
    finally:
        await engine.dispose()
    expected = [
        (p, m, r, a) for p in problems for m in ("b", "a") for r in (0, 1) for a in ("loop", "control")
    ]
    assert [(i.problem_id, i.model, i.repeat, i.arm) for i in items] == expected
    first = items[0]
    assert (first.status, first.attempts, first.input_tokens, first.cost_usd) == ("queued", 0, 0, 0.0)
    assert first.claimed_at is None and first.run_id is None and first.cache_hits == 0


async def test_datasets_share_stored_problems_even_when_uploaded_at_once(database_url: str) -> None:
    from app.datasets.synthetic import synthetic_jsonl
    from app.models import DatasetItem, ProblemRow

    await migrate(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    first = parse_dataset(synthetic_jsonl(1_200, seed=9).encode(), "a.jsonl")
    overlapping = parse_dataset(synthetic_jsonl(1_300, seed=9).encode(), "b.jsonl")  # 1,200 + 100 new

    async def store(parsed: object, name: str) -> str:
        async with short_session(sessions) as session:
            return (await store_dataset(session, name, parsed, chunk=250)).id  # type: ignore[arg-type]

    try:
        a, b = await asyncio.gather(store(first, "a"), store(overlapping, "b"))
        async with short_session(sessions) as session:
            problems = (await session.execute(select(func.count()).select_from(ProblemRow))).scalar_one()
            query = select(
                col(DatasetItem.position), col(DatasetItem.problem_id), col(ProblemRow.content_hash)
            ).join(ProblemRow, col(ProblemRow.id) == col(DatasetItem.problem_id))
            rows_a = (await session.execute(query.where(col(DatasetItem.dataset_id) == a))).all()
            rows_b = (await session.execute(query.where(col(DatasetItem.dataset_id) == b))).all()
    finally:
        await engine.dispose()
    assert problems == 1_300
    assert sorted((p, h) for p, _, h in rows_a) == [(i, r.content_hash) for i, r in enumerate(first.rows)]
    assert sorted((p, h) for p, _, h in rows_b) == [
        (i, r.content_hash) for i, r in enumerate(overlapping.rows)
    ]
    assert {i for _, i, _ in rows_a} <= {i for _, i, _ in rows_b}  # the same problem rows, shared
