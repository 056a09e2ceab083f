"""The service under test: its settings, keys, the app in-process or on a live server, free ports, and the
problem-details check."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from agents.simulator import SimulatorServer
from app.db import migrate
from app.main import create_app
from app.projects.keys import create_key
from app.settings import Settings
from tests.helpers.workers import redis_url

REDIS = redis_url("main")  # this xdist worker's own database (tests/workers.py)


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
    return Settings(_env_file=None, **(values | overrides))


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


def assert_problem(response: object, status: int) -> dict[str, Any]:
    import httpx

    assert isinstance(response, httpx.Response)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["title"] and body["detail"] and body["type"]
    return body


PROBLEM_JSON = "application/problem+json"
