"""A started broker wired to a runner: what `thinkloop batch run|worker` and the API share."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta

import structlog
from sqlalchemy.exc import DBAPIError
from taskiq import AsyncBroker
from tenacity import AsyncRetrying, retry_if_exception_type

from agents.llm.retrying import OUTAGE_BACKOFF, log_retry
from app.batches import repository as repo
from app.batches.broker import EmbeddedBroker, build_broker, enqueue
from app.batches.runner import BatchRunner
from app.db import short_session
from app.runs.executor import RunExecutor
from app.settings import Settings

log = structlog.get_logger(__name__)


@asynccontextmanager
async def batch_runtime(
    settings: Settings, executor: RunExecutor, grace_s: float
) -> AsyncIterator[tuple[AsyncBroker, BatchRunner]]:
    """A started broker whose tasks reach a runner (which executes items as runs, through
    ``executor``, each under its run's lease); on exit, items in flight get ``grace_s`` to finish
    and the rest are handed back as queued. The executor's heartbeat renews the items' leases: if
    the caller has not set the executor running (it claims API runs too), it runs here for items
    alone."""
    async with AsyncExitStack() as stack:
        if not executor.is_running:
            await stack.enter_async_context(executor.running(claim_runs=False))
        broker = build_broker(settings.broker_url, settings.batch_items_held(), settings.redelivery_s)
        runner = BatchRunner(executor, settings.batch_concurrency, settings.batch_outage_s)
        broker.state.runner = runner
        await broker.startup()
        try:
            yield broker, runner
        finally:
            if isinstance(broker, EmbeddedBroker):
                broker.drop_queued()  # not started yet: queued for the next start
            await runner.close(grace_s)
            await broker.shutdown()


@asynccontextmanager
async def consuming(
    broker: AsyncBroker, runner: BatchRunner, settings: Settings, *, resume_all: bool = True
) -> AsyncIterator[None]:
    """Work on batch items in this process while the block runs.

    Embedded: the in-process broker runs what is sent, and (with ``resume_all``, as the API does,
    unless ``settings.resume_batches`` is off) unfinished items of every active batch are sent again
    now (this process restarted; nothing else held them). `thinkloop batch run|resume` pass False:
    they run their own batch's items, and another batch left unfinished waits for its own `resume`;
    a viewer started to look at data turns the setting off, so that opening it changes nothing.
    Either way an item whose model this process does not know stays queued. Redis: read the stream,
    acknowledging each message only after its item ran, and have the executor's sweep re-send the
    items of stalled batches (a dead worker's messages, and items whose runs' leases lapsed).
    """
    tasks: list[asyncio.Task[None]] = []
    resend: Callable[[], Awaitable[int]] | None = None
    if settings.broker_url:
        tasks.append(asyncio.create_task(receive(broker, settings, lambda: resume_active(broker, runner))))
        resend = stalled_resender(broker, runner, settings.redelivery_s)
        runner.executor.sweepers.append(resend)
    elif resume_all and settings.resume_batches:
        await resume_active(broker, runner)
    try:
        yield
    finally:
        if resend is not None:
            runner.executor.sweepers.remove(resend)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def stalled_resender(
    broker: AsyncBroker, runner: BatchRunner, stall_s: float
) -> Callable[[], Awaitable[int]]:
    """The executor's sweep's work for Redis workers: on every sweep, re-send the orphans (items
    whose runs' leases lapsed: taken over one lease and one sweep after their worker died); at most
    once every ``stall_s``, also the queued items of batches with no activity for ``stall_s``
    seconds (a dead worker's unacknowledged messages). How many were sent."""
    loop = asyncio.get_running_loop()
    last = -stall_s

    async def resend_stalled() -> int:
        nonlocal last
        quiet = loop.time() - last >= stall_s
        try:
            async with short_session(runner.sessions) as session:
                if quiet:
                    ids = await repo.stalled(session, timedelta(seconds=stall_s))
                else:
                    ids = await repo.orphaned(session)
            if quiet:
                last = loop.time()
            if ids:
                log.info("batch.resent_stalled_items", count=len(ids))
                await enqueue(broker, ids)
        except Exception as exc:  # the database or the broker is away: try again next time
            log.warning("batch.sweep_failed", error=type(exc).__name__)
            return 0
        return len(ids)

    return resend_stalled


async def resume_active(broker: AsyncBroker, runner: BatchRunner) -> int:
    """Send every unfinished item of active batches (after a restart of the embedded broker)."""
    try:
        async with short_session(runner.sessions) as session:
            ids = await repo.stalled(session, timedelta(0))
    except DBAPIError:  # e.g. not migrated yet: start anyway, /readyz reports it
        log.warning("batch.resume_skipped", reason="database not ready")
        return 0
    return await enqueue(broker, ids)


async def receive(
    broker: AsyncBroker, settings: Settings, returned: Callable[[], Awaitable[int]] | None = None
) -> None:
    """Take items from the Redis stream until cancelled, through Redis outages and restarts.

    taskiq's own loop retries at once, forever, and never re-creates the consumer group that a
    restarted Redis lost. Here each new listener declares the group again, after a backoff; before
    a listener that follows a failed one, ``returned`` sends again what a restarted Redis may have
    lost (every unfinished item nobody holds), so work resumes as soon as Redis is back, not a
    stall period later.
    """
    from taskiq.acks import AcknowledgeType
    from taskiq.receiver import Receiver

    retrying = AsyncRetrying(
        retry=retry_if_exception_type(Exception),
        wait=OUTAGE_BACKOFF,
        before_sleep=log_retry("batch.broker_unavailable"),
    )
    async for attempt in retrying:
        with attempt:
            if returned is not None and attempt.retry_state.attempt_number > 1:
                await returned()  # Redis is back (or this fails too, and the attempt with it)
            receiver = Receiver(
                broker,
                run_startup=True,  # (re)declares the stream's consumer group
                max_async_tasks=settings.batch_items_held(),
                max_prefetch=1,
                propagate_exceptions=False,
                ack_type=AcknowledgeType.WHEN_EXECUTED,
            )
            await receiver.listen(asyncio.Event())
