"""Child processes: the server and batch workers as a user starts them, and bounded waits for them."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import httpx

from agents.simulator import SimulatorServer
from app.batches.broker import build_broker
from app.batches.repository import counts
from app.batches.service import BatchService, BatchSpec
from app.datasets.parsing import parse_dataset
from app.datasets.repository import store_dataset
from app.datasets.synthetic import synthetic_jsonl
from app.db import create_engine, migrate, session_factory, short_session
from tests.helpers.service import REDIS

# A killed process's runs are taken over once their lease lapses: short leases keep tests quick.
SHORT_LEASES = {"THINKLOOP_RUN_LEASE_S": "3", "THINKLOOP_RUN_HEARTBEAT_S": "1", "THINKLOOP_RUN_SWEEP_S": "1"}


@contextmanager
def server_process(
    database_url: str,
    simulator: SimulatorServer,
    port: int,
    log: Path,
    extra_env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m app serve` as a child process, with the simulator as model 'sim'."""
    env = (
        os.environ
        | {
            "THINKLOOP_DATABASE_URL": database_url,
            "THINKLOOP_MODELS__SIM__MODEL": "sim-1",
            "THINKLOOP_MODELS__SIM__BASE_URL": simulator.base_url,
            "THINKLOOP_MODELS__SIM__MAX_RETRIES": "0",
            "THINKLOOP_WEBHOOK_ALLOW_HOSTS": '["127.0.0.1:*"]',  # the tests' receivers
        }
        | (extra_env or {})
    )
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port)], env=env, stdout=sink, stderr=sink
        )
    try:
        wait_until(lambda: _healthy(port), 180, f"server did not start; see {log}")
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=20)


def wait_until(check: Callable[[], bool], seconds: float, message: str) -> None:
    """Poll ``check`` until it holds; fail with ``message`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(message)


async def within(waiting: Awaitable[T], failure: str) -> T:
    """``waiting``'s result; a generous bound turns a hang into a failure that says what hung."""
    try:
        return await asyncio.wait_for(waiting, 120)
    except TimeoutError:
        raise AssertionError(failure) from None


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


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


T = TypeVar("T")
