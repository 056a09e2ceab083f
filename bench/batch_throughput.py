"""Batch throughput against its bound: embedded, and with one and two Redis workers.

Every round is seven judge calls and the solver's, made at once, so it lasts one simulated latency
L; a revision is one more call. The simulator scores every judge 90, but the verification gate
sends a version whose stated answer the solver does not confirm back for revision, so an item is
S sequential steps (rounds + revisions), measured from the stored items. With W processes each
running C items at a time (its lanes: items calling models), and the endpoint allowing K calls in
flight (shared by all workers through Redis), the bound is

    items per minute = 60 × min(C × W, K / 8) / (S × L)

Throughput is measured from the batch's own timestamps, so process start-up is not counted, in two
ways: over the whole batch (created → finished), and in steady state, over the items that finish
between the first 10 % and 90 % of the batch's finishes. A finite batch ends with lanes running dry
while its last items finish (each lane waits out the longest item still in flight, up to one item's
three steps), and it starts with every lane's first round arriving at once; the steady-state figure
leaves out both ends and is what a long batch approaches. Each setup runs ``--problems`` problems per
process (so two workers get twice the problems), which gives every lane the same number of items
and the same share of ramp-up and tail.

Everything runs on this machine: the simulator, PostgreSQL, Redis, the workers. Beside the rates,
the CPU the executing processes used: per item over their whole life (start-up included, and
`batch run`'s report), and during the batch, per item and in cores. A process runs its items on one
event loop, so near 1.0 core per process it is saturated: its CPU per item, not the execution path's
waiting, sets the ratio to the bound (the machine's two cores also run the simulator and PostgreSQL).

    uv run python bench/batch_throughput.py --latency 1.0 --concurrency 8 --problems 120
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import psutil
import redis
from _common import postgres_database, simulator
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import col

from app.batches.broker import QUEUE, build_broker
from app.batches.service import BatchService, BatchSpec
from app.datasets.synthetic import synthetic_jsonl
from app.db import create_engine, migrate, session_factory, short_session
from app.models import Batch, BatchItem, RoundRow

REDIS = "redis://127.0.0.1:6379/14"
MODELS = ("m1", "m2")
ROUND_CALLS = 8  # seven judges and the solver, at once


def environment(base_url: str, database_url: str, concurrency: int, endpoint_limit: int) -> dict[str, str]:
    env = dict(os.environ) | {
        "THINKLOOP_DATABASE_URL": database_url,
        "THINKLOOP_BATCH_CONCURRENCY": str(concurrency),
        "THINKLOOP_LOG_LEVEL": "ERROR",
    }
    for name in MODELS:
        prefix = f"THINKLOOP_MODELS__{name.upper()}__"
        env |= {f"{prefix}MODEL": "sim-1", f"{prefix}BASE_URL": base_url}
        env[f"{prefix}MAX_CONCURRENCY"] = str(endpoint_limit)
    return env


class Measured(NamedTuple):
    items: int
    seconds: float  # from the batch's creation to its completion
    steps: float  # mean sequential steps per item (rounds plus revisions)
    steady: float  # items per minute between the 10th and 90th percentile of the finishes
    created: datetime
    finished: datetime


async def elapsed(database_url: str, batch_id: str) -> Measured:
    """The batch as its stored rows tell it."""
    await migrate(database_url)
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            batch = await session.get(Batch, batch_id)
            assert batch is not None and batch.finished_at is not None, batch
            query = select(col(RoundRow.run_id), func.count()).join(
                BatchItem, col(BatchItem.run_id) == col(RoundRow.run_id)
            )
            query = query.where(col(BatchItem.batch_id) == batch_id).group_by(col(RoundRow.run_id))
            rounds = [int(n) for _, n in (await session.execute(query)).all()]
            finishes = select(col(BatchItem.finished_at)).where(col(BatchItem.batch_id) == batch_id)
            # The batch has ended, so every item has its finish time.
            rows = [at for at in (await session.execute(finishes)).scalars().all() if at is not None]
            created, finished = _utc(batch.created_at), _utc(batch.finished_at)
    finally:
        await engine.dispose()
    steps = sum(2 * r - 1 for r in rounds) / len(rounds)  # each round but the last was revised
    seconds = (finished - created).total_seconds()
    return Measured(len(rows), seconds, steps, steady_rate(list(rows)), created, finished)


def _utc(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes; they were stored in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def steady_rate(finished: list[datetime]) -> float:
    """Items per minute between the 10th and the 90th percentile of the finish times."""
    times = sorted(finished)
    first, last = len(times) // 10, len(times) * 9 // 10
    return 60 * (last - first) / (times[last] - times[first]).total_seconds()


class CpuTrace:
    """The CPU seconds a set of processes has used, sampled every ``period`` seconds (their sum, at
    wall-clock times), so the CPU they used between two stored timestamps can be read afterwards."""

    def __init__(self, period: float = 0.2) -> None:
        self.period = period
        self.processes: list[psutil.Process] = []
        self.samples: list[tuple[float, float]] = []  # (Unix time, CPU seconds so far)
        self._stop = threading.Event()

    def total(self) -> float:
        cpu = 0.0
        for process in self.processes:
            try:
                cpu += sum(process.cpu_times()[:2])
            except psutil.NoSuchProcess:
                return self.samples[-1][1] if self.samples else 0.0
        return cpu

    def _sample(self) -> None:
        while not self._stop.wait(self.period):
            self.samples.append((time.time(), self.total()))

    @contextmanager
    def running(self, processes: list[psutil.Process]) -> Iterator[CpuTrace]:
        self.processes = processes
        thread = threading.Thread(target=self._sample, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()

    def at(self, moment: datetime) -> float:
        """CPU seconds used by ``moment`` (the nearest sample)."""
        when = moment.timestamp()
        return min(self.samples, key=lambda sample: abs(sample[0] - when))[1]

    def between(self, start: datetime, end: datetime) -> float:
        return self.at(end) - self.at(start)


def children_cpu() -> float:
    """CPU seconds of this process's ended (and waited-for) children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def embedded(env: dict[str, str], dataset: Path, trace: CpuTrace) -> tuple[str, float]:
    """`thinkloop batch run` on the in-process broker; returns the batch id and the CPU seconds the
    process used (``trace`` samples it while it runs)."""
    command = [sys.executable, "-m", "app", "batch", "run", "--dataset", str(dataset)]
    command += ["--models", ",".join(MODELS), "--judge-model", MODELS[0], "--format", "json", "--no-cache"]
    before = children_cpu()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with trace.running([psutil.Process(child.pid)]):
        out, err = child.communicate()
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, command, out, err)
    return str(json.loads(out)["batch"]["id"]), children_cpu() - before


async def on_redis(env: dict[str, str], dataset: Path, workers: int, trace: CpuTrace) -> tuple[str, float]:
    """W `thinkloop batch worker` processes; the batch is created once they listen. Returns the
    batch id and the CPU seconds the workers used (``trace`` samples them while they run)."""
    client = redis.Redis.from_url(REDIS)
    client.delete(QUEUE)
    env = env | {"THINKLOOP_BROKER_URL": REDIS}
    command = [sys.executable, "-m", "app", "batch", "worker"]
    procs = [subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL) for _ in range(workers)]  # noqa: ASYNC220
    try:
        with trace.running([psutil.Process(proc.pid) for proc in procs]):
            await asyncio.to_thread(_wait_for_group, client)
            batch_id = await _create_and_wait(env["THINKLOOP_DATABASE_URL"], dataset)
            return batch_id, trace.total()
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)
        client.delete(QUEUE)
        client.close()


def _wait_for_group(client: redis.Redis) -> None:
    """Until the workers have created the stream's consumer group (and a moment for all to join)."""
    while not client.exists(QUEUE) or not client.xinfo_groups(QUEUE):
        time.sleep(0.1)
    time.sleep(1.0)


async def _create_and_wait(database_url: str, dataset: Path) -> str:
    from app.datasets.parsing import parse_dataset
    from app.datasets.repository import store_dataset

    await migrate(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    broker = build_broker(REDIS, held=1, redelivery_s=60)
    await broker.startup()
    try:
        async with short_session(sessions) as session:
            parsed = parse_dataset(await asyncio.to_thread(dataset.read_bytes), dataset.name)
            stored = await store_dataset(session, "bench", parsed)
        service = BatchService(sessions, broker)
        spec = BatchSpec(stored.id, list(MODELS), judge_model=MODELS[0], use_cache=False)
        batch = await service.create(spec)
        while not await _finished(sessions, batch.id):  # noqa: ASYNC110
            await asyncio.sleep(1.0)
        return batch.id
    finally:
        await broker.shutdown()
        await engine.dispose()


async def _finished(sessions: async_sessionmaker[AsyncSession], batch_id: str) -> bool:
    """Whether the batch has finished: one primary-key read a second, so that watching the batch
    takes next to no CPU from the workers it measures (its times come from the stored rows)."""
    async with short_session(sessions) as session:
        batch = await session.get(Batch, batch_id)
        return batch is not None and batch.finished_at is not None


def row(
    name: str, workers: int, measured: Measured, cpu: float, trace: CpuTrace, args: argparse.Namespace
) -> dict[str, Any]:
    items, seconds, steps, steady = measured.items, measured.seconds, measured.steps, measured.steady
    in_flight = min(args.concurrency * workers, args.endpoint_limit / ROUND_CALLS)
    bound = 60 * in_flight / (steps * args.latency)
    in_batch = trace.between(measured.created, measured.finished)
    return {
        "setup": name,
        "workers": workers,
        "items": items,
        "seconds": seconds,
        "steps": steps,
        "achieved": 60 * items / seconds,
        "steady": steady,
        "bound": bound,
        "cpu_ms_per_item": 1000 * cpu / items,
        "batch_cpu_ms_per_item": 1000 * in_batch / items,
        "cores_per_process": in_batch / seconds / workers,
    }


async def main(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp, simulator(args.latency) as base_url:
        datasets = {}
        for workers in (1, 2):
            datasets[workers] = Path(tmp) / f"problems-{workers}.jsonl"
            datasets[workers].write_text(synthetic_jsonl(args.problems * workers, seed=7))
        sqlite = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        env = environment(base_url, sqlite, args.concurrency, args.endpoint_limit)
        if "embedded" in args.setups:
            trace = CpuTrace()
            batch_id, cpu = await asyncio.to_thread(embedded, env, datasets[1], trace)
            rows.append(row("embedded (SQLite)", 1, await elapsed(sqlite, batch_id), cpu, trace, args))
        for workers in (1, 2):
            if str(workers) not in args.setups:
                continue
            with postgres_database() as database_url:
                env = environment(base_url, database_url, args.concurrency, args.endpoint_limit)
                trace = CpuTrace()
                batch_id, cpu = await on_redis(env, datasets[workers], workers, trace)
                label = f"Redis, {workers} worker{'s' if workers > 1 else ''} (PostgreSQL)"
                measured = await elapsed(database_url, batch_id)
                rows.append(row(label, workers, measured, cpu, trace, args))
    return rows


def markdown(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [
        f"Batch throughput: {args.problems} problems per process × {len(MODELS)} models, rounds of "
        f"{ROUND_CALLS} calls at once, {args.latency:g} s per call, {args.concurrency} lanes "
        f"(items calling models at once) per process, endpoint limit {args.endpoint_limit} calls",
        "",
        "| setup | items | steps per item | seconds | bound items/min | whole batch: items/min, ÷ bound "
        "| steady state: items/min, ÷ bound | CPU ms per item: process, in the batch "
        "| cores per process in the batch |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['setup']} | {r['items']} | {r['steps']:.2f} | {r['seconds']:.1f} | {r['bound']:.0f} "
            f"| {r['achieved']:.0f}, {r['achieved'] / r['bound']:.2f} | {r['steady']:.0f}, "
            f"{r['steady'] / r['bound']:.2f} | {r['cpu_ms_per_item']:.0f}, {r['batch_cpu_ms_per_item']:.0f} "
            f"| {r['cores_per_process']:.2f} |"
        )
    by_workers = {r["workers"]: r for r in rows if r["setup"].startswith("Redis")}
    if len(by_workers) == 2:
        ratio = by_workers[2]["steady"] / by_workers[1]["steady"]
        lines += ["", f"Two workers ÷ one worker, steady state: {ratio:.2f}×"]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=1.0, help="simulated seconds per call")
    parser.add_argument(
        "--concurrency", type=int, default=8, help="lanes per process: items calling models at once"
    )
    parser.add_argument("--endpoint-limit", type=int, default=128, help="judge calls in flight, all workers")
    parser.add_argument("--problems", type=int, default=120, help="problems per process")
    parser.add_argument(
        "--setups",
        type=lambda text: set(text.split(",")),
        default={"embedded", "1", "2"},
        help="which setups to measure, comma-separated: embedded, 1 (one worker), 2 (two workers)",
    )
    arguments = parser.parse_args()
    print(markdown(asyncio.run(main(arguments)), arguments))
