"""`thinkloop serve` against slow clients: half-sent requests (headers or body) are closed by the
server, a client trickling one byte at a time gets no extension, and a normal request is answered
meanwhile; the limits come from settings. A request head over 16 KiB is a 400, in one write or many."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.simulator import SimulatorServer
from app.settings import Settings
from tests.helpers.processes import server_process
from tests.helpers.service import free_port

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
    from app.limits_http import MAX_HEAD_BYTES, GuardedH11Protocol

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: seen.update(config=self.config))
    settings = Settings(
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
    assert config.h11_max_incomplete_event_size == MAX_HEAD_BYTES == 16 * 1024


# Issue 51: a request head (request line and headers) over 16 KiB is a 400 however it is sent; h11's
# own limit only caught a head still incomplete in its buffer, so one write of 100 KB was served.
_START = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"


def head_of(size: int, close: bool = True) -> bytes:
    """A request head of exactly ``size`` bytes (its blank line included), padded by one header."""
    start = _START + (b"Connection: close\r\n" if close else b"")
    pad = size - len(start) - len(b"X-Pad: \r\n\r\n")
    return start + b"X-Pad: " + b"a" * pad + b"\r\n\r\n"


def exchange(port: int, chunks: list[bytes]) -> bytes:
    """Send ``chunks`` as separate writes (no Nagle: each leaves at once), then read everything the
    server answers until it ends the connection."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    answer = b""
    try:
        for chunk in chunks:
            sock.sendall(chunk)
        while piece := sock.recv(65536):
            answer += piece
    finally:
        sock.close()
    return answer


def statuses(answer: bytes) -> list[int]:
    """The status of every response in ``answer`` (one may follow another's body on the same line)."""
    return [int(status) for status in re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)]


@pytest.fixture(scope="module")
def served(simulator_server: SimulatorServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The port of a `thinkloop serve` process with the default HTTP limits."""
    tmp, port = tmp_path_factory.mktemp("heads"), free_port()
    with server_process(f"sqlite+aiosqlite:///{tmp / 'heads.db'}", simulator_server, port, tmp / "log"):
        yield port


@pytest.mark.slow  # a real server process
@pytest.mark.parametrize("write", [None, 1024], ids=["one write", "1 KiB writes"])
def test_a_head_over_16_kib_is_a_400_however_it_is_sent(served: int, write: int | None) -> None:
    def sent(head: bytes) -> bytes:
        chunks = [head] if write is None else [head[i : i + write] for i in range(0, len(head), write)]
        return exchange(served, chunks)

    refused = sent(head_of(100_000))
    assert statuses(refused) == [400]
    problem = json.loads(refused.split(b"\r\n\r\n", 1)[1])
    assert problem["status"] == 400 and problem["type"].endswith("/header-too-large")
    assert b"application/problem+json" in refused.split(b"\r\n\r\n", 1)[0]
    assert statuses(sent(head_of(16 * 1024))) == [200]  # the limit itself is served
    assert statuses(sent(head_of(16 * 1024 + 1))) == [400]


@pytest.mark.slow  # a real server process
def test_a_pipelined_head_over_16_kib_is_a_400_after_the_request_before_it(served: int) -> None:
    assert statuses(exchange(served, [head_of(200, close=False) + head_of(100_000)])) == [200, 400]


def test_a_head_is_measured_to_its_blank_line_as_h11_reads_it() -> None:
    from app.limits_http import head_too_large

    head = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    assert not head_too_large(head + b"x" * 1000, limit=len(head))  # a body after the head does not count
    assert head_too_large(head, limit=len(head) - 1)
    assert not head_too_large(b"GET / HTTP/1.1\nHost: x\n\n", limit=25)  # bare LF lines end a head too
    assert not head_too_large(b"a" * 100, limit=100) and head_too_large(b"a" * 101, limit=100)  # not ended
