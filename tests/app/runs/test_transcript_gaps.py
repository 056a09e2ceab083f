"""A run killed mid-revision (SIGKILL, its think-aloud half streamed) and resumed by the next
process: its transcript keeps contiguous seq numbers, one event per stored round, verdict and
revision, and its trace the think-aloud of the revision that finished."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlmodel import col, func, select

from agents.simulator import Rule, SimulatorServer
from app.db import create_engine, migrate, session_factory
from app.models import RUN_UNFINISHED, TranscriptEvent
from tests.helpers.problems import PROBLEM
from tests.helpers.processes import SHORT_LEASES, server_process, wait_until
from tests.helpers.service import free_port, seed_keys
from tests.helpers.transcripts import transcript_gaps

pytestmark = [pytest.mark.both_databases, pytest.mark.slow]  # processes killed with SIGKILL

BODY = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": "sim", "max_rounds": 2}}


async def thinking_stored(database_url: str, run_id: str) -> int:
    """How many think-aloud events of the run are stored."""
    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            query = select(func.count()).where(
                col(TranscriptEvent.run_id) == run_id, col(TranscriptEvent.type) == "reviser.thinking"
            )
            return int((await session.execute(query)).scalar_one())
    finally:
        await engine.dispose()


def test_a_run_killed_mid_revision_keeps_a_transcript_without_gaps(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path
) -> None:
    state = simulator_server.state
    failing = Rule(role="^Judge", score=30)  # round 1 fails: the run revises
    # Replies stream slowly (4 characters every 50 ms): the revision thinks aloud for seconds.
    slow = state.config.model_copy(update={"rules": [failing], "chunk_chars": 4, "chunk_delay_s": 0.05})
    state.configure(slow)
    asyncio.run(migrate(database_url))
    keys = asyncio.run(seed_keys(database_url))
    port, log = free_port(), tmp_path / "server.log"
    base = f"http://127.0.0.1:{port}"

    def trace() -> dict[str, Any]:
        found: dict[str, Any] = httpx.get(f"{base}/v1/runs/{run_id}", headers=keys.auth(), timeout=30).json()
        return found

    with server_process(database_url, simulator_server, port, log, SHORT_LEASES) as first:
        response = httpx.post(f"{base}/v1/runs", json=BODY, headers=keys.auth(), timeout=30)
        run_id = response.json()["id"]
        wait_until(lambda: asyncio.run(thinking_stored(database_url, run_id)) > 0, 120, "no think-aloud")
        first.send_signal(signal.SIGKILL)  # mid-revision: part of its think-aloud is stored
        first.wait(timeout=10)
    state.configure(slow.model_copy(update={"chunk_delay_s": 0.0}))
    with server_process(database_url, simulator_server, port, log, SHORT_LEASES):
        wait_until(lambda: trace()["status"] not in RUN_UNFINISHED, 180, "the run did not finish")
        final = trace()
    assert final["status"] == "exhausted" and len(final["rounds"]) == 2
    assert not asyncio.run(transcript_gaps(database_url, [run_id]))
    # The trace's think-aloud is the finished revision's, once: not the cut-short attempt's before it.
    (revision,) = [r["revision"] for r in final["rounds"] if r.get("revision")]
    assert revision["thinking"].count("I read each reviewer's finding") == 1
