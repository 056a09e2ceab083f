"""Checkpoints in step with the work, on PostgreSQL: how long a run ends after its last model
reply, and what a replica's SIGKILL costs the survivor that takes its runs over.

Every judge fails every version, so each run makes all its calls: three rounds of seven judges and
the solver, and two revisions (26). Each run's question carries a tag of its own, which every
prompt of the run quotes, so the simulator (in this process) counts calls and times replies per run.

1. End lag: --runs runs on one API process; per run, from the start of its last model reply to
   its ``finished_at``.
2. Takeover: two API processes (default leases); --runs runs created on A, A SIGKILLed once half of
   their calls are made, B finishes them. Figures: calls repeated beyond a run's 26 (total, per run
   largest), the time from the kill until B has resumed every run A held, and until all have ended.

    uv run --frozen python bench/takeover.py --runs 20
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime

import httpx
import psycopg
from _common import api_key, api_server, postgres_database, sim_service_env

from agents.simulator import Rule, SimConfig, SimulatorServer
from agents.simulator.replies import all_text
from agents.simulator.server import LoggedRequest

QUESTION = (
    "A baker makes {n} loaves an hour for 7 hours and sells all but 9. How many are sold? [tag-{n:03d}]"
)
CALLS = 26  # three rounds of seven judges and the solver, and two revisions
STEP_CALLS = 8  # the largest step: seven judges and the solver
# Before checkpoints were stored in step (20 runs, one of two processes killed): issue 51's audit,
# and this script on the project's 2-core machine.
OLD_CALLS = "+319 and +329 of 520 (the audit); 230 of 520, per run largest 26 (this script)"
OLD_LAG = "3-32 s (the audit); p50 4.49 s, largest 8.48 s (this script)"


class Replies:
    """When each call's answer began (wall clock), kept beside the simulator's own log."""

    def __init__(self, simulator: SimulatorServer) -> None:
        self.at: dict[int, float] = {}
        state, answer = simulator.state, simulator.state.answer

        def timed(entry: LoggedRequest, status: int) -> None:
            self.at[entry.id] = time.time()
            answer(entry, status)

        state.answer = timed  # type: ignore[method-assign]
        self.state = state

    def per_run(self, count: int) -> list[list[LoggedRequest]]:
        """Each run's calls, by its tag."""
        texts = [(request, all_text(request.body)) for request in list(self.state.requests)]
        return [[request for request, text in texts if f"[tag-{n:03d}]" in text] for n in range(count)]


def create(base: str, key: str, n: int) -> str:
    problem = {"question": QUESTION.format(n=n), "solution": f"{7 * n} - 9 = {7 * n - 9}"}
    body = {"problem": problem, "options": {"max_rounds": 3}}
    response = httpx.post(
        f"{base}/v1/runs", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )
    response.raise_for_status()
    run_id: str = response.json()["id"]
    return run_id


def rows(database_url: str, query: str, run_ids: list[str]) -> list[tuple[object, ...]]:
    with psycopg.connect(database_url.replace("+psycopg", "")) as connection:
        return connection.execute(query, (run_ids,)).fetchall()


RESUMED = (
    "SELECT run_id, max(created_at) FROM transcript_events"
    " WHERE type = 'run.resumed' AND run_id = ANY(%s) GROUP BY run_id"
)


def finished(database_url: str, run_ids: list[str]) -> dict[str, datetime]:
    """The end time of each run that has ended."""
    query = "SELECT id, finished_at FROM runs WHERE id = ANY(%s) AND finished_at IS NOT NULL"
    return {str(run_id): at for run_id, at in rows(database_url, query, run_ids) if isinstance(at, datetime)}


def wait(check: Callable[[], bool], what: str, seconds: float = 900) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {seconds:.0f} s")
        time.sleep(0.05)


@contextmanager
def service(database_url: str, simulator: SimulatorServer, **extra: str) -> Iterator[tuple[str, int]]:
    with api_server(sim_service_env(database_url, simulator.base_url, **extra)) as served:
        yield served


def end_lag(runs: int, simulator: SimulatorServer, replies: Replies) -> None:
    with postgres_database() as database_url:
        key = api_key(database_url)
        with service(database_url, simulator) as (base, _):
            ids = [create(base, key, n) for n in range(runs)]
            wait(lambda: len(finished(database_url, ids)) == runs, "runs did not end")
        ended = finished(database_url, ids)
    lags = []
    for n, calls in enumerate(replies.per_run(runs)):
        last = max(replies.at[call.id] for call in calls)
        lags.append(ended[ids[n]].timestamp() - last)
    p50, largest = statistics.median(lags), max(lags)
    print(f"end lag, {runs} runs on one process: p50 {p50:.2f} s, largest {largest:.2f} s; before: {OLD_LAG}")


def takeover(runs: int, simulator: SimulatorServer, replies: Replies) -> None:
    with postgres_database() as database_url:
        key = api_key(database_url)
        with ExitStack() as stack:
            stack.enter_context(service(database_url, simulator))
            base, pid = stack.enter_context(service(database_url, simulator))
            ids = [create(base, key, n) for n in range(runs)]
            wait(lambda: sum(map(len, replies.per_run(runs))) >= runs * CALLS // 2, "no progress")
            killed = time.time()
            os.kill(pid, signal.SIGKILL)
            wait(lambda: len(finished(database_url, ids)) == runs, "runs not taken over")
        resumed = [at.timestamp() for _, at in rows(database_url, RESUMED, ids) if isinstance(at, datetime)]
        ended = max(at.timestamp() for at in finished(database_url, ids).values())
    extra = [len(calls) - CALLS for calls in replies.per_run(runs)]
    print(
        f"takeover of {len(resumed)} runs: every run resumed {max(resumed) - killed:.1f} s after the kill, "
        f"all ended after {ended - killed:.1f} s"
    )
    print(
        f"calls repeated: {sum(extra)} of {runs * CALLS} (per run largest {max(extra)}, bound {STEP_CALLS}); "
        f"before: {OLD_CALLS}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per simulated call")
    args = parser.parse_args()
    # The simulator reads requests that a killed process left half sent: not the benchmark's errors.
    logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
    for phase in (end_lag, takeover):
        config = SimConfig(latency_s=args.latency, rules=[Rule(role="^Judge", score=30)])
        with SimulatorServer(config).running() as simulator:
            phase(args.runs, simulator, Replies(simulator))


if __name__ == "__main__":
    main()
