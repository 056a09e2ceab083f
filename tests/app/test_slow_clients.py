"""`thinkloop serve` against slow clients: half-sent requests (headers or body) are closed by the
server, a client trickling one byte at a time gets no extension, and a normal request is answered
meanwhile; the limits come from settings."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.simulator import SimulatorServer
from app.settings import Settings
from tests.app.conftest import free_port
from tests.app.test_durability import server_process

HANG_GUARD_S = 90.0  # far beyond the deadlines set below: only a server that never closes hits it


def _half_open(port: int, payload: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S)
    sock.sendall(payload)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed the connection (read returns EOF or a reset) before the guard."""
    try:
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.slow  # a real server process
def test_half_sent_requests_are_closed_and_a_normal_request_is_answered_meanwhile(
    simulator_server: SimulatorServer, tmp_path: Path
) -> None:
    port, log = free_port(), tmp_path / "server.log"
    limits = {"HEADER_TIMEOUT_S": "2", "BODY_TIMEOUT_S": "2", "MAX_CONNECTIONS": "2500"}
    env = {f"THINKLOOP_HTTP_{name}": value for name, value in limits.items()}
    database = f"sqlite+aiosqlite:///{tmp_path / 'slow.db'}"
    with server_process(database, simulator_server, port, log, env):
        headers_only = [
            _half_open(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ") for _ in range(1_800)
        ]
        body_short = b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        body_short += b'Content-Length: 1000\r\n\r\n{"problem": '
        half_bodies = [_half_open(port, body_short) for _ in range(100)]
        silent = [socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) for _ in range(100)]
        try:
            # a normal request while 2,000 connections hang half-sent (the count)
            assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=HANG_GUARD_S).status_code == 200
            trickler = _half_open(port, b"GET /healthz HTTP/1.1\r\n")
            trickled = _trickle_until_closed(trickler)
            assert trickled, "a client sending a header byte at a time was never cut off"
            for sock in headers_only + half_bodies + silent:
                assert _closed_by_server(sock), "a half-sent request's connection was left open"
            assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=HANG_GUARD_S).status_code == 200
        finally:
            for sock in headers_only + half_bodies + silent:
                sock.close()


def _trickle_until_closed(sock: socket.socket) -> bool:
    """Send one header byte every 0.2 s (each one resets no deadline) until the server closes the
    connection; False if it is still open at the hang guard."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + HANG_GUARD_S
    try:
        while time.monotonic() < deadline:
            sock.sendall(b"X")
            try:
                if sock.recv(4096) == b"":
                    return True
            except TimeoutError:
                continue
    except (BrokenPipeError, ConnectionResetError):
        return True
    finally:
        sock.close()
    return False


def test_serve_passes_the_limits_from_settings_to_uvicorn(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from app.cli.view import serve_announcing
    from app.limits_http import GuardedH11Protocol

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: seen.update(config=self.config))
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        database_url="sqlite+aiosqlite:///:memory:",
        http_header_timeout_s=3,
        http_body_timeout_s=7,
        http_keep_alive_s=4,
        http_max_connections=123,
        http_backlog=77,
    )
    serve_announcing(settings, "127.0.0.1", free_port(), [])
    config = seen["config"]
    assert issubclass(config.http, GuardedH11Protocol)
    assert (config.http.header_timeout_s, config.http.body_timeout_s) == (3, 7)
    assert (config.timeout_keep_alive, config.limit_concurrency, config.backlog) == (4, 123, 77)
