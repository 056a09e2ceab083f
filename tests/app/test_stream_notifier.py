"""The in-memory fan-out of a run's events: what it keeps, and when streams must read the database."""

from __future__ import annotations

import asyncio

from app.runs.stream import Notifier, StreamEvent


def event(seq: int) -> StreamEvent:
    return StreamEvent.of(seq, "judge.verdict", {"seq": seq})


def test_a_frame_is_one_sse_event() -> None:
    assert event(3).frame == b'id: 3\r\nevent: judge.verdict\r\ndata: {"seq": 3}\r\n\r\n'


def test_new_events_come_from_memory_once_the_run_is_live_here() -> None:
    notifier = Notifier()
    assert notifier.since("r", 0) is None  # not executing here: the database knows
    for seq in (1, 2, 3):
        notifier.publish("r", event(seq))
    assert [e.seq for e in notifier.since("r", 0) or []] == [1, 2, 3]
    assert [e.seq for e in notifier.since("r", 2) or []] == [3]
    assert notifier.since("r", 3) == []  # nothing new yet: wait, no need to ask the database


def test_memory_that_cannot_cover_a_stream_sends_it_to_the_database() -> None:
    notifier = Notifier(keep=3)
    for seq in range(5, 10):  # a resumed run: events 1-4 were stored before this process started
        notifier.publish("r", event(seq))
    assert notifier.since("r", 0) is None and notifier.since("r", 5) is None
    assert [e.seq for e in notifier.since("r", 6) or []] == [7, 8, 9]
    notifier.publish("r", event(12))  # a gap: what is kept restarts, contiguous
    assert notifier.since("r", 9) is None
    assert [e.seq for e in notifier.since("r", 11) or []] == [12]
    notifier.forget("r")
    assert notifier.since("r", 11) is None


async def test_publish_and_forget_wake_the_waiting_streams() -> None:
    notifier = Notifier()
    waiters = [asyncio.create_task(notifier.wait("r", 30)) for _ in range(3)]
    await asyncio.sleep(0)
    notifier.publish("r", event(1))
    await asyncio.wait_for(asyncio.gather(*waiters), 5)
    waiter = asyncio.create_task(notifier.wait("r", 30))
    await asyncio.sleep(0)
    notifier.forget("r")
    await asyncio.wait_for(waiter, 5)
    await notifier.wait("other", 0.01)  # nothing published: returns after the timeout
    assert not notifier._wakers and not notifier._waiting  # nothing kept for runs nobody follows
