"""Outages mid-batch: Redis restarts under running workers; the database becomes unreachable."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import col
from taskiq import AsyncBroker

from agents.llm.models import ModelRegistry
from agents.panel import PanelFactory
from agents.simulator import SimulatorServer
from app.batches.broker import build_broker
from app.batches.repository import counts
from app.batches.runner import BatchRunner
from app.batches.service import BatchService, BatchSpec
from app.datasets.parsing import parse_dataset
from app.datasets.repository import store_dataset
from app.datasets.synthetic import synthetic_jsonl
from app.db import create_engine, migrate, session_factory, short_session
from app.main import create_app
from app.models import BatchItem, Run
from app.reporting.item_result import item_results
from tests.helpers.batches import VERDICTS, batch_runner, verdicts
from tests.helpers.processes import start_worker
from tests.helpers.service import free_port, seed_keys, service_settings
from tests.helpers.transcripts import transcript_gaps

pytestmark = [pytest.mark.both_databases, pytest.mark.slow]


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


async def _counts(sessions: async_sessionmaker[AsyncSession], batch_id: str) -> dict[str, int]:
    async with short_session(sessions) as session:
        return await counts(session, batch_id)


@pytest.mark.redis
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
    broker = build_broker(redis_server.url, held=1, redelivery_s=2)
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
        assert verdicts(await _counts(sessions, batch.id)) == {"verdict": 60}
        assert all(w.poll() is None for w in workers)  # the workers lived through it
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=60)
        await broker.shutdown()
        await engine.dispose()


class TcpProxy:
    """A loopback TCP proxy to PostgreSQL whose link can be cut: the database becomes unreachable
    to everything behind it (open connections drop, new ones are closed at once)."""

    def __init__(self, target_port: int = 5432) -> None:
        self.target_port, self.port = target_port, free_port()
        self.down = False
        self._writers: set[asyncio.StreamWriter] = set()
        self._armed: bytes | None = None
        self.reply_lost = asyncio.Event()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> TcpProxy:
        self._server = await asyncio.start_server(self._link, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        self.cut()
        self.down = False

    def cut(self) -> None:
        self.down = True
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()

    def lose_commit_reply(self, after: bytes) -> None:
        """Once: on the first connection that sends ``after`` and then COMMIT, let the COMMIT reach
        the server, swallow the server's answer and drop that connection. The transaction is
        committed and the client only sees its connection fail (a commit of unknown outcome)."""
        self._armed = after

    async def _link(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        if self.down:
            client_writer.close()
            return
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers |= {client_writer, server_writer}
        link = {"seen": False, "committing": False}
        await asyncio.gather(
            self._pump(client_reader, server_writer, link, upstream=True),
            self._pump(server_reader, client_writer, link, upstream=False),
        )

    async def _pump(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        link: dict[str, bool],
        upstream: bool,
    ) -> None:
        try:
            while data := await reader.read(65536):
                if self._armed is not None and upstream:
                    link["seen"] = link["seen"] or self._armed in data
                    link["committing"] = link["seen"] and b"COMMIT" in data
                elif self._armed is not None and link["committing"]:  # the server has committed
                    self._armed = None
                    self.reply_lost.set()
                    break  # its answer goes nowhere; closing this side ends the link
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
            self._writers.discard(writer)


async def _done_results(sessions: object, batch_id: str) -> dict[int, object]:
    async with short_session(sessions) as session:  # type: ignore[arg-type]
        query = select(BatchItem).where(
            col(BatchItem.batch_id) == batch_id, col(BatchItem.status).in_(VERDICTS)
        )
        done = (await session.execute(query)).scalars().all()
        return {int(i): r.model_dump() for i, r in (await item_results(session, done)).items()}


@dataclass
class Proxied:
    """A batch runner (and its embedded broker) that reaches PostgreSQL through ``proxy``; the test
    watches and creates batches over ``watch``, straight to the server."""

    proxy: TcpProxy
    sessions: async_sessionmaker[AsyncSession]
    watch: async_sessionmaker[AsyncSession]
    broker: AsyncBroker
    runner: BatchRunner


@contextlib.asynccontextmanager
async def behind_a_proxy(
    database_url: str, simulator_server: SimulatorServer, *, latency_s: float, **runner: Any
) -> AsyncIterator[Proxied]:
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [], "latency_s": latency_s}))
    await migrate(database_url)
    observer = create_engine(database_url)
    async with TcpProxy() as proxy, contextlib.AsyncExitStack() as stack:
        proxied = database_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
        engine = create_engine(proxied)
        stack.push_async_callback(observer.dispose)
        stack.push_async_callback(engine.dispose)
        entry = {"model": "sim-1", "base_url": simulator_server.base_url}
        factory = PanelFactory(ModelRegistry.from_sources(extra={"sim": entry}), {})
        stack.push_async_callback(factory.aclose)
        sessions = session_factory(engine)
        broker = build_broker(None, held=8, redelivery_s=600)  # embedded: nothing redelivers
        batches = await stack.enter_async_context(batch_runner(sessions, factory, proxied, **runner))
        broker.state.runner = batches
        await broker.startup()
        stack.push_async_callback(broker.shutdown)
        yield Proxied(proxy, sessions, session_factory(observer), broker, batches)


async def _sample(sessions: async_sessionmaker[AsyncSession], rows: int) -> str:
    async with short_session(sessions) as session:
        parsed = parse_dataset(synthetic_jsonl(rows).encode(), "d.jsonl")
        return (await store_dataset(session, f"d-{uuid.uuid4().hex[:6]}", parsed)).id


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_the_database_goes_away_mid_batch_and_nothing_committed_is_lost(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    limits = {"lease_s": 60, "concurrency": 4, "outage_s": 60}
    async with behind_a_proxy(database_url, simulator_server, latency_s=0.05, **limits) as world:
        dataset_id = await _sample(world.sessions, 40)
        service = BatchService(world.sessions, world.broker)
        batch = await service.create(BatchSpec(dataset_id, ["sim"], judge_model="sim", use_cache=False))
        before: dict[int, object] = {}
        for _ in range(3000):  # a hang guard, not a timing check
            counts = await _counts(world.watch, batch.id)
            if not before and verdicts(counts).get("verdict", 0) >= 8:
                before = await _done_results(world.watch, batch.id)
                world.proxy.cut()  # mid-batch: items are in flight, others wait to be claimed
                await asyncio.sleep(2.0)
                world.proxy.down = False
            if verdicts(counts) == {"verdict": 40}:
                break
            await asyncio.sleep(0.1)
        await world.runner.drain()
        after = await _done_results(world.watch, batch.id)
        async with short_session(world.watch) as session:
            query = select(col(BatchItem.run_id)).where(col(BatchItem.batch_id) == batch.id)
            run_ids = [run_id for run_id in (await session.execute(query)).scalars() if run_id]
    assert before and verdicts(counts) == {"verdict": 40}, counts
    assert {i: after[i] for i in before} == before  # what was committed before the outage is intact
    # Every run's transcript has all its events: none lost with the writes the cut failed.
    assert not await transcript_gaps(database_url, run_ids)


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_claim_committed_while_its_answer_was_lost_is_still_run(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    """The item's claim reaches the database and commits, and the connection drops before the
    worker hears so: its retry finds the item running under its own name. The item is run (once,
    as one attempt, with one run), not left 'running' until the lease lapses."""
    limits = {"lease_s": 600, "concurrency": 2, "outage_s": 60}
    async with behind_a_proxy(database_url, simulator_server, latency_s=0.01, **limits) as world:
        dataset_id = await _sample(world.watch, 1)
        world.proxy.lose_commit_reply(after=b"UPDATE batch_items")  # the first claim's
        batch = await BatchService(world.watch, world.broker).create(
            BatchSpec(dataset_id, ["sim"], judge_model="sim", use_cache=False)
        )
        for _ in range(3000):  # a hang guard, not a timing check
            if world.proxy.reply_lost.is_set():
                break
            await asyncio.sleep(0.1)
        await world.runner.drain()  # the item's processing, claim retried, has ended
        async with short_session(world.watch) as session:
            counts = await _counts(world.watch, batch.id)
            query = select(col(BatchItem.attempts)).where(col(BatchItem.batch_id) == batch.id)
            attempts = list((await session.execute(query)).scalars())
            runs = (await session.execute(select(col(Run.id)).where(col(Run.batch_id) == batch.id))).all()
    assert world.proxy.reply_lost.is_set()  # the claim's answer was lost
    assert verdicts(counts) == {"verdict": 1}, counts
    assert attempts == [1] and len(runs) == 1


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_the_api_answers_503_while_the_database_is_away(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    await migrate(database_url)
    keys = await seed_keys(database_url)
    async with TcpProxy() as proxy:
        proxied = database_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
        app = create_app(service_settings(proxied, simulator_server))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                assert (await client.get("/v1/runs", headers=keys.auth())).status_code == 200
                proxy.cut()
                away = await client.get("/v1/runs", headers=keys.auth())
                proxy.down = False
                back = await client.get("/v1/runs", headers=keys.auth())
    assert away.status_code == 503 and away.headers["retry-after"] == "5"
    assert away.headers["content-type"] == "application/problem+json"
    assert away.json()["type"].endswith("/database-unavailable")
    assert back.status_code == 200
