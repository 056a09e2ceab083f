"""Batches at scale: 10,000 items on PostgreSQL with two Redis workers, against the simulator.

200 problems × 5 models under test × 10 repeats = 10,000 items, each a loop of judged rounds (seven
judges and the solver on the judge endpoint, at once) and revisions (one call to its model). The
simulator answers every call after ``--latency`` seconds. Each model under test allows
``--concurrency`` calls in flight (per model, shared by both workers through Redis); the judge
endpoint allows enough for every lane's round. Each worker runs ``--lanes`` items at a time.

The bound is what the stored work needs from its scarcest resource, whichever that is:

    lanes:     sum over items of (sequential steps × latency) ÷ (lanes × workers)
    endpoint:  its calls × latency ÷ its limit        (for each model under test and the judge)
    bound items per minute = 60 × items ÷ max(those seconds)

Throughput is measured from the batch's own timestamps, in steady state (the items that finish
between the first 10 % and 90 % of the finishes; a finite batch ramps up and drains). Beside it:
each worker's RSS when 1,000 items have finished and at the end (growth ≤ 10 %), and the latency of
`GET /v1/batches/{id}` polled twice a second by a client while the batch runs (p95 < 200 ms).

    uv run --frozen python bench/batch_scale.py            # the full 10,000 items (about 15 min)
    uv run --frozen python bench/batch_scale.py --problems 20 --repeats 2   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections import Counter
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

import httpx
import redis
from _common import RssSampler, api_key, api_server, mib, postgres_database, process, simulator
from sqlalchemy import select
from sqlmodel import col

from app.datasets.synthetic import synthetic_jsonl
from app.db import create_engine, session_factory, short_session
from app.models import BatchItem, JudgementRow, RevisionRow, RoundRow

REDIS = "redis://127.0.0.1:6379/12"
JUDGE = "judge"
WORKERS = 2
TARGET_THROUGHPUT = 0.95  # of the bound
TARGET_RSS_GROWTH = 0.10  # between item 1,000 and the last
TARGET_P95_MS = 200.0
ROUND_CALLS = 8  # seven judges and the solver


def models(n: int) -> list[str]:
    return [f"m{i}" for i in range(1, n + 1)]


def endpoint_limits(args: argparse.Namespace) -> dict[str, int]:
    """Calls in flight each endpoint allows: each model under test its own; the judge every lane's round."""
    return dict.fromkeys(models(args.models), args.concurrency) | {JUDGE: args.lanes * WORKERS * ROUND_CALLS}


def environment(base_url: str, database_url: str, args: argparse.Namespace) -> dict[str, str]:
    """Each model under test and the judge as its own simulator model id, so stored calls say which
    endpoint served them."""
    env = dict(os.environ) | {
        "THINKLOOP_DATABASE_URL": database_url,
        "THINKLOOP_BROKER_URL": REDIS,
        "THINKLOOP_BATCH_CONCURRENCY": str(args.lanes),
        "THINKLOOP_LOG_LEVEL": "ERROR",
    }
    for name, limit in endpoint_limits(args).items():
        prefix = f"THINKLOOP_MODELS__{name.upper()}__"
        env |= {f"{prefix}MODEL": f"sim-{name}", f"{prefix}BASE_URL": base_url}
        env[f"{prefix}MAX_CONCURRENCY"] = str(limit)
    return env


def run_batch(client: httpx.Client, sampler: RssSampler, args: argparse.Namespace) -> dict[str, Any]:
    """Upload the problems, create the batch, and watch it: each poll's latency, and the workers'
    RSS once 1,000 items (or a tenth, for a small run) have finished and at the end."""
    body = synthetic_jsonl(args.problems, seed=11).encode()
    dataset = client.post(
        "/v1/datasets",
        params={"name": "scale.jsonl"},
        content=body,
        headers={"content-type": "application/x-ndjson"},
    )
    dataset.raise_for_status()
    spec = {
        "dataset_id": dataset.json()["id"],
        "models": models(args.models),
        "judge_model": JUDGE,
        "repeats": args.repeats,
        "use_cache": False,
    }
    cpu_start = sampler.cpu()
    created = client.post("/v1/batches", json=spec)
    created.raise_for_status()
    batch_id = created.json()["id"]
    items = args.problems * args.models * args.repeats
    early_mark = min(1000, items // 10)
    early: dict[str, int] | None = None
    polls: list[float] = []
    while True:
        started = time.perf_counter()
        response = client.get(f"/v1/batches/{batch_id}")
        polls.append(1000 * (time.perf_counter() - started))
        response.raise_for_status()
        progress = response.json()["progress"]
        rss = sampler.now()
        if early is None and progress["finished"] >= early_mark:
            early = rss
        if progress["status"] not in ("queued", "running"):
            break
        time.sleep(0.5)
    cpu_end = sampler.cpu()
    if progress["status"] != "completed":
        raise RuntimeError(f"batch ended {progress['status']} with {progress['items']}")
    assert early is not None
    cpu = {name: cpu_end[name] - cpu_start[name] for name in cpu_end}
    return {"id": batch_id, "items": items, "early_mark": early_mark, "early": early, "end": rss} | {
        "polls": polls,
        "cpu": cpu,
    }


async def stored_work(database_url: str, batch_id: str) -> dict[str, Any]:
    """From the stored rows: finish times, sequential steps, and calls per endpoint."""
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            in_batch = select(col(BatchItem.run_id)).where(col(BatchItem.batch_id) == batch_id)
            finishes = select(col(BatchItem.finished_at)).where(col(BatchItem.batch_id) == batch_id)
            times = [_utc(t) for t in (await session.execute(finishes)).scalars().all() if t is not None]
            rounds = select(col(RoundRow.run_id), col(RoundRow.solver))
            rounds = rounds.where(col(RoundRow.run_id).in_(in_batch))
            round_rows = (await session.execute(rounds)).all()
            verdicts = select(col(JudgementRow.model)).where(col(JudgementRow.run_id).in_(in_batch))
            revisions = select(col(RevisionRow.model)).where(col(RevisionRow.run_id).in_(in_batch))
            calls = Counter((await session.execute(verdicts)).scalars().all())
            calls.update((await session.execute(revisions)).scalars().all())
    finally:
        await engine.dispose()
    calls.update(str((solver or {}).get("model") or f"sim-{JUDGE}") for _, solver in round_rows if solver)
    per_run = Counter(run_id for run_id, _ in round_rows)
    steps = sum(2 * r - 1 for r in per_run.values())  # every round but the last was revised
    return {"times": sorted(times), "steps": steps, "calls": calls}


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def steady_rate(times: list[datetime]) -> float:
    """Items per minute between the 10th and the 90th percentile of the finish times."""
    first, last = len(times) // 10, len(times) * 9 // 10
    return 60 * (last - first) / (times[last] - times[first]).total_seconds()


def bound_per_minute(work: dict[str, Any], items: int, args: argparse.Namespace) -> tuple[float, str]:
    """The bound, and the resource that sets it."""
    needs = {"lanes": work["steps"] * args.latency / (args.lanes * WORKERS)}
    for name, limit in endpoint_limits(args).items():
        needs[f"endpoint {name}"] = work["calls"].get(f"sim-{name}", 0) * args.latency / limit
    scarcest = max(needs, key=lambda name: needs[name])
    return 60 * items / needs[scarcest], scarcest


def main(args: argparse.Namespace) -> str:
    with ExitStack() as stack:
        base_url = stack.enter_context(simulator(args.latency))
        database_url = stack.enter_context(postgres_database())
        env = environment(base_url, database_url, args)
        key = api_key(database_url)
        redis.Redis.from_url(REDIS).flushdb()
        pids = {f"worker {i + 1}": stack.enter_context(process(["worker"], env)).pid for i in range(WORKERS)}
        url, _ = stack.enter_context(api_server(env))
        client = stack.enter_context(httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=120))
        sampler = stack.enter_context(RssSampler(pids, every_s=1.0))
        watched = run_batch(client, sampler, args)
        work = asyncio.run(stored_work(database_url, watched["id"]))
        redis.Redis.from_url(REDIS).flushdb()
    items = watched["items"]
    bound, scarcest = bound_per_minute(work, items, args)
    steady = steady_rate(work["times"])
    polls = sorted(watched["polls"])
    p95 = polls[min(len(polls) - 1, int(0.95 * len(polls)))]
    lines = [
        f"Batch at scale: {args.problems} problems × {args.models} models × {args.repeats} repeats = "
        f"{items:,} items on PostgreSQL with {WORKERS} Redis workers ({args.lanes} lanes each), "
        f"simulator at {args.latency:g} s per call, {args.concurrency} calls in flight per model",
        "",
        "| figure | measured | target |",
        "|---|---|---|",
        f"| steady throughput ÷ bound ({steady:.0f} ÷ {bound:.0f} items/min; bound set by {scarcest}) "
        f"| {steady / bound:.2f} | ≥ {TARGET_THROUGHPUT:.2f} |",
    ]
    for name in pids:
        at_mark, at_end = watched["early"][name], watched["end"][name]
        lines.append(
            f"| {name}: RSS growth, item {watched['early_mark']:,} → {items:,} ({mib(at_mark)} → "
            f"{mib(at_end)} MiB) | {at_end / at_mark - 1:+.1%} | ≤ {TARGET_RSS_GROWTH:+.0%} |"
        )
    calls = sum(work["calls"].values())
    cpu = sum(watched["cpu"].values())
    lines.append(
        f"| workers' CPU (user + sys) per item ({cpu:.0f} CPU s for {items:,} items, {calls:,} model calls; "
        f"{1000 * cpu / calls:.1f} ms per call) | {1000 * cpu / items:.0f} ms | — |"
    )
    # What the workers alone would need to keep up with the bound at the CPU an item cost them here
    # (the simulator, the API and PostgreSQL need more): a bound above the machine's cores cannot
    # be reached on it, whatever the code's other costs.
    cores = bound / 60 * cpu / items
    lines.append(
        f"| worker cores the bound needs at that CPU per item ({bound:.0f} items/min × "
        f"{cpu / items:.2f} CPU s; this machine has {os.cpu_count()}) | {cores:.1f} | — |"
    )
    lines.append(
        f"| `GET /v1/batches/{{id}}` p95 while it runs ({len(polls)} polls, median "
        f"{statistics.median(polls):.0f} ms) | {p95:.0f} ms | < {TARGET_P95_MS:.0f} ms |"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=200)
    parser.add_argument("--models", type=int, default=5, help="models under test")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--latency", type=float, default=1.0, help="simulated seconds per call")
    parser.add_argument("--concurrency", type=int, default=32, help="calls in flight per model under test")
    parser.add_argument("--lanes", type=int, default=16, help="items each worker runs at a time")
    print(main(parser.parse_args()))
