"""Batches on the Redis Streams broker with two `thinkloop batch worker` processes, one killed."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from sqlmodel import col, select

from agents.simulator import Rule, SimulatorServer
from app.batches.broker import build_broker
from app.batches.repository import counts
from app.batches.service import BatchService, BatchSpec
from app.datasets.parsing import parse_dataset
from app.datasets.repository import store_dataset
from app.datasets.synthetic import synthetic_jsonl
from app.db import create_engine, migrate, session_factory, short_session
from app.main import create_app
from app.models import BatchItem, RoundRow, Run
from tests.app.conftest import PROBLEM, REDIS, VERDICTS, seed_keys, service_settings, verdicts

# Worker processes: slow, but for the lease-renewal test, the inner loop's only test of a lease outlived
# while its item runs (scripts/broken_builds.py: without it, the inner loop missed a broken renewal).
pytestmark = [pytest.mark.both_databases, pytest.mark.redis]


def model_env(simulator: SimulatorServer, *names: str) -> dict[str, str]:
    """Environment that registers each name as a model served by the simulator."""
    env = {}
    for name in names:
        if name == "rubric":  # the built-in offline panel needs no entry
            continue
        env[f"THINKLOOP_MODELS__{name.upper()}__MODEL"] = "sim-1"
        env[f"THINKLOOP_MODELS__{name.upper()}__BASE_URL"] = simulator.base_url
    return env


def start_worker(
    database_url: str,
    simulator: SimulatorServer,
    log: Path,
    models: tuple[str, ...] = ("sim",),
    broker_url: str = REDIS,
    lease_s: float = 3,
    redelivery_s: float = 2,
) -> subprocess.Popen[bytes]:
    """A `thinkloop batch worker` process with short leases, logging to ``log``: an item is held by
    its run's lease, renewed every third of ``lease_s``; the sweep that re-sends items nobody holds
    runs every ``redelivery_s``."""
    env = (
        os.environ
        | model_env(simulator, *models)
        | {
            "THINKLOOP_DATABASE_URL": database_url,
            "THINKLOOP_BROKER_URL": broker_url,
            "THINKLOOP_BATCH_CONCURRENCY": "4",
            "THINKLOOP_RUN_LEASE_S": str(lease_s),
            "THINKLOOP_RUN_SWEEP_S": str(redelivery_s),
            "THINKLOOP_REDELIVERY_S": str(redelivery_s),
        }
    )
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "app", "batch", "worker"], env=env, stdout=sink, stderr=sink
        )


async def run_batch(
    database_url: str,
    simulator: SimulatorServer,
    tmp_path: Path,
    kill_one: bool,
    problems: int = 20,
    models: tuple[str, ...] = ("sim", "rubric"),
) -> dict[str, int]:
    simulator.state.configure(simulator.state.config.model_copy(update={"rules": [], "latency_s": 0.05}))
    await migrate(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    broker = build_broker(REDIS, held=1, redelivery_s=2)
    await broker.startup()
    workers = [start_worker(database_url, simulator, tmp_path / f"worker{i}.log", models) for i in range(2)]
    try:
        async with short_session(sessions) as session:
            dataset = await store_dataset(
                session,
                f"w-{uuid.uuid4().hex[:6]}",
                parse_dataset(synthetic_jsonl(problems).encode(), "p.jsonl"),
            )
        service = BatchService(sessions, broker)
        batch = await service.create(
            BatchSpec(dataset.id, list(models), judge_model=models[0], use_cache=False)
        )
        killed = False
        for _ in range(max(1200, 10 * problems * len(models))):  # a hang guard, not a timing check
            progress = await service.progress(batch.id)
            if kill_one and not killed and progress["finished"] >= 5:
                workers[0].send_signal(signal.SIGKILL)  # mid-batch, items in its hands
                killed = True
            if progress["status"] == "completed":
                break
            await asyncio.sleep(0.1)
        assert progress["status"] == "completed", progress
        async with short_session(sessions) as session:
            return await counts(session, batch.id)
    finally:
        for process in workers:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=20)
        await broker.shutdown()
        await engine.dispose()


@pytest.mark.slow
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_two_workers_complete_every_item_once(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path, clean_redis: None
) -> None:
    counts = await run_batch(database_url, simulator_server, tmp_path, kill_one=False)
    assert verdicts(counts) == {"verdict": 40}


@pytest.mark.slow
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_killed_worker_loses_nothing(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path, clean_redis: None
) -> None:
    counts = await run_batch(database_url, simulator_server, tmp_path, kill_one=True)
    assert verdicts(counts) == {"verdict": 40}


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_an_item_outliving_three_lease_periods_is_claimed_once(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path, clean_redis: None
) -> None:
    """Its worker renews the lease while the item runs: the other worker, offered the same item
    again and again by redelivery and the stall sweep, never takes it over."""
    # The worker renews every lease_s / 3: a lease of 3 s survives its process being starved of the
    # CPU for 2 s on a loaded machine (at 1.5 s, a 1 s stall let the other worker take the item).
    lease_s = 3.0
    # Slow calls and judges that fail twice: three rounds of 2.5 s calls and two revisions, some 12 s
    # at least, over three lease periods.
    simulator_server.state.configure(
        simulator_server.state.config.model_copy(
            update={"latency_s": 2.5, "rules": [Rule(role="^Judge", score=40, times=14)]}
        )
    )
    await migrate(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    broker = build_broker(REDIS, held=1, redelivery_s=1)
    await broker.startup()
    workers = [
        start_worker(database_url, simulator_server, tmp_path / f"w{i}.log", lease_s=lease_s, redelivery_s=1)
        for i in range(2)
    ]
    try:
        async with short_session(sessions) as session:
            dataset = await store_dataset(
                session, f"l-{uuid.uuid4().hex[:6]}", parse_dataset(synthetic_jsonl(1).encode(), "p.jsonl")
            )
        service = BatchService(sessions, broker)
        batch = await service.create(BatchSpec(dataset.id, ["sim"], judge_model="sim", use_cache=False))
        for _ in range(3000):  # a hang guard, not a timing check
            if (await service.progress(batch.id))["status"] == "completed":
                break
            await asyncio.sleep(0.1)
        async with short_session(sessions) as session:
            items = (
                (await session.execute(select(BatchItem).where(col(BatchItem.batch_id) == batch.id)))
                .scalars()
                .all()
            )
            run_ids = [i.run_id for i in items]
            rounds = (await session.execute(select(RoundRow).where(col(RoundRow.run_id).in_(run_ids)))).all()
    finally:
        for process in workers:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=20)
        await broker.shutdown()
        await engine.dispose()
    (item,) = items
    assert item.status in VERDICTS and item.claimed_at and item.finished_at
    assert (item.finished_at - item.claimed_at).total_seconds() > 3 * lease_s  # the scenario happened
    assert item.attempts == 1  # claimed once, by one worker, for its whole life
    judge_calls = [r for r in simulator_server.state.requests if r.role.startswith("Judge")]
    assert len(judge_calls) == 7 * len(rounds)  # no round was judged twice


@pytest.mark.slow
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_with_redis_api_runs_execute_on_workers(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path, clean_redis: None
) -> None:
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [], "latency_s": 0.05}))
    await migrate(database_url)
    keys = await seed_keys(database_url)
    app = create_app(service_settings(database_url, simulator_server, broker_url=REDIS))
    options = {"model": "sim", "judge_model": "sim"}
    worker = start_worker(database_url, simulator_server, tmp_path / "worker.log")
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                waited = await client.post(
                    "/v1/runs",
                    json={"problem": PROBLEM, "options": options},
                    params={"wait": "true", "wait_s": 300},
                    headers=keys.auth(),
                )
                later = [
                    (await client.post("/v1/runs", json={"problem": PROBLEM}, headers=keys.auth())).json()
                    for _ in range(3)
                ]
                ids = [run["id"] for run in later]
                for _ in range(3000):  # a hang guard, not a timing check
                    statuses = [
                        (await client.get(f"/v1/runs/{run_id}", headers=keys.auth())).json()["status"]
                        for run_id in ids
                    ]
                    if all(status not in ("queued", "running") for status in statuses):
                        break
                    await asyncio.sleep(0.1)
            api_process = app.state.executor.worker
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    # ?wait=true answered with the finished trace of a run this API process never executed.
    assert waited.status_code == 200 and waited.json()["status"] == "accepted", waited.text
    assert all(status == "screened" for status in statuses), statuses  # the offline panel screens
    engine = create_engine(database_url)
    async with short_session(session_factory(engine)) as session:
        owners = {
            run.lease_owner
            for run in (await session.execute(select(Run).where(col(Run.id).in_(ids)))).scalars()
        }
        owners.add((await session.get(Run, waited.json()["id"])).lease_owner)  # type: ignore[union-attr]
    await engine.dispose()
    assert owners == {f"{socket.gethostname()}:{worker.pid}"} and api_process not in owners
