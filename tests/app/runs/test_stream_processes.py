"""A run's stream on an API process that does not execute it: woken by announcements, not polling."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse

from agents.simulator import Rule, SimConfig, SimulatorServer
from app.db import migrate
from tests.helpers.problems import PROBLEM
from tests.helpers.processes import within
from tests.helpers.service import free_port, seed_keys

pytestmark = [pytest.mark.both_databases, pytest.mark.slow, pytest.mark.postgres]
GATE = 40  # more calls than round 1 makes: its calls wait until the test sends the rest


@contextmanager
def api_processes(
    database_url: str, simulator: SimulatorServer, log: Path, *settings: dict[str, str]
) -> Iterator[list[str]]:
    """`python -m app serve` child processes (one per settings dict, started together), with the
    simulator as model 'sim'; yields their URLs once all of them answer."""
    ports = [free_port() for _ in settings]
    processes = []
    with log.open("ab") as sink:
        for port, overrides in zip(ports, settings, strict=True):
            env = os.environ | {
                "THINKLOOP_DATABASE_URL": database_url,
                "THINKLOOP_MODELS__SIM__MODEL": "sim-1",
                "THINKLOOP_MODELS__SIM__BASE_URL": simulator.base_url,
                "THINKLOOP_MODELS__SIM__TIMEOUT_S": "120",  # round 1's calls wait at the gate
                **{f"THINKLOOP_{name.upper()}": value for name, value in overrides.items()},
            }
            command = [sys.executable, "-m", "app", "serve", "--port", str(port)]
            processes.append(subprocess.Popen(command, env=env, stdout=sink, stderr=sink))
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        deadline = time.monotonic() + 120  # imports alone take seconds on a busy machine
        while not all(_healthy(url) for url in urls):
            alive = all(process.poll() is None for process in processes)
            assert alive and time.monotonic() < deadline, f"a server did not start; see {log}"
            time.sleep(0.1)
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


async def follow(
    url: str, run_id: str, headers: dict[str, str], waiting: asyncio.Event | None = None
) -> list[dict[str, Any]]:
    """The run's transcript over SSE, to its end; ``waiting`` is set once round 1 has started."""
    events: list[dict[str, Any]] = []
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as client,
        aconnect_sse(client, "GET", f"{url}/v1/runs/{run_id}/events", headers=headers) as source,
    ):
        async for sse in source.aiter_sse():
            if not sse.data:  # a heartbeat
                continue
            events.append({"id": int(sse.id), "event": sse.event, **json.loads(sse.data)})
            if waiting is not None and sse.event == "round.started":
                waiting.set()
    return events


async def open_gate(simulator: SimulatorServer) -> None:
    """Send the calls that open the simulator's gate (each is answered once it is open)."""
    body = {"model": "sim-1", "messages": [{"role": "user", "content": "open the gate"}]}
    missing = max(GATE - len(simulator.state.requests), 1)
    async with httpx.AsyncClient(timeout=120) as client:
        url = f"{simulator.base_url}/chat/completions"
        await asyncio.gather(*(client.post(url, json=body) for _ in range(missing)))


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_stream_on_another_process_gets_every_event_through_announcements(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path
) -> None:
    rules = [Rule(role="^Judge", score=40)]  # round 1 fails: a revision and round 2 follow
    simulator_server.state.configure(SimConfig(rules=rules, gate=GATE, gate_timeout_s=120))
    await migrate(database_url)
    keys = await seed_keys(database_url)
    headers, log = keys.auth(), tmp_path / "servers.log"
    body = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": "sim", "max_rounds": 2}}
    # B re-reads the database on its own only after 600 s, and never takes the run over.
    quiet = {"sse_reread_s": "600", "run_sweep_s": "600"}
    with api_processes(database_url, simulator_server, log, {}, quiet) as (a, b):
        async with httpx.AsyncClient(timeout=30) as client:
            created = await client.post(f"{a}/v1/runs", json=body, headers=headers)
        assert created.status_code == 202
        run_id = created.json()["id"]
        waiting = asyncio.Event()
        on_b = asyncio.create_task(follow(b, run_id, headers, waiting))
        await within(waiting.wait(), f"B's stream never got round 1's start: announced? see {log}")
        # B's stream has read what was stored and waits; everything else is stored from now on.
        await open_gate(simulator_server)
        transcript = await within(on_b, "B's stream was not woken: is every stored event announced?")
        replay = await follow(a, run_id, headers)
    kinds = [e["event"] for e in transcript]
    assert [e["id"] for e in transcript] == list(range(1, len(transcript) + 1))
    assert kinds[-1] == "run.finished" and "revision.proposed" in kinds
    assert "run.resumed" not in kinds  # A executed the run throughout; B only followed it
    assert transcript == replay
