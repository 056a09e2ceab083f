"""A run's transcript on its way to SSE streams: each event encoded once and fanned out in memory to
the streams of the process executing the run; on PostgreSQL, announced to every other API process
(NOTIFY at commit) so that their streams read it from the database at once instead of polling."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import structlog
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import normalize_url

log = structlog.get_logger(__name__)

CHANNEL = "thinkloop_run_events"  # NOTIFY channels are per database: deployments never mix
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """A transcript event as a stream sends it."""

    seq: int
    type: str
    frame: bytes  # the encoded SSE frame, shared by every subscriber

    @classmethod
    def of(cls, seq: int, kind: str, data: dict[str, Any]) -> StreamEvent:
        """Encode a stored (or just stored) event."""
        # sse-starlette loads with the first event a client may read, not with every CLI command
        from sse_starlette import ServerSentEvent

        return cls(seq, kind, ServerSentEvent(json.dumps(data), event=kind, id=str(seq)).encode())


class Notifier:
    """Fans the events of the runs executing in this process out to their streams, and wakes the
    streams of runs executed elsewhere when the listener hears that one of their events is stored.

    The executor publishes each event once it is stored; streams take new events from here rather
    than from the database, so a run followed by a thousand subscribers costs one write per event,
    not a thousand reads. Events older than what is kept, and events of runs executed by another
    process, are read from the database.
    """

    def __init__(self, keep: int = 1000) -> None:
        self._recent: dict[str, deque[StreamEvent]] = {}
        self._keep = keep
        # Only for runs that streams here follow: how many, how often woken, what wakes them next,
        # and the database reads in flight (by run and position) that woken streams share.
        self._followers: dict[str, int] = {}
        self._epochs: dict[str, int] = {}
        self._wakers: dict[str, asyncio.Event] = {}
        self._reads: dict[tuple[str, int], _Read] = {}

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

    def wake(self, run_id: str, seq: int | None = None) -> None:
        """The run's event ``seq`` is stored (or, without a seq, the run changed): its streams look.

        A run nobody here follows costs one dict lookup; an event published here already woke them.
        """
        if run_id not in self._followers:
            return
        recent = self._recent.get(run_id)
        if seq is not None and recent and recent[-1].seq >= seq:
            return
        self._wake(run_id)

    def wake_all(self) -> None:
        """Every stream looks again (announcements may have been missed)."""
        for run_id in list(self._followers):
            self._wake(run_id)

    @property
    def followed(self) -> frozenset[str]:
        """The runs that streams in this process follow."""
        return frozenset(self._followers)

    @contextlib.contextmanager
    def following(self, run_id: str) -> Iterator[Follow]:
        """One stream's interest in a run: from before its first look to its end."""
        self._followers[run_id] = self._followers.get(run_id, 0) + 1
        self._epochs.setdefault(run_id, 0)
        try:
            yield Follow(self, run_id)
        finally:
            self._followers[run_id] -= 1
            if not self._followers[run_id]:  # nobody follows the run: keep nothing for it
                del self._followers[run_id], self._epochs[run_id]
                self._wakers.pop(run_id, None)

    def _armed(self, run_id: str) -> tuple[asyncio.Event, int]:
        return self._wakers.setdefault(run_id, asyncio.Event()), self._epochs[run_id]

    def _wake(self, run_id: str) -> None:
        if run_id in self._epochs:
            self._epochs[run_id] += 1
        waker = self._wakers.pop(run_id, None)
        if waker is not None:
            waker.set()

    async def _read(self, run_id: str, after: int, epoch: int, read: Reader) -> Stored:
        key = (run_id, after)
        flight = self._reads.get(key)
        if flight is None or flight.epoch < epoch:  # none, or begun before a wake this stream had
            flight = _Read(self._epochs[run_id], asyncio.ensure_future(read(after)))
            self._reads[key] = flight
            flight.task.add_done_callback(lambda _: self._landed(key, flight))
        return await asyncio.shield(flight.task)  # a stream that goes away leaves it to the others

    def _landed(self, key: tuple[str, int], flight: _Read) -> None:
        if self._reads.get(key) is flight:
            del self._reads[key]
        if not flight.task.cancelled():
            flight.task.exception()  # retrieved here too, should every stream that waited be gone


Stored = tuple[list[StreamEvent], bool]  # the events read, and whether the run had ended
Reader = Callable[[int], Awaitable[Stored]]


@dataclass(frozen=True, slots=True)
class _Read:
    epoch: int  # the run's wake count when the read began
    task: asyncio.Future[Stored]


class Follow:
    """A stream's looks at its run and its waits for news.

    Armed before each look, so that an event stored while the stream reads (or sends) ends its
    next wait at once: no wake-up falls between look and wait. Streams of the run at the same place
    share one database read, if it began after every wake-up they had: a thousand followers on a
    process that does not execute the run cost one read per event, not a thousand.
    """

    def __init__(self, notifier: Notifier, run_id: str) -> None:
        self._notifier, self._run_id = notifier, run_id
        self._waker, self._epoch = notifier._armed(run_id)

    async def read(self, after: int, read: Reader) -> Stored:
        """``read(after)``, shared with the run's other streams here that need the same."""
        return await self._notifier._read(self._run_id, after, self._epoch, read)

    async def wait(self, within_s: float) -> None:
        """Until the run's next event (or it stops executing here), or ``within_s`` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._waker.wait(), within_s)
        self._waker, self._epoch = self._notifier._armed(self._run_id)  # before the next look


def _is_postgres(url: str) -> bool:
    return make_url(normalize_url(url)).get_backend_name() == "postgresql"


async def announce(session: AsyncSession, run_id: str, seq: int | None = None) -> None:
    """Tell every API process that the run's event ``seq`` is stored, or without a seq that the
    run changed (e.g. it ended with no event); PostgreSQL only, SQLite is one process. Sent inside
    the caller's transaction, so it is delivered at commit or not at all: no stream elsewhere wakes
    before the change is visible."""
    if session.get_bind().dialect.name == "postgresql":
        payload = f"{run_id}:{'' if seq is None else seq}"
        await session.execute(_NOTIFY, {"channel": CHANNEL, "payload": payload})


@dataclass
class Listener:
    """This process's one LISTEN connection; it wakes the streams of runs executed elsewhere.

    While it is disconnected, streams fall back to their timed re-read; once it listens again, every
    stream looks at once, so nothing stored meanwhile waits for the re-read.
    """

    conninfo: str
    notifier: Notifier
    probe_s: float = 30.0  # an idle connection is checked this often (a half-open one fails it)
    first_backoff_s: float = 0.1
    max_backoff_s: float = 5.0
    connections: int = 0  # how many times it has started listening
    backend_pid: int | None = None
    _listened: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def listened(self, times: int = 1) -> None:
        """Until it has started listening ``times`` times (a reconnection counts again)."""
        async with self._listened:
            await self._listened.wait_for(lambda: self.connections >= times)

    async def run(self) -> None:
        """Listen until cancelled, reconnecting with backoff."""
        backoff = self.first_backoff_s
        while True:
            before = self.connections
            try:
                await self._listen()
            except Exception as exc:  # the database, the network, or a bug: streams re-read meanwhile
                import psycopg  # loaded by _listen, which raised this

                if self.connections > before:
                    backoff = self.first_backoff_s  # it was listening: a fresh drop
                expected = isinstance(exc, psycopg.Error | OSError | TimeoutError)
                (log.warning if expected else log.exception)(
                    "stream.listener_lost", error=f"{type(exc).__name__}: {exc}"[:300], retry_in_s=backoff
                )
            self.backend_pid = None
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.max_backoff_s)

    async def _listen(self) -> None:
        # psycopg loads with a PostgreSQL listener, not with every store (a SQLite one never listens)
        import psycopg

        async with await psycopg.AsyncConnection.connect(
            self.conninfo,
            autocommit=True,
            application_name="thinkloop-listener",
            connect_timeout=10,
            keepalives=1,
            keepalives_idle=30,
        ) as connection:
            await connection.execute(f"LISTEN {CHANNEL}")
            self.backend_pid, self.connections = connection.info.backend_pid, self.connections + 1
            log.info("stream.listening", backend_pid=self.backend_pid)
            self.notifier.wake_all()  # anything stored while nobody listened
            async with self._listened:
                self._listened.notify_all()
            while True:
                async for note in connection.notifies(timeout=self.probe_s):
                    self._deliver(note.payload)
                await asyncio.wait_for(connection.execute("SELECT 1"), self.probe_s)

    def _deliver(self, payload: str) -> None:
        run_id, _, seq = payload.rpartition(":")
        self.notifier.wake(run_id, int(seq) if seq.isdigit() else None)


@contextlib.asynccontextmanager
async def listening(database_url: str, notifier: Notifier) -> AsyncIterator[Listener | None]:
    """On PostgreSQL, a listener in the background until exit; on SQLite (one process), nothing."""
    if not _is_postgres(database_url):
        yield None
        return
    url = make_url(normalize_url(database_url)).set(drivername="postgresql")
    listener = Listener(url.render_as_string(hide_password=False), notifier)
    task = asyncio.create_task(listener.run(), name="stream-listener")
    try:
        yield listener
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
