"""Outages mid-batch: Redis restarts under running workers; the database becomes unreachable."""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sqlalchemy import func, select

from agents.simulator import SimulatorServer
from app.batches.broker import build_broker
from app.batches.repository import store_dataset
from app.batches.service import BatchService, BatchSpec
from app.datasets.parsing import parse_dataset
from app.datasets.synthetic import synthetic_jsonl
from app.db import create_engine, migrate, session_factory, short_session
from app.models import BatchItem
from tests.app.conftest import free_port
from tests.app.test_workers import start_worker

pytestmark = pytest.mark.redis


class RedisProcess:
    """A Redis server of this test's own on a free loopback port (the shared one is not touched)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL)
        client = redis.Redis(port=self.port)
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        client.close()

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)  # a crash: the stream and its groups are gone
        self.process.wait(timeout=10)


@pytest.fixture
def redis_server() -> Iterator[RedisProcess]:
    server = RedisProcess()
    server.start()
    yield server
    if server.process and server.process.poll() is None:
        server.kill()


async def _counts(sessions: object, batch_id: str) -> dict[str, int]:
    async with short_session(sessions) as session:  # type: ignore[arg-type]
        query = (
            select(BatchItem.status, func.count())
            .where(BatchItem.batch_id == batch_id)
            .group_by(BatchItem.status)
        )
        return {s: int(n) for s, n in (await session.execute(query)).all()}


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_redis_restarts_under_running_workers(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path, redis_server: RedisProcess
) -> None:
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [], "latency_s": 0.05}))
    await migrate(database_url)
    logs = [tmp_path / f"worker{i}.log" for i in range(2)]
    workers = [start_worker(database_url, simulator_server, log, ("sim",), redis_server.url) for log in logs]
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    broker = build_broker(redis_server.url, concurrency=1, redelivery_s=2)
    await broker.startup()
    try:
        async with short_session(sessions) as session:
            parsed = parse_dataset(synthetic_jsonl(30).encode(), "r.jsonl")
            dataset = await store_dataset(session, f"r-{uuid.uuid4().hex[:6]}", parsed)
        service = BatchService(sessions, broker)
        batch = await service.create(
            BatchSpec(dataset.id, ["sim", "rubric"], judge_model="sim", use_cache=False)
        )
        restarted = False
        for _ in range(3000):  # a hang guard, not a timing check
            progress = await service.progress(batch.id)
            if not restarted and progress["finished"] >= 8:
                redis_server.kill()
                await asyncio.sleep(1.0)
                redis_server.start()
                restarted = True
            if progress["status"] == "completed":
                break
            await asyncio.sleep(0.1)
        assert restarted and progress["status"] == "completed", progress
        assert await _counts(sessions, batch.id) == {"done": 60}
        assert all(w.poll() is None for w in workers)  # the workers lived through it
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=60)
        await broker.shutdown()
        await engine.dispose()
