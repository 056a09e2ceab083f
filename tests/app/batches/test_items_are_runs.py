"""A batch item is a run: created at its first claim, followed live, resumed from its checkpoint."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlmodel import col

from agents.llm.models import ModelRegistry
from agents.outcome import Outcome
from agents.panel import PanelFactory
from agents.simulator import SimulatorServer
from agents.simulator.replies import all_text
from agents.simulator.rules import Rule
from agents.simulator.server import LoggedRequest, SimulatorState
from app.batches.broker import build_broker
from app.batches.repository import create_items
from app.batches.runner import BatchRunner
from app.batches.schemas import BatchItemPublic
from app.batches.service import BatchService, BatchSpec
from app.checkpoints import open_checkpointer
from app.datasets.parsing import parse_dataset
from app.datasets.repository import store_dataset
from app.db import create_engine, migrate, session_factory, short_session
from app.models import (
    BATCH_ACTIVE,
    BATCH_TERMINAL,
    RUN_TERMINAL,
    RUN_UNFINISHED,
    Batch,
    BatchItem,
    BatchStatus,
    ProblemRow,
    RevisionRow,
    RoundRow,
    Run,
    RunStatus,
    TranscriptEvent,
    utcnow,
)
from tests.helpers.batches import batch_runner
from tests.helpers.problems import PROBLEM

pytestmark = [pytest.mark.both_databases, pytest.mark.usefixtures("_quick_simulator")]
ONE_PROBLEM = (json.dumps(PROBLEM) + "\n").encode()


@pytest.fixture
def _quick_simulator(simulator_server: SimulatorServer) -> None:
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [], "latency_s": 0.0}))


@dataclass
class World:
    sessions: Any
    factory: PanelFactory
    database_url: str
    dataset_id: str

    async def items(self, batch_id: str) -> list[BatchItem]:
        async with short_session(self.sessions) as session:
            query = select(BatchItem).where(col(BatchItem.batch_id) == batch_id).order_by(col(BatchItem.id))
            return list((await session.execute(query)).scalars().all())

    async def transcript(self, run_id: str) -> list[dict[str, Any]]:
        async with short_session(self.sessions) as session:
            query = select(TranscriptEvent).where(col(TranscriptEvent.run_id) == run_id)
            rows = (await session.execute(query.order_by(col(TranscriptEvent.seq)))).scalars().all()
            return [row.data for row in rows]

    async def distinct_problems(self, count: int) -> tuple[list[str], str]:
        """A stored dataset of ``count`` problems whose questions differ (so a request names its
        item): the questions, and the dataset's id."""
        questions = [
            PROBLEM["question"].replace("120 musicians", f"{120 + 10 * i} musicians") for i in range(count)
        ]
        lines = b"".join((json.dumps(PROBLEM | {"question": q}) + "\n").encode() for q in questions)
        async with short_session(self.sessions) as session:
            dataset = await store_dataset(
                session, f"distinct-{count}", parse_dataset(lines, "problems.jsonl")
            )
        return questions, dataset.id

    async def question(self, problem_id: str) -> str:
        async with short_session(self.sessions) as session:
            problem = await session.get(ProblemRow, problem_id)
            assert problem is not None
            return problem.question

    async def run(self, run_id: str) -> Run:
        async with short_session(self.sessions) as session:
            run = await session.get(Run, run_id)
            assert run is not None
            return run


@pytest.fixture
async def world(database_url: str, simulator_server: SimulatorServer) -> AsyncIterator[World]:
    await migrate(database_url)
    engine = create_engine(database_url)
    entry = {"model": "sim-1", "base_url": simulator_server.base_url, "max_retries": 0}
    factory = PanelFactory(ModelRegistry.from_sources(extra={"sim": entry}), {})
    sessions = session_factory(engine)
    async with short_session(sessions) as session:
        dataset = await store_dataset(session, "one", parse_dataset(ONE_PROBLEM, "one.jsonl"))
    try:
        yield World(sessions, factory, database_url, dataset.id)
    finally:
        await factory.aclose()
        await engine.dispose()


async def until(check: Any, what: str, tries: int = 6000) -> Any:
    """Poll ``check`` until it returns something truthy (a hang guard, not a timing check)."""
    for _ in range(tries):
        if value := await check():
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(what)


@contextlib.asynccontextmanager
async def held_item(world: World, simulator: SimulatorServer) -> AsyncIterator[tuple[BatchRunner, BatchItem]]:
    """A one-item batch on the embedded broker, its item running with its first calls held;
    released when the block ends, and the item run to its end."""
    broker = build_broker(None, held=2, redelivery_s=30)
    async with batch_runner(world.sessions, world.factory, world.database_url) as runner:
        broker.state.runner = runner
        await broker.startup()
        try:
            simulator.state.held = True  # the item's first calls wait
            batch = await BatchService(world.sessions, broker).create(
                BatchSpec(world.dataset_id, ["sim"], judge_model="sim", max_rounds=3)
            )
            [item] = await until(lambda: _with_run(world, batch.id), "the item never got its run")
            yield runner, item
            simulator.state.held = False
            await until(lambda: _finished(world, batch.id), "the item did not finish")
            await runner.drain()
        finally:
            simulator.state.held = False
            await broker.shutdown()


async def test_an_item_is_a_run_that_can_be_followed_while_it_executes(
    world: World, simulator_server: SimulatorServer
) -> None:
    async with held_item(world, simulator_server) as (_, item):
        assert item.status == "running" and item.run_id is not None
        # The run exists while the item executes: a follower sees it and its first events.
        started = await until(lambda: world.transcript(item.run_id or ""), "the run never started")
        assert started[0]["type"] == "run.started"
        run = await world.run(item.run_id)
        assert (run.status, run.batch_id, run.arm, run.model) == ("running", item.batch_id, "loop", "sim")
    [item] = await world.items(item.batch_id)
    run = await world.run(item.run_id or "")
    assert item.status == run.status == item.outcome == "accepted" and run.lease_until is None
    kinds = [event["type"] for event in await world.transcript(run.id)]
    assert kinds[0] == "run.started" and kinds[-1] == "run.finished" and "run.resumed" not in kinds
    async with short_session(world.sessions) as session:
        rounds = (
            (await session.execute(select(RoundRow).where(col(RoundRow.run_id) == run.id))).scalars().all()
        )
    assert len(rounds) == kinds.count("round.scored")  # each round stored once, as its row


async def test_an_item_delivered_again_to_the_process_running_it_is_not_run_twice(
    world: World, simulator_server: SimulatorServer
) -> None:
    """A claim accepts an item already held by this worker (a committed claim whose answer was
    lost); a second delivery while this process runs the item must still be turned away."""
    async with held_item(world, simulator_server) as (runner, item):
        assert item.id is not None
        again = await runner.process(item.id)
    [done] = await world.items(item.batch_id)
    assert again == "taken" and done.status == "accepted" and done.attempts == 1
    assert "run.resumed" not in [event["type"] for event in await world.transcript(done.run_id or "")]


async def test_items_claimed_ahead_wait_for_a_lane_and_are_handed_back_unstarted_on_close(
    world: World, simulator_server: SimulatorServer
) -> None:
    """Two lanes and two items claimed ahead: four items are claimed and started, two call models;
    closing hands the two that never got a lane back without a call made for them."""
    state = simulator_server.state
    questions, dataset_id = await world.distinct_problems(5)
    broker = build_broker(None, held=4, redelivery_s=30)  # two lanes and two items claimed ahead
    entry = {"model": "sim-1", "base_url": simulator_server.base_url, "max_retries": 0, "max_concurrency": 64}
    factory = PanelFactory(ModelRegistry.from_sources(extra={"sim": entry}), {})  # the endpoint takes all
    async with batch_runner(world.sessions, factory, world.database_url, concurrency=2) as runner:
        broker.state.runner = runner
        await broker.startup()
        try:
            state.held = True
            batch = await BatchService(world.sessions, broker).create(
                BatchSpec(dataset_id, ["sim"], judge_model="sim", max_rounds=3)
            )

            async def started() -> list[BatchItem] | None:
                items = [i for i in await world.items(batch.id) if i.status == "running" and i.run_id]
                runs = [await world.transcript(i.run_id or "") for i in items]
                started = all(r and r[0]["type"] == "run.started" for r in runs)
                return items if len(items) == 4 and started else None

            running = await until(started, "four items were never claimed and started")
            await until(lambda: _calls_in_flight(state, 16), "the two lanes' first rounds never arrived")
            await asyncio.sleep(0.5)  # a third run with a lane would send its round now
            assert state.in_flight == 16  # two runs' rounds (7 judges + the solver each), not four
            runner.stop_claiming()
            state.held = False
            await until(lambda: _settled(world, batch.id), "the two runs with a lane never finished")
            await runner.drain()
            assert await runner.release() == 2
        finally:
            state.held = False
            await broker.shutdown()
            await factory.aclose()
    items = {item.id: item for item in await world.items(batch.id)}
    done = [i for i in items.values() if i.status == "accepted"]
    assert len(done) == 2 and sum(i.status == "queued" for i in items.values()) == 3
    for item in running:
        run = await world.run(item.run_id or "")
        transcript = [event["type"] for event in await world.transcript(item.run_id or "")]
        if items[item.id].status == "accepted":
            assert run.status in RUN_TERMINAL and "round.scored" in transcript
        else:  # handed back as it was: started, no call made, free for any process to resume
            assert (run.status, run.lease_owner) == ("running", None)
            assert transcript == ["run.started", "round.started"]  # its first round waited for a lane
    asked = {q for q in questions if any(q in all_text(r.body) for r in state.requests)}
    assert asked == {await world.question(i.problem_id) for i in done}  # none for the two handed back
    assert state.max_in_flight == 16  # never more than the two lanes' rounds at once


async def test_a_lane_is_held_per_step_so_a_waiting_item_calls_between_another_items_steps(
    world: World, simulator_server: SimulatorServer
) -> None:
    """One lane, two items: the first item's round fails, so it revises; its lane is given back
    when its round's last reply arrives, and the second item's round is sent before the first
    item's revision. Never more than one step's calls are in flight."""
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [Rule(role="^Judge", score=40, times=7)]}))
    questions, dataset_id = await world.distinct_problems(2)
    broker = build_broker(None, held=2, redelivery_s=30)  # one lane and one item claimed ahead
    async with batch_runner(world.sessions, world.factory, world.database_url, concurrency=1) as runner:
        broker.state.runner = runner
        await broker.startup()
        try:
            state.held = True
            batch = await BatchService(world.sessions, broker).create(
                BatchSpec(dataset_id, ["sim"], judge_model="sim", max_rounds=3)
            )
            await until(lambda: _calls_in_flight(state, 8), "the first item's round never arrived")
            await until(lambda: _lanes_waited(runner, 1), "the second item never asked for the lane")
            state.held = False
            await until(lambda: _finished(world, batch.id), "the items did not finish")
            await runner.drain()
        finally:
            state.held = False
            await broker.shutdown()
    first, second = (_requests_for(state, q) for q in questions)
    if not any(r.role.startswith("Reviser") for r in first):
        first, second = second, first  # the failing round went to whichever item called first
    revision = next(r for r in first if r.role.startswith("Reviser"))
    assert min(r.id for r in second) < revision.id  # the second item called between the first's steps
    assert state.max_in_flight == 8  # one lane: one round's seven judges and its solver


def _requests_for(state: SimulatorState, question: str) -> list[LoggedRequest]:
    return [r for r in state.requests if question in all_text(r.body)]


async def _lanes_waited(runner: BatchRunner, runs: int) -> bool:
    return runner.lanes.waiting == runs


async def _with_run(world: World, batch_id: str) -> list[BatchItem] | None:
    items = await world.items(batch_id)
    return items if items and items[0].run_id else None


async def _arrived(state: SimulatorState, calls: int) -> bool:
    return len(state.requests) >= calls


async def _all_answered(state: SimulatorState) -> bool:
    return all(r.answered for r in state.requests)


async def _calls_in_flight(state: SimulatorState, calls: int) -> bool:
    return bool(state.in_flight >= calls)


async def _settled(world: World, batch_id: str) -> bool:
    return sum(item.status == "accepted" for item in await world.items(batch_id)) == 2


async def _finished(world: World, batch_id: str) -> bool:
    return all(item.status in RUN_TERMINAL for item in await world.items(batch_id))


async def test_a_dead_workers_item_resumes_from_its_checkpoint(
    world: World, simulator_server: SimulatorServer
) -> None:
    spec = BatchSpec(world.dataset_id, ["sim"], judge_model="sim", max_rounds=4, use_cache=False)
    state = simulator_server.state
    failing_first_round = state.config.model_copy(update={"rules": [Rule(role="^Judge", score=40, times=7)]})
    state.configure(failing_first_round)
    async with contextlib.AsyncExitStack() as stack:
        first = await stack.enter_async_context(
            batch_runner(world.sessions, world.factory, world.database_url)
        )
        # Calibration: the same item, uninterrupted, makes this many calls and takes these rounds.
        calibration = await _create(world, spec)
        [item] = await world.items(calibration.id)
        assert await first.process(item.id or 0) == "accepted"
        per_item = len(state.requests)
        [done] = await world.items(calibration.id)
        assert await _rounds(world, done.run_id) >= 2, "the calibration must need more than one round"
        # The same answers again, and a fresh call log; the first revision is slow to answer, so the
        # worker dies waiting for its model (as a process dies), never inside a write to SQLite.
        slow_revision = Rule(role="(?i)revis", delay_s=30, times=1)
        rules = [*failing_first_round.rules, slow_revision]
        state.configure(failing_first_round.model_copy(update={"rules": rules}))

        batch = await _create(world, spec)
        [item] = await world.items(batch.id)
        dying = asyncio.create_task(first.process(item.id or 0))
        run_id = (await until(lambda: _with_run(world, batch.id), "no run"))[0].run_id
        await until(lambda: _waiting_for_revision(world, run_id, state), "no revision was asked for")
        dying.cancel()  # the worker dies mid-item: nothing is handed back, its run's lease stays
        with contextlib.suppress(asyncio.CancelledError):
            await dying
        interrupted = len(state.requests)
        # Another worker finds the item held by its run's lease while the lease lasts ...
        second = await stack.enter_async_context(
            batch_runner(world.sessions, world.factory, world.database_url, worker="other-host:1")
        )
        assert await second.process(item.id or 0) == "taken"
        async with short_session(world.sessions) as session:  # ... until it lapses
            past = utcnow().replace(year=2000)
            await session.execute(update(Run).where(col(Run.id) == run_id).values(lease_until=past))

        assert await second.process(item.id or 0) == "accepted"
    [item] = await world.items(batch.id)
    run = await world.run(run_id)
    assert item.run_id == run_id and item.attempts == 2 and run.lease_owner == "other-host:1"
    # No finished step ran again: the two workers together made at most one step's calls more
    # than the uninterrupted item (the step cut short: seven judges and a solver, or a revision).
    assert interrupted >= 7 and per_item <= len(state.requests) <= per_item + 8
    kinds = [event["type"] for event in await world.transcript(run_id)]
    assert kinds.count("run.started") == 1 and kinds.count("run.resumed") == 1 and kinds[-1] == "run.finished"
    judged = await _rounds(world, run_id)
    assert kinds.count("round.scored") == judged  # none recorded twice
    async with short_session(world.sessions) as session:
        revisions = (
            (await session.execute(select(RevisionRow).where(RevisionRow.run_id == run_id))).scalars().all()
        )
    assert len(revisions) == judged - 1


async def _rounds(world: World, run_id: str | None) -> int:
    """The rounds stored for a run (its rows)."""
    async with short_session(world.sessions) as session:
        query = select(RoundRow).where(col(RoundRow.run_id) == (run_id or ""))
        return len((await session.execute(query)).scalars().all())


async def test_the_executors_one_heartbeat_renews_an_items_run_and_stops_the_item_when_lost(
    world: World, simulator_server: SimulatorServer
) -> None:
    """One lease: an item is held by its run's lease, which the executor's heartbeat renews with
    every other run of the process (there is no second heartbeat); when the lease was taken over
    (this process missed its renewals), the item stops there and writes nothing."""
    spec = BatchSpec(world.dataset_id, ["sim"], judge_model="sim", max_rounds=3, use_cache=False)
    state = simulator_server.state
    async with batch_runner(world.sessions, world.factory, world.database_url, lease_s=60) as runner:
        batch = await _create(world, spec)
        [item] = await world.items(batch.id)
        state.held = True  # the item's first round waits
        try:
            working = asyncio.create_task(runner.process(item.id or 0))
            [item] = await until(lambda: _with_run(world, batch.id), "the item never got its run")
            run_id = item.run_id or ""
            # Its first round's calls are waiting (counted as they arrive: in-flight counts can be
            # off by an earlier test's abandoned calls, answered after the simulator was reset).
            await until(lambda: _arrived(state, 8), "the item's first round never arrived")
            async with short_session(world.sessions) as session:  # as if last renewed long ago
                await session.execute(update(Run).where(col(Run.id) == run_id).values(lease_until=utcnow()))
            assert await runner.executor.heartbeat() == set()  # held, and renewed
            lease_until = (await world.run(run_id)).lease_until
            assert lease_until is not None and lease_until > utcnow() + timedelta(seconds=30)
            async with short_session(world.sessions) as session:  # another process takes it over
                await session.execute(
                    update(Run).where(col(Run.id) == run_id).values(lease_owner="other-host:1")
                )
            assert await runner.executor.heartbeat() == {run_id}
            assert await working == "lost-claim"
        finally:
            state.held = False
    # The calls the item abandoned are answered (to no one) before the next test counts calls.
    await until(lambda: _all_answered(state), "the abandoned calls were never answered")
    [after] = await world.items(batch.id)
    assert (after.status, after.finished_at, after.error, after.attempts) == ("running", None, None, 1)
    run = await world.run(run_id)
    assert (run.status, run.lease_owner) == ("running", "other-host:1")  # the new holder's to finish


async def _create(world: World, spec: BatchSpec) -> Batch:
    """A batch and its items, sent to no queue: the test hands items to runners itself."""
    async with short_session(world.sessions) as session:
        batch = Batch(**spec.__dict__, status="queued")
        session.add(batch)
        await session.flush()
        await create_items(session, batch)
    return batch


async def _waiting_for_revision(world: World, run_id: str | None, state: Any) -> bool:
    """Round 1 is stored (its row is the last write before the revise step) and the revision asked."""
    async with short_session(world.sessions) as session:
        stored = (await session.execute(select(RoundRow).where(col(RoundRow.run_id) == run_id))).first()
    return stored is not None and any("revis" in request.role.lower() for request in state.requests)


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_processes_starting_together_set_up_the_checkpoint_tables_once(database_url: str) -> None:
    async with contextlib.AsyncExitStack() as stack:  # as workers started at once each do
        savers = await asyncio.gather(
            *(stack.enter_async_context(open_checkpointer(database_url)) for _ in range(6))
        )
        assert len(savers) == 6


def test_a_runs_terminal_statuses_are_exactly_the_outcomes() -> None:
    assert set(Outcome) == RUN_TERMINAL and set(RunStatus) == RUN_UNFINISHED | RUN_TERMINAL
    assert BATCH_ACTIVE | BATCH_TERMINAL | {BatchStatus.PAUSED} == set(BatchStatus)
    # A batch item's status is its run's: the API documents and validates the same vocabulary.
    assert BatchItemPublic.model_fields["status"].annotation is RunStatus


async def test_a_run_that_ended_is_not_lost_while_it_drops_its_checkpoints(
    world: World, simulator_server: SimulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between its end commit and its task's end, a run still deletes its checkpoints: a heartbeat
    then finds its lease gone (the run ended), but that is this process's own end, not a lost
    lease. The run is not cancelled there, and its checkpoints do not outlive it."""
    spec = BatchSpec(world.dataset_id, ["sim"], judge_model="sim", max_rounds=1, use_cache=False)
    async with batch_runner(world.sessions, world.factory, world.database_url, lease_s=60) as runner:
        executor = runner.executor
        delete = executor.delete_checkpoints
        dropping, release, dropped = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def slow_delete(run_ids: Any) -> None:  # the end's last step, held open
            dropping.set()
            await release.wait()
            await delete(run_ids)
            dropped.set()

        monkeypatch.setattr(executor, "delete_checkpoints", slow_delete)
        batch = await _create(world, spec)
        [item] = await world.items(batch.id)
        working = asyncio.create_task(runner.process(item.id or 0))
        await asyncio.wait_for(dropping.wait(), 120)  # a hang guard, not a timing check
        assert await executor.heartbeat() == set()  # ended here: not lost
        release.set()
        assert await working not in ("lost-claim", "taken")
    assert dropped.is_set()  # the checkpoints went with the run
    [after] = await world.items(batch.id)
    assert after.status in RUN_TERMINAL and after.attempts == 1
