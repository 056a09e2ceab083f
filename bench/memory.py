"""Memory while a big batch runs: the RSS of the API and of a worker must not grow with the items.

Two setups over one PostgreSQL database each: the API running items itself on its embedded broker,
and the API with one Redis worker. Each runs a small batch first, then a big one (--items, 10,000
by default) on the same processes. Items are one round of the offline rubric panel (no LLM
endpoint is needed, so items are quick and the figures are about thinkloop, not the simulator).

The figures: each process's RSS when idle, its peak during the small batch, its peak during the
big one, and the growth from 10 % of the big batch's items done to all of them, per 1,000 items.
If memory grew with items, the big batch's peak would stand well above the small one's.

    uv run --frozen python bench/memory.py --items 10000 --small 1000
"""

from __future__ import annotations

import argparse
import os
import time
from contextlib import ExitStack
from typing import Any

import httpx
from _common import RssSampler, api_key, api_server, mib, postgres_database, process

from app.datasets.synthetic import synthetic_jsonl

REDIS = "redis://127.0.0.1:6379/13"


def run_batch(client: httpx.Client, sampler: RssSampler, problems: int, seed: int) -> dict[str, Any]:
    """Upload ``problems`` synthetic problems, run them as one batch, and sample memory as it goes:
    returns each process's peak, and its RSS at 10 % and at 100 % of the items done."""
    body = synthetic_jsonl(problems, seed=seed).encode()
    headers = {"content-type": "application/x-ndjson"}
    dataset = client.post(
        "/v1/datasets", params={"name": f"synth-{seed}.jsonl"}, content=body, headers=headers
    )
    dataset.raise_for_status()
    spec = {
        "dataset_id": dataset.json()["id"],
        "models": ["rubric"],
        "judge_model": "rubric",
        "max_rounds": 1,
    }
    sampler.peak = dict.fromkeys(sampler.peak, 0)
    start = time.perf_counter()
    created = client.post("/v1/batches", json=spec)
    created.raise_for_status()
    batch_id = created.json()["id"]
    at_tenth: dict[str, int] | None = None
    while True:
        progress = client.get(f"/v1/batches/{batch_id}").json()["progress"]
        rss = sampler.now()
        if at_tenth is None and progress["finished"] >= problems / 10:
            at_tenth = rss
        if progress["status"] not in ("queued", "running"):
            break
        time.sleep(0.5)
    ended = progress["finished"] - progress["items"].get("error", 0) - progress["items"].get("cancelled", 0)
    if progress["status"] != "completed" or ended != problems:  # each with a verdict
        raise RuntimeError(f"batch ended {progress['status']} with {progress['items']}")
    assert at_tenth is not None
    return {"peak": dict(sampler.peak), "tenth": at_tenth, "end": rss, "seconds": time.perf_counter() - start}


def measure(setup: str, args: argparse.Namespace) -> list[str]:
    with postgres_database() as database_url, ExitStack() as stack:
        env = dict(os.environ) | {
            "THINKLOOP_DATABASE_URL": database_url,
            "THINKLOOP_LOG_LEVEL": "WARNING",
            "THINKLOOP_BATCH_CONCURRENCY": str(args.concurrency),
        }
        key = api_key(database_url)
        pids: dict[str, int] = {}
        if setup == "redis":
            import redis

            redis.Redis.from_url(REDIS).flushdb()
            env["THINKLOOP_BROKER_URL"] = REDIS
            pids["worker"] = stack.enter_context(process(["worker"], env)).pid
        url, pids["API"] = stack.enter_context(api_server(env))
        client = stack.enter_context(httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=120))
        time.sleep(1.0)
        sampler = stack.enter_context(RssSampler(pids))
        idle = sampler.now()
        small = run_batch(client, sampler, args.small, seed=1)
        big = run_batch(client, sampler, args.items, seed=2)
    label = "API, embedded broker" if setup == "embedded" else "API with a Redis worker"
    rows = []
    for name in pids:
        growth = (big["end"][name] - big["tenth"][name]) / (0.9 * args.items / 1000)
        rows.append(
            f"| {label}: {name} | {mib(idle[name])} | {mib(small['peak'][name])} | "
            f"{mib(big['peak'][name])} | {big['peak'][name] / small['peak'][name]:.2f} | "
            f"{growth / 2**10:+.0f} | {args.items / big['seconds'] * 60:.0f} |"
        )
    return rows


def main(args: argparse.Namespace) -> str:
    lines = [
        f"Memory (RSS, MiB) with a {args.small:,}-item batch, then a {args.items:,}-item batch, on the "
        f"same processes; items are one round of the offline panel, {args.concurrency} in flight",
        "",
        f"| process | idle | peak, {args.small:,} items | peak, {args.items:,} items | "
        "big ÷ small peak | growth KiB per 1,000 items (10 % → 100 % done) | items/min |",
        "|---|---|---|---|---|---|---|",
    ]
    for setup in ("embedded", "redis"):
        lines += measure(setup, args)
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--concurrency", type=int, default=8)
    print(main(parser.parse_args()))
