"""Executing a batch's items on this machine, for `thinkloop batch run|resume|worker`: the runtime,
the progress bar, and what SIGINT, SIGHUP and SIGTERM do (stop, hand the items in flight back with
their runs, say how to resume). Loaded only by those commands."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from taskiq import AsyncBroker

from agents.llm.models import ModelRegistry
from app.batches import repository as repo
from app.batches.broker import EmbeddedBroker
from app.batches.runner import BatchRunner
from app.batches.runtime import batch_runtime, consuming
from app.batches.service import BatchService
from app.cli.support import err
from app.db import short_session
from app.models import RUN_TERMINAL
from app.panels import panel_factory
from app.reviews.queue import on_run_end
from app.runs.executor import open_executor
from app.settings import Settings

INTERRUPTS = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)


@dataclass
class Interrupt:
    """The first stop signal received (a second one of the same kind acts as it would by default)."""

    signum: int | None = None
    event: asyncio.Event = field(default_factory=asyncio.Event)

    def catch(self) -> None:
        """Handle SIGINT, SIGHUP and SIGTERM in the running loop."""
        loop = asyncio.get_running_loop()
        for signum in INTERRUPTS:
            loop.add_signal_handler(signum, self._received, loop, signum)

    def _received(self, loop: asyncio.AbstractEventLoop, signum: int) -> None:
        self.signum = self.signum or signum
        self.event.set()
        loop.remove_signal_handler(signum)

    @property
    def exit_code(self) -> int:
        """128 + the signal's number, as a shell reports a process stopped by it."""
        return 128 + (self.signum or 0)


@dataclass(frozen=True)
class Execution:
    """How executing a batch here ended: its id, and whether (and by what) it was interrupted."""

    batch_id: str
    interrupted: Interrupt | None
    handed_back: int = 0


@asynccontextmanager
async def runtime(
    settings: Settings,
    registry: ModelRegistry,
    sessions: async_sessionmaker[AsyncSession],
    *,
    runs: bool = False,
    resume_all: bool = True,
) -> AsyncIterator[tuple[AsyncBroker, BatchRunner]]:
    """A started broker and runner that work on items while the block runs; closed on exit.

    Items execute as runs through a run executor on the database's checkpointer. With ``runs``
    (a worker), the executor also claims and executes runs submitted over the API; without
    ``resume_all`` (batch run and resume), other batches' unfinished items are left alone.
    """
    async with AsyncExitStack() as stack:
        factory = panel_factory(settings, registry)
        await stack.enter_async_context(factory)
        # Every item held writes checkpoints, in a lane or between its steps: a connection each.
        executor = await stack.enter_async_context(
            open_executor(settings, sessions, factory, connections=settings.batch_items_held())
        )
        executor.on_end = on_run_end  # the API's runs a worker executes enter the review queue
        if runs:
            await stack.enter_async_context(executor.running())
        broker, runner = await stack.enter_async_context(
            batch_runtime(settings, executor, grace_s=settings.batch_grace_s)
        )
        await stack.enter_async_context(consuming(broker, runner, settings, resume_all=resume_all))
        yield broker, runner


async def execute(
    settings: Settings,
    registry: ModelRegistry,
    sessions: async_sessionmaker[AsyncSession],
    start: Callable[[BatchService], Awaitable[str]],
) -> Execution:
    """Start the batch (``start`` creates or resumes it and returns its id) and follow it with a
    progress bar until it ends, or until a stop signal: then the items in flight stop and are
    handed back at once (not when their leases lapse), so `batch resume` can take them."""
    interrupt = Interrupt()
    interrupt.catch()
    async with runtime(settings, registry, sessions, resume_all=False) as (broker, runner):
        service = BatchService(sessions, broker)
        batch_id = await start(service)
        if await watch(service, batch_id, interrupt.event):
            await runner.drain()
            return Execution(batch_id, None)
        if isinstance(broker, EmbeddedBroker):
            broker.drop_queued()
        handed_back = await runner.interrupt()
    return Execution(batch_id, interrupt, handed_back)


class BatchBar(Progress):
    """The progress table (the batch, then each model), and under it one line of what the batch has
    spent. On one row with the bar, the spending made a row of about 120 columns, which rich cut to
    ``2…`` at 80 (a terminal's default width, and what a pipe or a log gets)."""

    spent = ""

    def get_renderables(self) -> Iterable[RenderableType]:
        """The table, then the spending line."""
        yield self.make_tasks_table(self.tasks)
        if self.spent:
            yield Text(self.spent, overflow="fold")


def bar(console: Console = err) -> BatchBar:
    """A progress display whose rows fit in 80 columns (a short bar, the rate as n/min)."""
    return BatchBar(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=16),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


async def watch(service: BatchService, batch_id: str, stop: asyncio.Event) -> bool:
    """Show the batch's progress (overall, then per model) until it ends (True) or ``stop`` is set
    (False)."""
    started = time.monotonic()
    with bar() as shown:
        overall = shown.add_task(f"batch {batch_id[:12]}", total=None, rate="")
        models: dict[str, TaskID] = {}
        first: int | None = None
        while True:
            state = await service.progress(batch_id)
            async with short_session(service.sessions) as session:
                by_model = await repo.counts_by_model(session, batch_id)
            first = state["finished"] if first is None else first  # a resumed batch's earlier items
            minutes = max(time.monotonic() - started, 1e-9) / 60
            items = state["items"]
            tokens = state["input_tokens"] + state["output_tokens"]
            shown.update(
                overall,
                total=state["total"],
                completed=state["finished"],
                rate=f"{(state['finished'] - first) / minutes:.1f}/min",
            )
            shown.spent = f"  errors {items.get('error', 0)} · tokens {tokens:,} · ${state['cost_usd']:.4f}"
            for model, counts in by_model.items():
                if model not in models:
                    models[model] = shown.add_task(f"  {model}", total=None, rate="")
                done = sum(n for s, n in counts.items() if s in RUN_TERMINAL)
                shown.update(models[model], total=sum(counts.values()), completed=done)
            if state["status"] not in ("queued", "running") and not items.get("running"):
                return True  # ended, or paused (over the API) with nothing left in flight
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.25)
            if stop.is_set():
                return False
