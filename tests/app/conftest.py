"""Service fixtures: databases (SQLite always, PostgreSQL for real), the app, keys, a live server."""

from __future__ import annotations

import asyncio
import json
import queue
import shutil
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import redis
import uvicorn
from fastapi import FastAPI

from agents.llm.ratelimit import KEY_PREFIX
from agents.panel import PanelFactory
from agents.simulator import SimulatorServer
from app.batches.broker import QUEUE
from app.batches.runner import BatchRunner
from app.db import migrate
from app.main import create_app
from app.models import RUN_TERMINAL, RunStatus
from app.projects.keys import create_key
from app.runs.service import open_executor
from app.settings import Settings
from tests.workers import redis_url

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
# The outcomes that are verdicts (an item or run ending so was judged): every ending but error and cancelled.
VERDICTS = RUN_TERMINAL - {RunStatus.ERROR, RunStatus.CANCELLED}


def verdicts(counts: Mapping[str, int]) -> dict[str, int]:
    """Item counts by status with the verdicts (accepted, screened, exhausted, needs_review) taken
    together as "verdict": which verdict an item gets is the panel's business, not a batch's."""
    out: dict[str, int] = {}
    for status, n in counts.items():
        key = "verdict" if status in VERDICTS else status
        out[key] = out.get(key, 0) + n
    return out


REDIS = redis_url("main")  # this xdist worker's own database (tests/workers.py)
PROBLEM = {
    "question": (
        "An orchestra of 120 musicians takes 40 minutes to perform a symphony. How long would it take "
        "60 musicians to perform the same symphony? Let P be the number of musicians and T the playing time."
    ),
    "solution": "With half as many musicians it takes twice as long: 40 × 120 / 60 = 80 minutes.",
}


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh database on the machine's PostgreSQL server, dropped afterwards."""
    name = f"thinkloop_test_{uuid.uuid4().hex[:10]}"
    PostgresDatabases.create(name)
    yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once per session (per xdist worker); tests get copies."""
    path = tmp_path_factory.mktemp("template") / "thinkloop.db"
    asyncio.run(migrate(f"sqlite+aiosqlite:///{path}"))
    connection = sqlite3.connect(path)
    try:  # everything in the one file that is copied, nothing left behind in its WAL
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    return path


class PostgresDatabases:
    """This session's PostgreSQL databases: one template migrated to head once, and a copy of it
    per test (``CREATE DATABASE … TEMPLATE``: ~0.3 s, against ~1-3 s to migrate from zero), dropped
    by a background thread so the next test does not wait for it.

    Every test database commits without waiting for its WAL to reach the disk
    (``synchronous_commit = off``): 0.4 ms a commit against 5-6 ms on this machine, and the tests'
    runs, batches and checkpoints commit thousands of times. What a commit promises to another
    connection, and across a killed client process (the SIGKILL and outage tests), is unchanged; only
    a crash of the PostgreSQL server or of the machine could lose the last commits, and no test
    makes one."""

    def __init__(self) -> None:
        self.template = f"thinkloop_tpl_{uuid.uuid4().hex[:10]}"
        self._drops: queue.Queue[str | None] = queue.Queue()
        self._dropper = threading.Thread(target=self._drop_all, daemon=True)

    def __enter__(self) -> PostgresDatabases:
        self.create(self.template)
        asyncio.run(migrate(self.url(self.template)))  # its engine is disposed: no one stays connected
        self._dropper.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._drops.put(None)
        self._dropper.join(timeout=120)
        self.admin(f'DROP DATABASE IF EXISTS "{self.template}" WITH (FORCE)')

    @staticmethod
    def admin(statement: str) -> None:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(statement)  # type: ignore[arg-type]

    @classmethod
    def create(cls, name: str, template: str | None = None) -> None:
        """Create database ``name`` (a copy of ``template``, if given) for tests: see the class."""
        cls.admin(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        cls.admin(f'ALTER DATABASE "{name}" SET synchronous_commit = off')

    @staticmethod
    def url(name: str) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"

    def copy(self) -> str:
        """A new database with the template's migrated schema and rows."""
        name = f"thinkloop_test_{uuid.uuid4().hex[:10]}"
        self.create(name, self.template)
        return name

    def drop_later(self, name: str) -> None:
        self._drops.put(name)

    def _drop_all(self) -> None:
        while (name := self._drops.get()) is not None:
            self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[PostgresDatabases]:
    """This session's (this xdist worker's) PostgreSQL template and copies."""
    with PostgresDatabases() as databases:
        yield databases


BOTH_DATABASES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``database_url`` is SQLite, and SQLite and PostgreSQL for a test marked ``both_databases``
    (where the two behave differently: claims, leases, NOTIFY, the outbox, migrations, concurrency).
    A test that parametrizes ``database_url`` itself keeps its own choice."""
    if "database_url" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "database_url" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return
    both = metafunc.definition.get_closest_marker("both_databases") is not None
    metafunc.parametrize("database_url", BOTH_DATABASES if both else ["sqlite"], indirect=True)


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of the test's own, already migrated to head (a copy of the session's template:
    migrating again is a no-op): SQLite, or each of SQLite and PostgreSQL for a test marked
    ``both_databases`` (``pytest_generate_tests`` above). A test marked ``empty_database`` (the
    migration tests) gets an empty database instead."""
    empty = request.node.get_closest_marker("empty_database") is not None
    if request.param == "sqlite":
        path = tmp_path / "thinkloop.db"
        if not empty:
            shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite+aiosqlite:///{path}"
        return
    databases: PostgresDatabases = request.getfixturevalue("postgres_databases")
    if empty:
        name = f"thinkloop_test_{uuid.uuid4().hex[:10]}"
        databases.create(name)
    else:
        name = databases.copy()
    try:
        yield databases.url(name)
    finally:
        databases.drop_later(name)


def service_settings(database_url: str, simulator: SimulatorServer, **overrides: Any) -> Settings:
    """Settings for tests: the simulator as model 'sim', fast webhooks and streams."""
    values: dict[str, Any] = {
        "database_url": database_url,
        "models": {
            "sim": {"model": "sim-1", "base_url": simulator.base_url, "timeout_s": 5, "max_retries": 1}
        },
        "webhook_secret": "whsec-test",
        "webhook_allow_hosts": ["127.0.0.1:*", "localhost:*"],  # the tests' receivers, on any port
        "webhook_backoff_s": 0.05,
        "sse_poll_s": 0.2,
        "sse_reread_s": 0.2,
        "sse_heartbeat_s": 0.5,
        "log_level": "WARNING",
    }
    return Settings(_env_file=None, **(values | overrides))  # type: ignore[call-arg]


@asynccontextmanager
async def batch_runner(
    sessions: Any,
    factory: PanelFactory,
    database_url: str,
    *,
    lease_s: float = 60,
    concurrency: int = 4,
    outage_s: float = 300.0,
    worker: str | None = None,
) -> AsyncIterator[BatchRunner]:
    """A batch runner whose items execute as runs on the database's checkpointer (as the process
    ``worker``, when given: another machine's worker), each held by its run's lease of ``lease_s``
    (nothing renews it here: the executor is not running)."""
    settings = Settings(_env_file=None, database_url=database_url, run_lease_s=lease_s)  # type: ignore[call-arg]
    async with open_executor(settings, sessions, factory, connections=concurrency) as executor:
        if worker is not None:
            executor.worker = worker
        yield BatchRunner(executor, concurrency=concurrency, outage_s=outage_s)


@dataclass
class Keys:
    """Secrets of keys with each scope set, plus one revoked key, all of the default project; a
    read-write key of a second project ("other"), the default project's admin key, an operator
    key (the instance's), and a read-write key of the default project that may save validity
    records ("validator")."""

    read: str
    write: str
    both: str
    revoked: str
    other: str
    admin: str
    operator: str
    validator: str

    def auth(self, which: str = "both") -> dict[str, str]:
        """Headers for the named key."""
        return {"Authorization": f"Bearer {getattr(self, which)}"}


async def seed_keys(database_url: str) -> Keys:
    """Create one key per scope set and one revoked key, through a short-lived engine."""
    from app.db import create_engine, session_factory, short_session
    from app.projects.keys import create_project, revoke_key

    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            read = await create_key(session, "reader", ["read"])
            write = await create_key(session, "writer", ["write"])
            both = await create_key(session, "both", ["read", "write"])
            revoked = await create_key(session, "revoked", ["read", "write"])
            await revoke_key(session, revoked.id)
            project = await create_project(session, f"other-{uuid.uuid4().hex[:8]}")
            await session.flush()
            other = await create_key(session, "other", ["read", "write"], project.id)
            admin = await create_key(session, "admin", ["admin"])
            operator = await create_key(session, "operator", ["operator"])
            validator = await create_key(session, "validator", ["read", "write", "validate"])
    finally:
        await engine.dispose()
    secrets = (read, write, both, revoked, other, admin, operator, validator)
    return Keys(*(made.secret for made in secrets))


@dataclass
class Service:
    """The app in-process, a client to it, and keys."""

    app: FastAPI
    client: httpx.AsyncClient
    keys: Keys


@pytest.fixture
async def service(database_url: str, simulator_server: SimulatorServer) -> AsyncIterator[Service]:
    """The API with its lifespan running, reached through httpx's ASGI transport."""
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"rules": []}))
    await migrate(database_url)
    keys = await seed_keys(database_url)
    app = create_app(service_settings(database_url, simulator_server))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield Service(app, client, keys)


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """The app served by uvicorn on a loopback port, in a thread with its own event loop."""

    def __init__(self, app: FastAPI) -> None:
        self.app, self.port = app, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started and time.monotonic() < deadline and self.thread.is_alive():
            time.sleep(0.02)
        if not self.server.started:
            self.__exit__()
            pytest.fail(f"the live server on port {self.port} did not start within 20 s")
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        # A hang guard, not a timing check: a server that does not stop within it is a defect (on
        # SQLite a stop with runs in flight once waited out the 30 s busy timeout: test_sqlite_cancel).
        self.thread.join(timeout=120)
        if self.thread.is_alive():  # a server that does not stop is a defect the test must report
            pytest.fail(f"the live server on port {self.port} did not stop within 120 s of being told to")


@pytest.fixture
def clean_redis() -> Iterator[None]:
    """The batch stream and the shared provider limits, empty before and after the test (a worker
    killed by an earlier run may have left leases behind)."""
    client = redis.Redis.from_url(REDIS)

    def clear() -> None:
        client.delete(QUEUE, *client.scan_iter(f"{KEY_PREFIX}:*"))

    clear()
    yield
    clear()
    client.close()


@pytest.fixture
async def live(
    database_url: str, simulator_server: SimulatorServer
) -> AsyncIterator[tuple[LiveServer, Keys]]:
    """The API on a real uvicorn server (SSE needs one), with keys; the simulator at 50 ms a call."""
    async with live_server(database_url, simulator_server) as served:
        yield served


@asynccontextmanager
async def live_server(
    database_url: str, simulator_server: SimulatorServer, **overrides: Any
) -> AsyncIterator[tuple[LiveServer, Keys]]:
    """``live`` with settings ``overrides`` (for a test that needs other models, say)."""
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [], "latency_s": 0.05}))
    await migrate(database_url)
    keys = await seed_keys(database_url)
    settings = service_settings(database_url, simulator_server, **overrides)
    with LiveServer(create_app(settings)) as server:
        yield server, keys
    state.configure(state.config.model_copy(update={"latency_s": 0.0}))


FLAWED_SAMPLE = Path(__file__).parents[2] / "app" / "samples" / "datasets" / "flawed-problems.jsonl"


@pytest.fixture(scope="module")
def flawed_sample_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A batch of the flawed sample with a control arm (every figure has data), on the offline panel:
    its JSON report, made once per test module (the figures and the HTML report's layout)."""
    from typer.testing import CliRunner

    from app.cli import cli

    database = tmp_path_factory.mktemp("figures") / "b.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{database}")
        args = [
            "batch",
            "run",
            "--dataset",
            str(FLAWED_SAMPLE),
            "--models",
            "rubric",
            "--control",
            "--format",
            "json",
        ]
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output[result.output.index("{") :])  # type: ignore[no-any-return]
