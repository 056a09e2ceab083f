"""What the benchmarks share: the simulator, the API and workers in their own processes, a
throwaway PostgreSQL database, API keys, and a sampler of a process's memory."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import psutil
import psycopg

from app.db import create_engine, migrate, session_factory, short_session
from app.projects.keys import create_key

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def simulator(latency: float) -> Iterator[str]:
    """The OpenAI-compatible simulator in its own process; yields its base URL."""
    port = free_port()
    command = ["simulate-llm", "--port", str(port), "--latency", str(latency)]
    with process(command, dict(os.environ)):
        for _ in range(200):
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/v1"


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database, dropped afterwards."""
    name = f"thinkloop_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@contextmanager
def process(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A thinkloop command in its own process (``python -m app ...``), stopped with SIGTERM."""
    child = subprocess.Popen([sys.executable, "-m", "app", *command], env=env, stdout=subprocess.DEVNULL)
    try:
        yield child
    finally:
        child.terminate()
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def sim_service_env(database_url: str, base_url: str, **extra: str) -> dict[str, str]:
    """The environment of an API process on ``database_url`` whose model under test and judges are
    the simulator at ``base_url`` (model 'sim'), every run's judges allowed in flight at once."""
    return (
        dict(os.environ)
        | {
            "THINKLOOP_DATABASE_URL": database_url,
            "THINKLOOP_LOG_LEVEL": "WARNING",
            "THINKLOOP_MODELS__SIM__MODEL": "sim-1",
            "THINKLOOP_MODELS__SIM__BASE_URL": base_url,
            "THINKLOOP_MODELS__SIM__MAX_CONCURRENCY": "200",
            "THINKLOOP_MODEL": "sim",
            "THINKLOOP_JUDGE_MODEL": "sim",
        }
        | extra
    )


@contextmanager
def api_server(env: dict[str, str]) -> Iterator[tuple[str, int]]:
    """`thinkloop serve` on a free port; yields its base URL and pid once /healthz answers."""
    port = free_port()
    with process(["serve", "--port", str(port)], env) as child:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            if child.poll() is not None:
                raise RuntimeError(f"thinkloop serve exited with {child.returncode}")
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("thinkloop serve did not answer /healthz within a minute")
        yield url, child.pid


def api_key(database_url: str) -> str:
    """Migrate the database and return a new read+write API key."""

    async def make() -> str:
        await migrate(database_url)
        engine = create_engine(database_url)
        try:
            async with short_session(session_factory(engine)) as session:
                return (await create_key(session, "bench", ["read", "write"])).secret
        finally:
            await engine.dispose()

    return asyncio.run(make())


class RssSampler:
    """Samples the resident memory of some processes every ``every_s`` seconds, in a thread."""

    def __init__(self, pids: dict[str, int], every_s: float = 0.1) -> None:
        self.processes = {name: psutil.Process(pid) for name, pid in pids.items()}
        self.peak = dict.fromkeys(pids, 0)
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def now(self) -> dict[str, int]:
        """Each process's RSS in bytes, now (also counted towards the peak)."""
        current = {name: proc.memory_info().rss for name, proc in self.processes.items()}
        for name, rss in current.items():
            self.peak[name] = max(self.peak[name], rss)
        return current

    def cpu(self) -> dict[str, float]:
        """Each process's CPU seconds (user + sys) so far."""
        times = {name: proc.cpu_times() for name, proc in self.processes.items()}
        return {name: t.user + t.system for name, t in times.items()}

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.now()
            except psutil.NoSuchProcess:
                return

    def __enter__(self) -> RssSampler:
        self.now()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def mib(n: float) -> str:
    return f"{n / 2**20:.0f}"
