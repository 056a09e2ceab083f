"""Orchestration overhead: CPU milliseconds per LLM call at zero simulated latency, with a profile,
and CPU per round side by side with an earlier revision of the code (``--baseline``).

The simulator runs in its own process, so this process's CPU time is ours alone: the graph, the
langchain-openai client, HTTP, validation, and the database: single runs are driven as
`thinkloop refine` drives one (the service's executor on a temporary store, opened before the clock
starts: opening it is measured apart), and the batch adds its queue. Judges score 40, so every run
goes through all its rounds and revisions.

The side-by-side part runs the single-run workload of this tree and of ``--baseline`` (by default
the last revision before the one driver, whose `refine` ran the graph with no store) in fresh
processes, alternately, with the same interpreter, packages and simulator, and prints the medians
and the ratio of each pair.

    uv run --frozen python bench/overhead.py --runs 30 --items 60
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from _common import simulator

from agents.llm.models import ModelRegistry, ModelSpec
from agents.panel import PanelFactory
from agents.schemas import Problem
from app.batches.broker import build_broker
from app.batches.repository import items as batch_items
from app.batches.runner import BatchRunner
from app.batches.service import BatchService, BatchSpec
from app.datasets.parsing import parse_dataset
from app.datasets.repository import store_dataset
from app.datasets.synthetic import synthetic_jsonl
from app.db import create_engine, migrate, session_factory, short_session
from app.logging import configure_logging
from app.reporting.item_result import item_results
from app.runs.executor import open_executor
from app.runs.temporary import temporary_runs
from app.settings import Settings
from graphs.context import RunContext
from graphs.scoring import get_policy

# The last revision whose `thinkloop refine` drove the graph itself, with no store (issue 37's "today").
BASELINE = "996d089"

PROBLEM = Problem(
    question="A shop has 14 crates with 23 bottles each. How many bottles does it have?",
    solution="14 × 23 = 332 bottles.",
)


async def script(base_url: str) -> None:
    """Every judge scores 40: each run evaluates all its rounds and revises in between."""
    rules = {"latency_s": 0.0, "rules": [{"role": "^Judge", "score": 40}]}
    async with httpx.AsyncClient() as client:
        (await client.put(base_url.removesuffix("/v1") + "/_sim", json=rules)).raise_for_status()


async def single_runs(base_url: str, runs: int) -> tuple[int, int, float]:
    """LLM calls, rounds and CPU seconds of ``runs`` runs, one after another, on one temporary store
    (what each `thinkloop refine` does once), after a first run that warms it up. Opening the store
    is not on the clock: ``stores`` and ``migrated`` measure it apart."""
    spec = ModelSpec(name="sim", model="sim-1", base_url=base_url, max_concurrency=16)
    calls = rounds = 0
    async with PanelFactory(ModelRegistry({"sim": spec}), {}) as factory:
        panel = factory.build("sim", "sim")
        context = RunContext.of(panel, get_policy("default"))
        async with temporary_runs(None, factory) as store:
            await store.run(PROBLEM, context, model="sim", judge_model="sim")
            cpu = time.process_time()
            for _ in range(runs):
                result = await store.run(PROBLEM, context, model="sim", judge_model="sim")
                calls, rounds = calls + result.usage.calls, rounds + len(result.rounds)
            return calls, rounds, time.process_time() - cpu


async def stores(count: int) -> int:
    """Open and close ``count`` temporary stores, each a copy of the process's migrated template:
    what each `POST /v1/judges/validate` adds once."""
    for _ in range(count):
        async with temporary_runs():
            pass
    return count


async def migrated(count: int, folder: Path) -> int:
    """Migrate ``count`` new SQLite files to head: what the first temporary store of a process (a
    `thinkloop refine`) adds once, making the template the others copy."""
    for n in range(count):
        await migrate(f"sqlite+aiosqlite:///{folder / f'm{n}.db'}")
    return count


async def batch(base_url: str, items: int, database_url: str) -> int:
    await migrate(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    spec = {"model": "sim-1", "base_url": base_url, "max_concurrency": 16}
    factory = PanelFactory(ModelRegistry.from_sources(extra={"sim": spec}), {})
    broker = build_broker(None, held=8, redelivery_s=60)
    settings = Settings(_env_file=None, database_url=database_url, run_lease_s=600)
    executing = open_executor(settings, sessions, factory, connections=8)
    executor = await executing.__aenter__()
    broker.state.runner = runner = BatchRunner(executor, concurrency=8)
    await broker.startup()
    try:
        async with short_session(sessions) as session:
            parsed = parse_dataset(synthetic_jsonl(items, seed=3).encode(), "o.jsonl")
            dataset = await store_dataset(session, "overhead", parsed)
        service = BatchService(sessions, broker)
        created = await service.create(BatchSpec(dataset.id, ["sim"], judge_model="sim", use_cache=False))
        while (await service.progress(created.id))["status"] != "completed":  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        await runner.drain()
        async with short_session(sessions) as session:
            results = await item_results(session, await batch_items(session, created.id))
        return sum(result.calls.llm_calls for result in results.values())
    finally:
        await broker.shutdown()
        await executing.__aexit__(None, None, None)
        await factory.aclose()
        await engine.dispose()


def measured(work: Any) -> tuple[Any, float]:
    """(what it returned, CPU seconds of this process) of one asyncio workload, unprofiled."""
    cpu = time.process_time()
    counted = asyncio.run(work)
    return counted, time.process_time() - cpu


def profiled(work: Any) -> pstats.Stats:
    """The profile of one asyncio workload (a separate pass: profiling slows it down)."""
    profile = cProfile.Profile()
    profile.enable()
    asyncio.run(work)
    profile.disable()
    return pstats.Stats(profile)


def top(stats: pstats.Stats, n: int = 8) -> list[str]:
    """The functions that spent the most CPU themselves (not in callees)."""
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:n]  # type: ignore[attr-defined]
    total = sum(v[2] for v in stats.stats.values()) or 1.0  # type: ignore[attr-defined]
    lines = []
    for (path, line, name), (_, calls, own, _cum, _) in rows:
        short = "/".join(Path(path).parts[-2:])
        lines.append(f"| `{name}` ({short}:{line}) | {calls} | {own:.2f} | {100 * own / total:.0f}% |")
    return lines


# Run in a fresh process inside a tree (this one or the baseline's), with its own bench/overhead.py
# (PYTHONPATH puts the tree and its bench/ first, ahead of this environment's editable install):
# this tree's single_runs returns (calls, rounds, CPU s) with its store opened off the clock; the
# baseline's (before the one driver) returned its calls, and drove the graph with no store.
SIDE = r"""
import asyncio, json, sys, time
tree, base_url, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
import overhead
from app.logging import configure_logging
configure_logging("WARNING")
asyncio.run(overhead.single_runs(base_url, 2))
cpu = time.process_time()
got = asyncio.run(overhead.single_runs(base_url, runs))
cpu = time.process_time() - cpu
calls, cpu = (got[0], got[2]) if isinstance(got, tuple) else (got, cpu)
print(json.dumps({"calls": calls, "cpu": cpu}))
"""


@contextmanager
def tree_at(revision: str) -> Iterator[Path]:
    """The project's files at ``revision`` (``git archive``), in a temporary folder."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="overhead-baseline-") as folder:
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", "--format=tar", revision],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        yield Path(folder)


def side_by_side(base_url: str, baseline: str, runs: int, repeats: int) -> list[str]:
    """CPU per LLM call and per round of this tree's single runs and the baseline's, each measured
    ``repeats`` times in fresh processes, alternately; their medians, and the median of the ratios
    of each pair (a baseline process and the next of this tree, which a shared machine's load
    drifting between pairs moves less)."""
    here = Path(__file__).resolve().parent.parent
    cpu: dict[str, list[float]] = {"baseline": [], "this tree": []}
    calls: dict[str, int] = {}
    with tree_at(baseline) as old:
        for _ in range(repeats):
            for label, tree in (("baseline", old), ("this tree", here)):
                out = subprocess.run(
                    [sys.executable, "-c", SIDE, str(tree), base_url, str(runs)],
                    cwd=tree,
                    env=os.environ | {"PYTHONPATH": os.pathsep.join([f"{tree}/bench", str(tree)])},
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                measured_ = json.loads(out.strip().splitlines()[-1])
                calls[label] = measured_["calls"]
                cpu[label].append(measured_["cpu"] / measured_["calls"])
    if calls["baseline"] != calls["this tree"]:
        raise SystemExit(f"the two trees made different calls for the same runs: {calls}")
    per_round = calls["this tree"] / (3 * runs)  # 3 rounds a run (judges score 40)
    median = {label: statistics.median(values) for label, values in cpu.items()}
    revision = subprocess.run(
        ["git", "-C", str(here), "rev-parse", "--short", baseline], check=True, capture_output=True, text=True
    ).stdout.strip()
    lines = [
        "",
        f"Side by side: {runs} single runs per process, {repeats} processes each, alternately "
        f"(baseline {baseline} = {revision}; median CPU)",
        "",
        "| code | CPU ms per call | CPU ms per round | each process, ms per round |",
        "|---|---|---|---|",
    ]
    for label in ("baseline", "this tree"):
        each = ", ".join(f"{1000 * value * per_round:.0f}" for value in cpu[label])
        lines.append(
            f"| {label} | {1000 * median[label]:.2f} | {1000 * median[label] * per_round:.1f} | {each} |"
        )
    pairs = sorted(new / old for old, new in zip(cpu["baseline"], cpu["this tree"], strict=True))
    lines += [
        "",
        f"This tree ÷ baseline: {median['this tree'] / median['baseline']:.2f} (medians); pair by pair "
        f"{', '.join(f'{ratio:.2f}' for ratio in pairs)}, median **{statistics.median(pairs):.2f}**",
    ]
    return lines


def main(args: argparse.Namespace) -> str:
    configure_logging("WARNING")
    with tempfile.TemporaryDirectory() as tmp, simulator(0.0) as base_url:
        asyncio.run(script(base_url))
        asyncio.run(single_runs(base_url, 2))  # warm up imports and connections
        calls, rounds, single_cpu = asyncio.run(single_runs(base_url, args.runs))
        opened, stores_cpu = measured(stores(3))
        migrations, migrating_cpu = measured(migrated(3, Path(tmp)))
        in_batch = measured(batch(base_url, args.items, f"sqlite+aiosqlite:///{Path(tmp) / 'o.db'}"))
        profiles = {
            "single runs": profiled(single_runs(base_url, max(args.runs // 3, 1))),
            "batch": profiled(
                batch(base_url, max(args.items // 3, 1), f"sqlite+aiosqlite:///{Path(tmp) / 'p.db'}")
            ),
        }
        compared: list[str] = []
        if args.baseline:
            try:
                compared = side_by_side(base_url, args.baseline, args.runs, args.repeats)
            except (OSError, subprocess.CalledProcessError) as exc:  # no git, or no such revision
                said = exc.stderr if isinstance(exc, subprocess.CalledProcessError) else None
                detail = (
                    said.decode(errors="replace").strip() if isinstance(said, bytes) else str(said or exc)
                )
                compared = ["", f"Side by side with {args.baseline}: not measured ({detail})."]
    lines = [
        "Orchestration overhead at zero simulated latency (the simulator in another process)",
        "",
        "| workload | LLM calls | CPU s | CPU ms per call |",
        "|---|---|---|---|",
    ]
    for label, (count, cpu) in (
        (f"{args.runs} single runs (3 rounds + 2 revisions each), temporary store", (calls, single_cpu)),
        (f"batch of {args.items} items, embedded broker, SQLite", in_batch),
    ):
        lines.append(f"| {label} | {count} | {cpu:.2f} | {1000 * cpu / count:.2f} |")
    lines += [
        "",
        f"Single runs: {rounds} rounds, {1000 * single_cpu / rounds:.1f} CPU ms per round. Opening a "
        f"temporary store: {1000 * migrating_cpu / migrations:.0f} CPU ms the first time in a process "
        f"(migrating the template to head; once per `thinkloop refine`), {1000 * stores_cpu / opened:.0f} "
        "CPU ms after (a copy of it; each `POST /v1/judges/validate`).",
        *compared,
    ]
    for label, stats in profiles.items():
        lines += ["", f"Top CPU under cProfile, {label} (own time)", ""]
        lines += ["| function | calls | s | share |", "|---|---|---|---|", *top(stats)]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument(
        "--baseline",
        default=BASELINE,
        help="a git revision to measure the single runs of side by side ('' for none); "
        "by default the last before one driver",
    )
    parser.add_argument("--repeats", type=int, default=5, help="processes per tree, side by side")
    print(main(parser.parse_args()))
