"""The embedded broker: a big batch waits as ids in a queue, not as thousands of waiting tasks."""

from __future__ import annotations

import asyncio

from app.batches.broker import EmbeddedBroker, build_broker, enqueue


class Recorder:
    """Stands in for the BatchRunner: records which items ran, and how many ran at once."""

    def __init__(self) -> None:
        self.done: list[int] = []
        self.running = self.most = 0
        self.release = asyncio.Event()

    async def process(self, item_id: int) -> str:
        self.running += 1
        self.most = max(self.most, self.running)
        await self.release.wait()
        self.running -= 1
        self.done.append(item_id)
        return "done"


async def test_items_wait_as_ids_and_run_once_each_within_the_concurrency() -> None:
    broker = build_broker(None, held=4, redelivery_s=30)
    assert isinstance(broker, EmbeddedBroker)
    broker.state.runner = recorder = Recorder()
    await broker.startup()
    try:
        # compared as sets: tasks other tests left to finish on the shared loop may end meanwhile
        before = asyncio.all_tasks()
        assert await enqueue(broker, range(2_000)) == 2_000
        await asyncio.sleep(0.05)
        assert len(asyncio.all_tasks() - before) == 4  # the feeders, not one task per item
        assert recorder.running == 4
        recorder.release.set()
        for _ in range(400):
            if len(recorder.done) == 2_000:
                break
            await asyncio.sleep(0.05)
        assert sorted(recorder.done) == list(range(2_000)) and recorder.most == 4
    finally:
        recorder.release.set()  # a failed assertion must not leave items blocked: shutdown would wait
        await broker.shutdown()


async def test_closing_drops_what_was_not_sent() -> None:
    broker = build_broker(None, held=2, redelivery_s=30)
    assert isinstance(broker, EmbeddedBroker)
    broker.state.runner = recorder = Recorder()
    await broker.startup()
    await enqueue(broker, range(100))
    await asyncio.sleep(0.05)
    assert broker.drop_queued() == 98  # two are running
    recorder.release.set()
    await asyncio.sleep(0.05)
    await broker.shutdown()
    assert sorted(recorder.done) == [0, 1]


async def test_shutdown_returns_with_items_still_in_flight() -> None:
    """taskiq swallows the cancellation of an item it runs; the feeders still stop (they used to go
    on to the next id and wait on the queue for ever, so the service's shutdown hung)."""
    broker = build_broker(None, held=2, redelivery_s=30)
    assert isinstance(broker, EmbeddedBroker)
    broker.state.runner = recorder = Recorder()
    await broker.startup()
    await enqueue(broker, range(10))
    await asyncio.sleep(0.05)
    assert recorder.running == 2
    await asyncio.wait_for(broker.shutdown(), 30)  # never released: the items are cut short
    assert recorder.done == []
