"""A service killed with SIGKILL mid-run resumes the run at restart; every round is recorded once."""

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
from app.models import JudgementRow, RevisionRow, RoundRow, TranscriptEvent
from tests.helpers.problems import PROBLEM
from tests.helpers.processes import SHORT_LEASES, server_process, wait_until
from tests.helpers.service import free_port, seed_keys

pytestmark = [pytest.mark.both_databases, pytest.mark.slow]  # processes killed with SIGKILL


async def stored(database_url: str, run_id: str) -> tuple[dict[str, int], list[str]]:
    """Row counts of a run's rounds, judgements and revisions, and its transcript's event types."""
    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            counts = {}
            tables: tuple[tuple[str, Any], ...] = (
                ("rounds", RoundRow),
                ("judgements", JudgementRow),
                ("revisions", RevisionRow),
            )
            for name, model in tables:
                query = select(func.count()).select_from(model).where(model.run_id == run_id)
                counts[name] = int((await session.execute(query)).scalar_one())
            events = (
                select(col(TranscriptEvent.type))
                .where(col(TranscriptEvent.run_id) == run_id)
                .order_by(col(TranscriptEvent.seq))
            )
            kinds = list((await session.execute(events)).scalars().all())
    finally:
        await engine.dispose()
    return counts, kinds


def test_sigkill_mid_run_resumes_and_records_each_round_once(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path
) -> None:
    # Slow judges that fail twice: three rounds and two revisions, several seconds in all.
    config = simulator_server.state.config
    simulator_server.state.configure(
        config.model_copy(update={"latency_s": 0.4, "rules": [Rule(role="^Judge", score=40, times=14)]})
    )
    asyncio.run(migrate(database_url))
    keys = asyncio.run(seed_keys(database_url))
    port, log = free_port(), tmp_path / "server.log"
    base, headers = f"http://127.0.0.1:{port}", keys.auth()
    body = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": "sim", "max_rounds": 3}}

    def trace() -> dict[str, Any]:
        data: dict[str, Any] = httpx.get(f"{base}/v1/runs/{run_id}", headers=headers).json()
        return data

    try:
        with server_process(database_url, simulator_server, port, log, SHORT_LEASES) as first:
            run_id = httpx.post(f"{base}/v1/runs", json=body, headers=headers).json()["id"]
            wait_until(lambda: len(trace()["rounds"]) >= 1, 120, "round 1 was never recorded")
            first.send_signal(signal.SIGKILL)  # no chance to clean up: the run stays 'running'
            first.wait(timeout=10)
        with server_process(database_url, simulator_server, port, log, SHORT_LEASES):
            wait_until(lambda: trace()["status"] not in ("queued", "running"), 180, "the run did not finish")
            final = trace()
    finally:
        simulator_server.state.configure(config.model_copy(update={"latency_s": 0.0, "rules": []}))

    assert final["status"] in {"accepted", "exhausted"}
    numbers = [r["round"] for r in final["rounds"]]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 2
    assert all(len(r["verdicts"]) == 7 for r in final["rounds"])
    counts, kinds = asyncio.run(stored(database_url, run_id))
    assert counts == {"rounds": len(numbers), "judgements": 7 * len(numbers), "revisions": len(numbers) - 1}
    assert "run.resumed" in kinds and kinds.count("run.finished") == 1 and kinds.count("run.started") == 1
    assert kinds.count("round.scored") == len(numbers)
