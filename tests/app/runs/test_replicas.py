"""Two API processes on one PostgreSQL: no run is executed twice, and a killed process's runs
finish on the survivor without a restart.

The simulator counts every model call, so "executed once" is checked where it costs money: the
number of calls equals what the runs need, with nothing repeated beyond an interrupted step.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlmodel import col, select

from agents.simulator import SimulatorServer
from app.db import create_engine, migrate, session_factory
from app.models import RUN_UNFINISHED, TranscriptEvent
from tests.helpers.problems import PROBLEM
from tests.helpers.processes import SHORT_LEASES, server_process, wait_until
from tests.helpers.service import Keys, free_port, seed_keys

pytestmark = [
    pytest.mark.both_databases,
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.parametrize("database_url", ["postgres"], indirect=True),
]
BODY = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": "sim", "max_rounds": 2}}
UNFINISHED = RUN_UNFINISHED


class Replica:
    """One API process of the pair."""

    def __init__(self, database_url: str, simulator: SimulatorServer, keys: Keys, log: Path) -> None:
        self.database_url, self.simulator, self.keys, self.log = database_url, simulator, keys, log
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"

    @contextmanager
    def serving(self) -> Iterator[Any]:
        with server_process(self.database_url, self.simulator, self.port, self.log, SHORT_LEASES) as process:
            yield process

    def create(self) -> str:
        response = httpx.post(f"{self.base}/v1/runs", json=BODY, headers=self.keys.auth(), timeout=30)
        assert response.status_code == 202, response.text
        run_id: str = response.json()["id"]
        return run_id

    def status(self, run_id: str) -> str:
        response = httpx.get(f"{self.base}/v1/runs/{run_id}", headers=self.keys.auth(), timeout=30)
        status: str = response.json()["status"]
        return status


async def transcripts(database_url: str, run_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every run's transcript events (their data), in order."""
    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            query = (
                select(col(TranscriptEvent.run_id), col(TranscriptEvent.data))
                .where(col(TranscriptEvent.run_id).in_(run_ids))
                .order_by(col(TranscriptEvent.run_id), col(TranscriptEvent.seq))
            )
            found: dict[str, list[dict[str, Any]]] = {run_id: [] for run_id in run_ids}
            for run_id, data in (await session.execute(query)).all():
                found[run_id].append(data)
            return found
    finally:
        await engine.dispose()


def calls_per_run(replica: Replica, simulator: SimulatorServer) -> int:
    """How many model calls one run of BODY makes (the simulator answers deterministically)."""
    before = len(simulator.state.requests)
    run_id = replica.create()
    wait_until(lambda: replica.status(run_id) not in UNFINISHED, 180, "the calibration run did not finish")
    return len(simulator.state.requests) - before


@pytest.fixture
def pair(database_url: str, simulator_server: SimulatorServer, tmp_path: Path) -> tuple[Replica, Replica]:
    asyncio.run(migrate(database_url))
    keys = asyncio.run(seed_keys(database_url))
    return (
        Replica(database_url, simulator_server, keys, tmp_path / "a.log"),
        Replica(database_url, simulator_server, keys, tmp_path / "b.log"),
    )


def test_restarting_one_replica_never_runs_the_others_runs(
    pair: tuple[Replica, Replica], simulator_server: SimulatorServer, database_url: str
) -> None:
    a, b = pair
    with ExitStack() as stack:
        stack.enter_context(a.serving())
        b_process = stack.enter_context(b.serving())
        per_run = calls_per_run(a, simulator_server)
        simulator_server.state.held = True  # every call waits: the runs are mid-step on A
        ids = [a.create() for _ in range(20)]
        wait_until(lambda: len(simulator_server.state.requests) >= per_run, 120, "the runs did not start")
        b_process.terminate()  # a rolling restart of B while A executes the twenty runs
        b_process.wait(timeout=60)
        with b.serving():
            # B's start-up sweep has looked at the runs (they are A's: leased and renewed)
            wait_until(
                lambda: httpx.get(f"{b.base}/readyz", timeout=5).status_code == 200, 120, "B not ready"
            )
            before = len(simulator_server.state.requests)
            simulator_server.state.held = False
            wait_until(
                lambda: all(a.status(run_id) not in UNFINISHED for run_id in ids), 300, "runs did not finish"
            )
    total = len(simulator_server.state.requests) - per_run  # the calibration run's calls are not counted
    assert before >= 1
    assert total == 20 * per_run  # every run executed exactly once, by A
    events = asyncio.run(transcripts(database_url, ids))
    for run_id in ids:
        kinds = [event["type"] for event in events[run_id]]
        assert kinds.count("run.started") == 1 and "run.resumed" not in kinds, (run_id, kinds)
        assert kinds.count("run.finished") == 1


def test_a_killed_replicas_runs_finish_on_the_survivor(
    pair: tuple[Replica, Replica], simulator_server: SimulatorServer, database_url: str
) -> None:
    a, b = pair
    with b.serving() as b_process:
        with a.serving() as a_process:
            per_run = calls_per_run(a, simulator_server)
            calibration = len(simulator_server.state.requests)
            simulator_server.state.held = True
            ids = [a.create() for _ in range(6)]
            # every run has started on A (its calls are held) before A dies
            wait_until(
                lambda: all(a.status(run_id) == "running" for run_id in ids), 120, "runs did not start"
            )
            a_process.send_signal(signal.SIGKILL)  # its runs stay 'running' under leases nobody renews
            a_process.wait(timeout=30)
            interrupted = len(simulator_server.state.requests) - calibration  # calls lost with A
            simulator_server.state.held = False
        # A stays dead: B alone must notice the lapsed leases and finish A's runs.
        wait_until(
            lambda: all(b.status(run_id) not in UNFINISHED for run_id in ids), 300, "runs not taken over"
        )
    total = len(simulator_server.state.requests) - calibration
    assert 6 * per_run <= total <= 6 * per_run + interrupted  # nothing repeated beyond the interrupted step
    events = asyncio.run(transcripts(database_url, ids))
    for run_id in ids:
        kinds = [event["type"] for event in events[run_id]]
        assert kinds.count("run.started") == 1 and kinds.count("run.finished") == 1, (run_id, kinds)
        resumed = [event for event in events[run_id] if event["type"] == "run.resumed"]
        assert len(resumed) == 1 and resumed[0]["executor"].endswith(f":{b_process.pid}"), kinds


def test_a_cancel_on_one_replica_stops_the_run_on_the_other(
    pair: tuple[Replica, Replica], simulator_server: SimulatorServer, database_url: str
) -> None:
    a, b = pair
    with a.serving(), b.serving():
        simulator_server.state.held = True  # the run is mid-step on A
        body = BODY | {"webhook_url": f"http://127.0.0.1:{free_port()}/hook"}
        created = httpx.post(f"{a.base}/v1/runs", json=body, headers=a.keys.auth(), timeout=30)
        run_id = created.json()["id"]
        wait_until(lambda: len(simulator_server.state.requests) >= 7, 120, "the run did not start")
        cancelled = httpx.post(f"{b.base}/v1/runs/{run_id}/cancel", headers=b.keys.auth(), timeout=30)
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        simulator_server.state.held = False
        # A loses the run's lease at its next renewal and stops it; its end state stays B's
        wait_until(lambda: "run.lease_lost" in a.log.read_text(errors="replace"), 120, "A never let go")
        assert a.status(run_id) == "cancelled"
        deliveries = httpx.get(f"{b.base}/v1/runs/{run_id}/deliveries", headers=b.keys.auth(), timeout=30)
        (delivery,) = deliveries.json()["items"]
        assert delivery["event"] == "run.failed"
    kinds = [event["type"] for event in asyncio.run(transcripts(database_url, [run_id]))[run_id]]
    assert "run.finished" not in kinds and "round.scored" not in kinds
