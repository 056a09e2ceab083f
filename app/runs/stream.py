"""A run's transcript on its way to SSE streams: each event encoded once and fanned out in memory."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from sse_starlette import ServerSentEvent


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """A transcript event as a stream sends it."""

    seq: int
    type: str
    frame: bytes  # the encoded SSE frame, shared by every subscriber

    @classmethod
    def of(cls, seq: int, kind: str, data: dict[str, Any]) -> StreamEvent:
        """Encode a stored (or just stored) event."""
        return cls(seq, kind, ServerSentEvent(json.dumps(data), event=kind, id=str(seq)).encode())


class Notifier:
    """Fans the events of the runs executing in this process out to their streams.

    The executor publishes each event once it is stored; streams take new events from here rather
    than from the database, so a run followed by a thousand subscribers costs one write per event,
    not a thousand reads. Events older than what is kept, and events of runs executed by another
    process, are read from the database.
    """

    def __init__(self, keep: int = 1000) -> None:
        self._wakers: dict[str, asyncio.Event] = {}
        self._waiting: dict[str, int] = {}
        self._recent: dict[str, deque[StreamEvent]] = {}
        self._keep = keep

    def publish(self, run_id: str, event: StreamEvent) -> None:
        """Keep ``event`` (the run's next one) and wake every stream of the run."""
        recent = self._recent.setdefault(run_id, deque(maxlen=self._keep))
        if recent and recent[-1].seq + 1 != event.seq:
            recent.clear()  # what is kept is always a contiguous run of seqs
        recent.append(event)
        self._wake(run_id)

    def forget(self, run_id: str) -> None:
        """The run stopped executing here: its streams go back to the database."""
        self._recent.pop(run_id, None)
        self._wake(run_id)

    def since(self, run_id: str, after: int) -> list[StreamEvent] | None:
        """The run's events after seq ``after``; None when memory cannot tell (read the database)."""
        recent = self._recent.get(run_id)
        if not recent or recent[0].seq > after + 1:
            return None
        return list(itertools.islice(recent, max(after + 1 - recent[0].seq, 0), None))

    async def wait(self, run_id: str, within_s: float) -> None:
        """Until the run's next event (or it stops executing here), or ``within_s`` seconds."""
        waker = self._wakers.setdefault(run_id, asyncio.Event())
        self._waiting[run_id] = self._waiting.get(run_id, 0) + 1
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waker.wait(), within_s)
        finally:
            self._waiting[run_id] -= 1
            if not self._waiting[run_id]:  # nobody waits on this run: keep nothing for it
                del self._waiting[run_id]
                self._wakers.pop(run_id, None)

    def _wake(self, run_id: str) -> None:
        waker = self._wakers.pop(run_id, None)
        if waker is not None:
            waker.set()
