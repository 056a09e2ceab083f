"""Lanes: a process's places for runs calling models, held only while a call is in flight.

A process runs ``C`` lanes (``THINKLOOP_BATCH_CONCURRENCY``). A run takes one when its first call
of a step starts and gives it back when its last call of that step returns, so the seven judges
and the solver of one round share one lane, and everything a run does between its calls (scoring,
checkpoints, routing, its start and its end) happens outside any lane, overlapping the calls of
runs that hold one. So the lanes stay busy with calls for as long as runs are ready to make them,
and at most ``C`` runs have calls in flight.

The executor gives each run a ``RunLane`` through a context variable (``holding``); every model
call made inside it (by the graph's node tasks, which copy the context) passes ``calling()``. A
call made outside any run (a probe, ``thinkloop refine``) passes freely.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar


class Stopping(Exception):
    """Raised to a run that has never called a model when it asks for a lane while its process is
    stopping: it is handed back as it is (its lease released), neither run nor failed."""


class Lanes:
    """``count`` lanes for one process.

    A free lane goes first to a run that has called before (it is between its steps), and only then
    to a fresh one: the runs a process has started finish first, the runs claimed ahead wait as a
    reserve that fills a lane no started run is ready for, and at a stop the reserve is handed back
    having made no call. ``close()``: fresh runs get ``Stopping`` instead of a lane (those already
    waiting at once); runs already calling keep getting lanes, so they can finish.
    """

    def __init__(self, count: int) -> None:
        self._free = count
        self._started: deque[asyncio.Future[None]] = deque()  # waiters that have called before
        self._fresh: deque[asyncio.Future[None]] = deque()
        self.closing = False

    @property
    def waiting(self) -> int:
        """Runs waiting for a lane now."""
        return len(self._started) + len(self._fresh)

    async def take(self, fresh: bool) -> None:
        """Wait for a lane; ``fresh``: the run has never held one (it may be handed back)."""
        if fresh and self.closing:
            raise Stopping
        if self._free and not self.waiting:
            self._free -= 1
            return
        queue = self._fresh if fresh else self._started
        turn = asyncio.get_running_loop().create_future()
        queue.append(turn)
        try:
            await turn  # resolved with the lane handed over, or with Stopping
        except BaseException:
            if turn.done() and not turn.cancelled() and turn.exception() is None:
                self.give_back()  # handed a lane as it was cancelled: pass it on
            elif turn in queue:
                queue.remove(turn)
            raise

    def give_back(self) -> None:
        """Hand the lane to the next waiter (a run that has called first), or free it."""
        for queue in (self._started, self._fresh):
            while queue:
                turn = queue.popleft()
                if not turn.done():
                    turn.set_result(None)
                    return
        self._free += 1

    def close(self) -> None:
        """Stop giving lanes to fresh runs; those waiting now are handed back at once."""
        self.closing = True
        while self._fresh:
            turn = self._fresh.popleft()
            if not turn.done():
                turn.set_exception(Stopping())


class RunLane:
    """One run's hold on a lane, shared by its calls in flight at once (a round's judges and
    solver): taken by the first, given back when the last returns."""

    def __init__(self, lanes: Lanes) -> None:
        self._lanes = lanes
        self._calls = 0
        self._held = False
        self._taking = asyncio.Lock()
        self.called = False  # has held a lane: from then on it is not handed back when closing

    @asynccontextmanager
    async def calling(self) -> AsyncIterator[None]:
        """Hold the run's lane for the duration of one call."""
        async with self._taking:
            if not self._held:
                await self._lanes.take(fresh=not self.called)
                self._held = self.called = True
            self._calls += 1
        try:
            yield
        finally:
            self._calls -= 1
            if self._calls <= 0:
                self.leave()

    def leave(self) -> None:
        """Give the lane back if held (also when the run ends with a call cut short)."""
        if self._held:
            self._held = False
            self._lanes.give_back()


_current: ContextVar[RunLane | None] = ContextVar("thinkloop_run_lane", default=None)


@contextmanager
def holding(lane: RunLane | None) -> Iterator[None]:
    """Model calls made inside the block (and in tasks started inside it) pass ``lane``."""
    token = _current.set(lane)
    try:
        yield
    finally:
        _current.reset(token)
        if lane is not None:
            lane.leave()


@asynccontextmanager
async def calling() -> AsyncIterator[None]:
    """Around one model call: the current run's lane, if it has one."""
    lane = _current.get()
    if lane is None:
        yield
        return
    async with lane.calling():
        yield
