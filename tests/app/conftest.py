"""Service fixtures: databases (SQLite always, PostgreSQL for real), the app, keys, a live server."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import sqlite3
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import redis
from playwright.async_api import Browser, async_playwright

from agents.llm.ratelimit import KEY_PREFIX
from agents.simulator import SimulatorServer
from app.batches.broker import QUEUE
from app.db import create_engine, migrate, session_factory
from app.main import create_app
from tests.helpers.browser import chromium_path
from tests.helpers.problems import FLAWED_SAMPLE
from tests.helpers.service import REDIS, Keys, LiveServer, Service, live_server, seed_keys, service_settings
from tests.helpers.validity import ITEMS, RECORDABLE
from tests.helpers.webhooks import Sessions

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


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
            admin.execute(statement)

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
    return json.loads(result.output[result.output.index("{") :])


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    """One headless Chromium for the module (Playwright drives it; it downloads no browser)."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield launched
        await launched.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests write their screenshots."""
    chosen = os.environ.get("THINKLOOP_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
async def sessions(database_url: str) -> AsyncIterator[Sessions]:
    """Sessions on a migrated database (SQLite and PostgreSQL), with no sender running."""
    await migrate(database_url)
    engine = create_engine(database_url)
    try:
        yield session_factory(engine)
    finally:
        await engine.dispose()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer) -> Path:
    """A database of the test's own and the simulator as model ``sim``; the labelled items as a file."""
    values = {
        "THINKLOOP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'w.db'}",
        "THINKLOOP_MODELS__SIM__MODEL": "sim-1",
        "THINKLOOP_MODELS__SIM__BASE_URL": simulator_server.base_url,
        "THINKLOOP_MODELS__SIM__TIMEOUT_S": "30",
        "THINKLOOP_MODELS__SIM__MAX_RETRIES": "0",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("THINKLOOP_REQUIRE_WARRANT", raising=False)
    # a warrant rests on held-out problems only: the items as a held-out set, and as they are (tune)
    held = [item | {"split": "heldout"} for item in RECORDABLE]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(item) + "\n" for item in held))
    (tmp_path / "tune.jsonl").write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    return tmp_path
