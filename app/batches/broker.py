"""The task queue: TaskIQ's in-process broker by default, Redis Streams (acknowledged) at scale."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Annotated

import structlog
from taskiq import AsyncBroker, Context, InMemoryBroker, TaskiqDepends
from taskiq_redis import RedisStreamBroker

from app.batches.runner import BatchRunner

log = structlog.get_logger(__name__)
TASK_NAME = "thinkloop.process_item"
RUN_TASK_NAME = "thinkloop.execute_run"
QUEUE = "thinkloop:batch-items"  # (the name predates runs on it; renaming it would strand messages)


async def process_item(item_id: int, context: Annotated[Context, TaskiqDepends()]) -> str:
    """Process a batch item by id (idempotent; the database decides who runs it)."""
    runner: BatchRunner = context.state.runner
    return await runner.process(item_id)


async def execute_run(run_id: str, context: Annotated[Context, TaskiqDepends()]) -> str:
    """Execute a run submitted over the API, by id (idempotent: its lease decides who executes it)."""
    runner: BatchRunner = context.state.runner
    return await runner.executor.execute(run_id, lanes=runner.lanes)


class EmbeddedBroker(InMemoryBroker):
    """taskiq's in-process broker: ``held`` feeder tasks take item ids from a queue.

    taskiq's own in-process broker starts a task for every message as it is sent: a 10,000-item
    batch made 10,000 waiting tasks at once (38 MiB more peak RSS in the API). Here a waiting item
    costs only its id in a queue; each feeder sends one id at a time and waits for that item to finish.
    """

    def __init__(self, held: int) -> None:
        super().__init__(max_async_tasks=held, await_inplace=True)
        self.held = held
        self._ids: asyncio.Queue[int] = asyncio.Queue()
        self._feeders: list[asyncio.Task[None]] = []
        self._closing = False

    def feed(self, item_ids: Iterable[int]) -> int:
        """Queue item ids for the feeders (started on first use); returns how many."""
        if not self._feeders:
            self._closing = False
            self._feeders = [asyncio.create_task(self._feed()) for _ in range(self.held)]
        sent = 0
        for item_id in item_ids:
            self._ids.put_nowait(item_id)
            sent += 1
        return sent

    def drop_queued(self) -> int:
        """Forget the ids not yet sent (closing: they stay pending in the database)."""
        dropped = 0
        while not self._ids.empty():
            self._ids.get_nowait()
            dropped += 1
        return dropped

    async def _feed(self) -> None:
        task = self.find_task(TASK_NAME)
        assert task is not None
        # taskiq's receiver catches the CancelledError of an item it runs (it records it as the
        # item's failure), so a feeder cancelled mid-item goes on: it stops at its next look here.
        while not self._closing:
            item_id = await self._ids.get()
            try:
                await task.kiq(item_id)  # runs the item here and now (await_inplace)
            except Exception:  # the runner records item failures; this is anything else
                log.exception("batch.feeder_error", item_id=item_id)

    async def shutdown(self) -> None:
        """Stop the feeders; ids still queued stay pending in the database for the next start."""
        self._closing = True
        for feeder in self._feeders:
            feeder.cancel()
        await asyncio.gather(*self._feeders, return_exceptions=True)
        self._feeders = []
        await super().shutdown()


def build_broker(broker_url: str | None, held: int, redelivery_s: float) -> AsyncBroker:
    """In-process when no URL is given (``held``: items handed to the runner at once, see
    ``Settings.batch_items_held``); otherwise a Redis Streams broker whose unacknowledged messages
    (a worker died mid-item) are reclaimed by another worker after ``redelivery_s``."""
    broker: AsyncBroker
    if broker_url:
        broker = RedisStreamBroker(
            broker_url,
            queue_name=QUEUE,
            consumer_group_name="thinkloop-workers",
            consumer_id="0",
            idle_timeout=int(redelivery_s * 1000),
            unacknowledged_lock_timeout=max(1.0, redelivery_s),
            xread_block=1000,
            xread_count=1,  # one message at a time: a worker that dies holds few of them
        )
    else:
        broker = EmbeddedBroker(held)
    broker.register_task(process_item, task_name=TASK_NAME)
    broker.register_task(execute_run, task_name=RUN_TASK_NAME)
    return broker


async def send_run(broker: AsyncBroker, run_id: str) -> None:
    """Send a run to the workers (a doorbell: a run whose message is lost is found by their sweep)."""
    task = broker.find_task(RUN_TASK_NAME)
    assert task is not None
    await task.kiq(run_id)


async def enqueue(broker: AsyncBroker, item_ids: Iterable[int]) -> int:
    """Send item ids to the queue; sending one twice is harmless."""
    if isinstance(broker, EmbeddedBroker):
        return broker.feed(item_ids)
    task = broker.find_task(TASK_NAME)
    assert task is not None
    sent = 0
    for item_id in item_ids:
        await task.kiq(item_id)
        sent += 1
    return sent
