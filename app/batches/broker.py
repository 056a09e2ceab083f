"""The task queue: TaskIQ's in-process broker by default, Redis Streams (acknowledged) at scale."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from taskiq import AsyncBroker, Context, InMemoryBroker, TaskiqDepends
from taskiq_redis import RedisStreamBroker

from app.batches.runner import BatchRunner

TASK_NAME = "thinkloop.process_item"
QUEUE = "thinkloop:batch-items"


async def process_item(item_id: int, context: Annotated[Context, TaskiqDepends()]) -> str:
    """The one task: process a batch item by id (idempotent; the database decides who runs it)."""
    runner: BatchRunner = context.state.runner
    return await runner.process(item_id)


def build_broker(broker_url: str | None, concurrency: int, redelivery_s: float) -> AsyncBroker:
    """In-process when no URL is given; otherwise a Redis Streams broker whose unacknowledged
    messages (a worker died mid-item) are reclaimed by another worker after ``redelivery_s``."""
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
        broker = InMemoryBroker(max_async_tasks=concurrency)
    broker.register_task(process_item, task_name=TASK_NAME)
    return broker


async def enqueue(broker: AsyncBroker, item_ids: Iterable[int]) -> int:
    """Send item ids to the queue; sending one twice is harmless."""
    task = broker.find_task(TASK_NAME)
    assert task is not None
    sent = 0
    for item_id in item_ids:
        await task.kiq(item_id)
        sent += 1
    return sent
