"""Streaming fan-out: many Server-Sent Events subscribers on live runs.

The API (`thinkloop serve`, its own process, PostgreSQL) runs --runs refinement runs against the
simulator, every judge scoring 40 so each run goes through all its rounds; S subscribers, spread
evenly over the runs, follow `/v1/runs/{id}/events` from this process. The runs' first judge calls
wait at the simulator's gate until every subscriber is connected; every call takes --latency.

Figures per S: deliveries made ÷ expected (each subscriber gets every event of its run exactly
once), events delivered per second, the delivery lag of live events (from the event's commit
timestamp to its arrival here: median and largest), and the API's RSS. S = runs (one subscriber
per run) is the reference row: the memory per subscriber is the peak above that row's peak.

    uv run --frozen python bench/fanout.py --subscribers 100 1000 --runs 10
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import defaultdict
from contextlib import ExitStack
from typing import Any

import httpx
import psycopg
from _common import RssSampler, api_key, api_server, mib, postgres_database, sim_service_env, simulator

QUESTION = "A baker makes {n} loaves an hour for 7 hours and sells all but 9. How many are sold?"


class Subscriber:
    """One SSE connection: when it connected, and when each event (by seq) arrived."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.connected = asyncio.Event()
        self.connected_at = 0.0
        self.arrivals: dict[int, float] = {}
        self.duplicates = 0

    async def follow(self, client: httpx.AsyncClient) -> None:
        async with client.stream("GET", f"/v1/runs/{self.run_id}/events") as response:
            response.raise_for_status()
            self.connected_at = time.time()
            self.connected.set()
            async for line in response.aiter_lines():
                if line.startswith("id:"):
                    seq = int(line[3:])
                    self.duplicates += seq in self.arrivals
                    self.arrivals[seq] = time.time()


def committed(database_url: str) -> dict[tuple[str, int], float]:
    """Each event's timestamp, as stored when it was recorded."""
    with psycopg.connect(database_url.replace("+psycopg", "")) as conn:
        rows = conn.execute("SELECT run_id, seq, created_at FROM transcript_events").fetchall()
    return {(run, seq): at.timestamp() for run, seq, at in rows}


async def scenario(
    url: str, key: str, sim: str, subscribers: int, args: argparse.Namespace
) -> dict[str, Any]:
    headers = {"X-API-Key": key}
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with (
        httpx.AsyncClient(base_url=url, headers=headers, timeout=300, limits=limits) as client,
        httpx.AsyncClient() as control,
    ):
        # Round 1 of every run (seven judges and the solver: eight calls) waits at the simulator's
        # gate until this process, once every subscriber is connected, sends the one request that
        # opens it.
        gate = {"gate": 8 * args.runs + 1, "gate_timeout_s": args.hold}
        rules = {"latency_s": args.latency, "rules": [{"role": "^Judge", "score": 40}], **gate}
        (await control.put(f"{sim}/_sim", json=rules)).raise_for_status()
        run_ids = []
        for n in range(args.runs):
            body = {
                "problem": {"question": QUESTION.format(n=12 + n)},
                "options": {"max_rounds": args.rounds},
            }
            created = await client.post("/v1/runs", json=body)
            created.raise_for_status()
            run_ids.append(created.json()["id"])
        subs = [Subscriber(run_ids[i % args.runs]) for i in range(subscribers)]
        tasks = [asyncio.create_task(s.follow(client)) for s in subs]
        await asyncio.wait_for(asyncio.gather(*(s.connected.wait() for s in subs)), args.hold)
        start = time.time()
        opener = {"model": "sim-1", "messages": [{"role": "user", "content": "open the gate"}]}
        (await control.post(f"{sim}/v1/chat/completions", json=opener)).raise_for_status()
        await asyncio.gather(*tasks)
        return {"subs": subs, "start": start, "end": time.time(), "runs": run_ids}


def summarise(result: dict[str, Any], stored: dict[tuple[str, int], float]) -> dict[str, float]:
    per_run: dict[str, int] = defaultdict(int)
    for run, _ in stored:
        per_run[run] += 1
    subs: list[Subscriber] = result["subs"]
    expected = sum(per_run[s.run_id] for s in subs)
    delivered = sum(len(s.arrivals) for s in subs)
    lags = [
        arrival - stored[(s.run_id, seq)]
        for s in subs
        for seq, arrival in s.arrivals.items()
        if stored[(s.run_id, seq)] >= s.connected_at  # live events only, not the replayed start
    ]
    last = max(max(s.arrivals.values()) for s in subs)
    return {
        "events": sum(per_run[r] for r in result["runs"]),
        "expected": expected,
        "delivered": delivered,
        "duplicates": sum(s.duplicates for s in subs),
        "rate": delivered / (last - result["start"]),
        "p50": statistics.median(lags),
        "max": max(lags),
    }


def main(args: argparse.Namespace) -> str:
    measured = []
    for subscribers in [args.runs, *args.subscribers]:
        with ExitStack() as stack:
            database_url = stack.enter_context(postgres_database())
            sim = stack.enter_context(simulator(args.latency))
            env = sim_service_env(database_url, sim)
            key = api_key(database_url)
            url, pid = stack.enter_context(api_server(env))
            time.sleep(0.5)
            sampler = stack.enter_context(RssSampler({"API": pid}))
            idle = sampler.now()["API"]
            server_cpu, client_cpu = sum(sampler.processes["API"].cpu_times()[:2]), time.process_time()
            result = asyncio.run(scenario(url, key, sim.removesuffix("/v1"), subscribers, args))
            peak = sampler.peak["API"]
            cpu = sum(sampler.processes["API"].cpu_times()[:2]) - server_cpu, time.process_time() - client_cpu
            figures = summarise(result, committed(database_url))
            figures["server_cpu"], figures["client_cpu"] = cpu
        measured.append((subscribers, figures, idle, peak))
    rows = []
    _, _, _, reference_peak = measured[0]
    for subscribers, figures, idle, peak in measured:
        extra = (
            "—"
            if subscribers == args.runs
            else f"{(peak - reference_peak) / (subscribers - args.runs) / 1024:.0f}"
        )
        rows.append(
            f"| {subscribers} | {figures['events']:.0f} | {figures['delivered']:.0f} ÷ "
            f"{figures['expected']:.0f} = {figures['delivered'] / figures['expected']:.2f} | "
            f"{figures['duplicates']:.0f} | {figures['rate']:.0f} | {1000 * figures['p50']:.0f} | "
            f"{1000 * figures['max']:.0f} | {mib(idle)} → {mib(peak)} | {extra} | "
            f"{figures['server_cpu']:.1f} / {figures['client_cpu']:.1f} |"
        )
    return "\n".join(
        [
            f"Streaming fan-out: {args.runs} live runs of {args.rounds} rounds (simulator at "
            f"{1000 * args.latency:.0f} ms per call), subscribers spread evenly over them",
            "",
            "| subscribers | events | delivered ÷ expected | duplicates | deliveries/s | lag p50 ms | "
            "lag max ms | API RSS MiB (idle → peak) | KiB per added subscriber | CPU s, API / subscribers |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--subscribers", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--hold", type=float, default=120.0, help="most seconds to wait for connections")
    print(main(parser.parse_args()))
