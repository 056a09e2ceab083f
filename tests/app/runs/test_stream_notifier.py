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


async def settle() -> None:
    """Let every ready task run (a woken waiter finishes within a few loop turns; no clock involved)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_publish_and_forget_wake_the_following_streams() -> None:
    notifier = Notifier()
    with notifier.following("r") as first, notifier.following("r") as second:
        waiters = [asyncio.create_task(f.wait(600)) for f in (first, second)]
        await settle()
        notifier.publish("r", event(1))
        await asyncio.wait_for(asyncio.gather(*waiters), 30)
        waiter = asyncio.create_task(first.wait(600))
        await settle()
        notifier.forget("r")
        await asyncio.wait_for(waiter, 30)


async def test_a_wait_with_nothing_new_ends_after_its_interval() -> None:
    notifier = Notifier()
    with notifier.following("r") as follow:
        await follow.wait(0.01)  # the safety re-read's interval elapsed: the stream looks again


async def test_a_wake_between_a_look_and_the_wait_is_not_lost() -> None:
    notifier = Notifier()
    with notifier.following("r") as follow:  # armed: the stream now reads the database...
        notifier.wake("r", 4)  # ...while another process stores event 4
        await asyncio.wait_for(follow.wait(600), 30)  # so the wait that follows ends at once


async def test_an_announcement_wakes_the_streams_of_a_run_executed_elsewhere() -> None:
    notifier = Notifier()
    with notifier.following("r") as follow:
        waiter = asyncio.create_task(follow.wait(600))
        await settle()
        notifier.wake("other-run", 1)
        await settle()
        assert not waiter.done()
        notifier.wake("r", 1)
        await asyncio.wait_for(waiter, 30)


async def test_an_announcement_of_an_event_published_here_wakes_nobody_again() -> None:
    notifier = Notifier()
    with notifier.following("r") as follow:
        notifier.publish("r", event(1))
        await follow.wait(600)  # woken by the publish
        waiter = asyncio.create_task(follow.wait(600))
        await settle()
        notifier.wake("r", 1)  # this process's own announcement, heard by its listener
        await settle()
        assert not waiter.done()
        notifier.wake("r", 2)  # an event this process has not published (the run moved)
        await asyncio.wait_for(waiter, 30)


async def test_wake_all_wakes_every_followed_run() -> None:
    notifier = Notifier()
    with notifier.following("a") as a, notifier.following("b") as b:
        waiters = [asyncio.create_task(f.wait(600)) for f in (a, b)]
        await settle()
        notifier.wake_all()
        await asyncio.wait_for(asyncio.gather(*waiters), 30)


def test_nothing_is_kept_for_runs_nobody_follows() -> None:
    notifier = Notifier()
    notifier.wake("r", 1)  # an announcement for a run no stream here follows
    assert notifier.followed == frozenset()
    with notifier.following("r"), notifier.following("r"):
        assert notifier.followed == {"r"}
    assert notifier.followed == frozenset()


class Reads:
    """A database read that the test lets finish: counts its calls, answers events after ``after``."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.release = asyncio.Event()

    async def __call__(self, after: int) -> tuple[list[StreamEvent], bool]:
        self.calls.append(after)
        await self.release.wait()
        return [event(after + 1)], False


async def test_streams_at_the_same_place_share_one_read() -> None:
    notifier, read = Notifier(), Reads()
    with (
        notifier.following("r") as first,
        notifier.following("r") as second,
        notifier.following("r") as behind,
    ):
        shared = [asyncio.create_task(f.read(4, read)) for f in (first, second)]
        own = asyncio.create_task(behind.read(2, read))  # elsewhere in the transcript: its own read
        await settle()
        read.release.set()
        assert [await task for task in shared] == [([event(5)], False)] * 2
        assert await own == ([event(3)], False)
    assert sorted(read.calls) == [2, 4]


async def test_a_stream_woken_after_a_read_began_does_not_take_that_read() -> None:
    notifier, read = Notifier(), Reads()
    with notifier.following("r") as early:
        begun = asyncio.create_task(early.read(4, read))
        await settle()
        notifier.wake("r", 5)  # event 5 was stored: the read under way may not have seen it
        with notifier.following("r") as late:
            fresh = asyncio.create_task(late.read(4, read))
            await settle()
            read.release.set()
            await asyncio.gather(begun, fresh)
        await asyncio.wait_for(early.wait(600), 30)  # the early stream was woken: it looks again
    assert read.calls == [4, 4]


async def test_a_finished_read_is_never_reused() -> None:
    notifier, read = Notifier(), Reads()
    read.release.set()
    with notifier.following("r") as follow:
        await follow.read(4, read)
        await follow.read(4, read)
    assert read.calls == [4, 4]


async def test_a_stream_that_goes_away_leaves_the_shared_read_to_the_others() -> None:
    notifier, read = Notifier(), Reads()
    with notifier.following("r") as leaving, notifier.following("r") as staying:
        gone = asyncio.create_task(leaving.read(4, read))
        kept = asyncio.create_task(staying.read(4, read))
        await settle()
        gone.cancel()
        read.release.set()
        assert await kept == ([event(5)], False)
    assert gone.cancelled() and read.calls == [4]
