"""Batches on the Redis Streams broker with two `thinkloop batch worker` processes, one killed."""

from __future__ import annotations

import asyncio
import socket
import uuid
from pathlib import Path

import httpx
import pytest
from sqlmodel import col, select

from agents.simulator import Rule, SimulatorServer
from app.batches.broker import build_broker
from app.batches.service import BatchService, BatchSpec
from app.datasets.parsing import parse_dataset
from app.datasets.repository import store_dataset
from app.datasets.synthetic import synthetic_jsonl
from app.db import create_engine, migrate, session_factory, short_session
from app.main import create_app
from app.models import BatchItem, RoundRow, Run
from tests.helpers.batches import VERDICTS, verdicts
from tests.helpers.problems import PROBLEM
from tests.helpers.processes import run_batch, start_worker
from tests.helpers.service import REDIS, seed_keys, service_settings

# Worker processes: slow, but for the lease-renewal test, the inner loop's only test of a lease outlived
# while its item runs (scripts/broken_builds.py: without it, the inner loop missed a broken renewal).
pytestmark = [pytest.mark.both_databases, pytest.mark.redis]


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
