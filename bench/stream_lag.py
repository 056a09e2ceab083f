"""Stream lag across API processes: followers of a run on the process executing it, and on another.

Two API processes (`thinkloop serve`, PostgreSQL) share one database. --runs refinement runs are
created on A, every judge scoring 40 so each goes through all its rounds; --followers SSE
subscribers per run follow `/v1/runs/{id}/events` on A, and as many on B. A fans each event out
from memory; B's streams are woken by the event's announcement (PostgreSQL NOTIFY, delivered at
commit) and read it from the database. B's safety re-read is set to 600 s, so its figures are the
announcements' alone. Round 1 waits at the simulator's gate until every follower is connected.

Figures per side: live events received ÷ expected, and the lag from the event's stored timestamp
(taken as its row is written, just before commit) to its arrival here: p50, p95 and largest;
the CPU each API process spent.

    uv run --frozen python bench/stream_lag.py --runs 4 --followers 5
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from contextlib import ExitStack

import httpx
import psutil
import psycopg
from _common import api_key, api_server, postgres_database, sim_service_env, simulator

QUESTION = "A baker makes {n} loaves an hour for 7 hours and sells all but 9. How many are sold?"
CALLS_PER_ROUND = 8  # seven judges and the solver (an upper bound is all the gate needs)


class Follower:
    """One SSE connection: when it connected, and when each event (by seq) arrived."""

    def __init__(self, base: str, run_id: str) -> None:
        self.base, self.run_id = base, run_id
        self.connected = asyncio.Event()
        self.connected_at = 0.0
        self.arrivals: dict[int, float] = {}

    async def follow(self, client: httpx.AsyncClient) -> None:
        async with client.stream("GET", f"{self.base}/v1/runs/{self.run_id}/events") as response:
            response.raise_for_status()
            self.connected_at = time.time()
            self.connected.set()
            async for line in response.aiter_lines():
                if line.startswith("id:"):
                    self.arrivals.setdefault(int(line[3:]), time.time())


def stored(database_url: str) -> dict[tuple[str, int], float]:
    """Each event's timestamp, as stored when it was recorded."""
    with psycopg.connect(database_url.replace("+psycopg", "")) as conn:
        rows = conn.execute("SELECT run_id, seq, created_at FROM transcript_events").fetchall()
    return {(run, seq): at.timestamp() for run, seq, at in rows}


async def open_gate(sim: str, client: httpx.AsyncClient, gate: int) -> None:
    """Send the calls still missing for the gate to open (each is answered once it is open)."""
    arrived = len((await client.get(f"{sim}/_sim")).json())
    opener = {"model": "sim-1", "messages": [{"role": "user", "content": "open the gate"}]}
    calls = [client.post(f"{sim}/v1/chat/completions", json=opener) for _ in range(max(gate - arrived, 1))]
    for answer in await asyncio.gather(*calls):
        answer.raise_for_status()


async def scenario(a: str, b: str, key: str, sim: str, args: argparse.Namespace) -> list[Follower]:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with (
        httpx.AsyncClient(headers={"X-API-Key": key}, timeout=300, limits=limits) as client,
        httpx.AsyncClient(timeout=300, limits=limits) as control,
    ):
        gate = CALLS_PER_ROUND * args.runs + 1
        config = {"latency_s": args.latency, "gate": gate, "gate_timeout_s": args.hold}
        config["rules"] = [{"role": "^Judge", "score": 40}]
        (await control.put(f"{sim}/_sim", json=config)).raise_for_status()
        run_ids = []
        for n in range(args.runs):
            problem = {"question": QUESTION.format(n=12 + n)}
            body = {"problem": problem, "options": {"max_rounds": args.rounds}}
            created = await client.post(f"{a}/v1/runs", json=body)
            created.raise_for_status()
            run_ids.append(created.json()["id"])
        followers = [Follower(base, run) for run in run_ids for base in (a, b) for _ in range(args.followers)]
        tasks = [asyncio.create_task(f.follow(client)) for f in followers]
        await asyncio.wait_for(asyncio.gather(*(f.connected.wait() for f in followers)), args.hold)
        await open_gate(sim, control, gate)
        await asyncio.gather(*tasks)
        return followers


def figures(followers: list[Follower], times: dict[tuple[str, int], float]) -> dict[str, float]:
    expected = received = 0
    lags = []
    for follower in followers:
        live = {  # events stored once it was connected (not the replayed start)
            seq: at
            for (run, seq), at in times.items()
            if run == follower.run_id and at >= follower.connected_at
        }
        expected += len(live)
        received += sum(seq in follower.arrivals for seq in live)
        lags += [follower.arrivals[seq] - at for seq, at in live.items() if seq in follower.arrivals]
    lags.sort()
    return {
        "followers": len(followers),
        "expected": expected,
        "received": received,
        "p50": statistics.median(lags),
        "p95": lags[int(0.95 * (len(lags) - 1))],
        "max": lags[-1],
    }


def measure(args: argparse.Namespace) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    with ExitStack() as stack:
        database_url = stack.enter_context(postgres_database())
        sim = stack.enter_context(simulator(args.latency))
        # round 1's calls wait at the gate: the client must not give up on them
        env = sim_service_env(database_url, sim, THINKLOOP_MODELS__SIM__TIMEOUT_S=str(args.hold))
        key = api_key(database_url)
        a, a_pid = stack.enter_context(api_server(env))
        # B only follows: no re-read of its own within the benchmark, and no taking runs over.
        b, b_pid = stack.enter_context(
            api_server(env | {"THINKLOOP_SSE_REREAD_S": "600", "THINKLOOP_RUN_SWEEP_S": "600"})
        )
        processes = {"A": psutil.Process(a_pid), "B": psutil.Process(b_pid)}
        before = {name: sum(p.cpu_times()[:2]) for name, p in processes.items()}
        followers = asyncio.run(scenario(a, b, key, sim.removesuffix("/v1"), args))
        cpu = {name: sum(p.cpu_times()[:2]) - before[name] for name, p in processes.items()}
        times = stored(database_url)
    sides = {
        "A": figures([f for f in followers if f.base == a], times),
        "B": figures([f for f in followers if f.base == b], times),
    }
    return sides, cpu


def main(args: argparse.Namespace) -> str:
    sides, cpu = measure(args)
    labels = {
        "A": "the executing process A (from memory)",
        "B": "a second API process B (announced, read from the database)",
    }
    rows = [
        f"| {labels[name]} | {s['followers']:.0f} | {s['received']:.0f} ÷ {s['expected']:.0f} | "
        f"{1000 * s['p50']:.1f} | {1000 * s['p95']:.1f} | {1000 * s['max']:.0f} | {cpu[name]:.1f} |"
        for name, s in sides.items()
    ]
    ratio = sides["B"]["p50"] / sides["A"]["p50"] if sides["A"]["p50"] > 0 else float("nan")
    return "\n".join(
        [
            f"Stream lag across API processes: {args.runs} runs of {args.rounds} rounds created on A "
            f"(simulator at {1000 * args.latency:.0f} ms per call), {args.followers} followers per run "
            "on each process; B's safety re-read 600 s",
            "",
            "| followers on | followers | live events received ÷ expected | lag p50 ms | lag p95 ms | "
            "lag max ms | API CPU s |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"Median lag, B ÷ A: {ratio:.2f}",
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--followers", type=int, default=5, help="per run, on each process")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--hold", type=float, default=120.0, help="most seconds to wait for connections")
    print(main(parser.parse_args()))
