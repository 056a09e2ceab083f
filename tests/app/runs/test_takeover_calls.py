"""A replica SIGKILLed while it holds 20 runs: the survivor repeats only the steps in flight, and
every run's transcript matches its rows (contiguous seq numbers, one event per round, verdict and
revision).

Calls are counted at the simulator, per run: each run's question carries a tag of its own, which
every prompt of the run quotes (the simulator's reviser keeps the question's words).
"""

from __future__ import annotations

import asyncio
import signal
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.simulator import Rule, SimulatorServer
from agents.simulator.replies import all_text
from app.db import migrate
from app.models import RUN_UNFINISHED
from tests.helpers.problems import PROBLEM
from tests.helpers.processes import SHORT_LEASES, server_process, wait_until
from tests.helpers.service import Keys, free_port, seed_keys
from tests.helpers.transcripts import resumed, transcript_gaps

pytestmark = [
    pytest.mark.both_databases,
    pytest.mark.slow,  # 21 runs of 26 calls on two API processes
    pytest.mark.postgres,
    pytest.mark.parametrize("database_url", ["postgres"], indirect=True),
]
RUNS = 20
STEP_CALLS = 8  # the largest step: seven judges and the solver
# Every judge fails every version: each run goes through all three rounds and two revisions.
FAILING = Rule(role="^Judge", score=30)


def tag(n: int) -> str:
    """The words that mark run ``n``'s prompts (no tag is a prefix of another)."""
    return f"[tag-{n:03d}]"


def body(n: int) -> dict[str, Any]:
    problem = PROBLEM | {"question": f"{PROBLEM['question']} {tag(n)}"}
    return {"problem": problem, "options": {"model": "sim", "judge_model": "sim", "max_rounds": 3}}


def create(base: str, keys: Keys, n: int) -> str:
    response = httpx.post(f"{base}/v1/runs", json=body(n), headers=keys.auth(), timeout=30)
    assert response.status_code == 202, response.text
    run_id: str = response.json()["id"]
    return run_id


def calls_by_tag(simulator: SimulatorServer, count: int) -> list[int]:
    """How many calls the simulator has seen for each of runs 0..count-1."""
    texts = [all_text(request.body) for request in list(simulator.state.requests)]
    return [sum(tag(n) in text for text in texts) for n in range(count)]


def test_a_killed_replicas_twenty_runs_repeat_only_their_steps_in_flight(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path
) -> None:
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"latency_s": 0.0, "rules": [FAILING]}))
    asyncio.run(migrate(database_url))
    keys = asyncio.run(seed_keys(database_url))
    a_port, b_port = free_port(), free_port()
    a_base, b_base = f"http://127.0.0.1:{a_port}", f"http://127.0.0.1:{b_port}"

    def status(run_id: str) -> str:
        response = httpx.get(f"{b_base}/v1/runs/{run_id}", headers=keys.auth(), timeout=30)
        found: str = response.json()["status"]
        return found

    with ExitStack() as stack:
        stack.enter_context(
            server_process(database_url, simulator_server, b_port, tmp_path / "b.log", SHORT_LEASES)
        )
        a = stack.enter_context(
            server_process(database_url, simulator_server, a_port, tmp_path / "a.log", SHORT_LEASES)
        )
        calibration = create(a_base, keys, RUNS)  # one run alone: what a whole run costs
        wait_until(
            lambda: status(calibration) not in RUN_UNFINISHED, 180, "the calibration run did not finish"
        )
        per_run = calls_by_tag(simulator_server, RUNS + 1)[RUNS]
        ids = [create(a_base, keys, n) for n in range(RUNS)]
        # A dies with the runs about half done: some between steps, most mid-step.
        wait_until(
            lambda: sum(calls_by_tag(simulator_server, RUNS)) >= RUNS * per_run // 2, 300, "no progress"
        )
        a.send_signal(signal.SIGKILL)
        a.wait(timeout=30)
        # B alone notices the lapsed leases and finishes A's runs.
        wait_until(lambda: all(status(run_id) not in RUN_UNFINISHED for run_id in ids), 600, "not taken over")
    calls = calls_by_tag(simulator_server, RUNS)
    repeated = [n - per_run for n in calls]
    assert per_run == 26  # three rounds of seven judges and the solver, and two revisions
    assert all(0 <= extra <= STEP_CALLS for extra in repeated), repeated
    assert asyncio.run(resumed(database_url, ids)) >= RUNS // 2  # most were mid-run when A died
    assert not asyncio.run(transcript_gaps(database_url, ids))
