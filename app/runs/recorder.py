"""Recording a run: its transcript, its rows and its end, as it executes (durable) or at its end
(deferred). The executor is composed with one recorder and never subclassed per store."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import structlog
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import SQLModel

from agents.schemas import Problem, RevisionResult
from app.db import short_session
from app.models import Run, utcnow
from app.runs import repository as repo
from app.runs.attempt import Attempt, Write
from app.runs.leases import Leases
from app.runs.stream import Notifier, StreamEvent, announce
from app.webhooks.outbox import enqueue
from graphs.events import JudgeVerdict
from graphs.result import RunResult
from graphs.state import Round

log = structlog.get_logger(__name__)
Work = Callable[[AsyncSession], Awaitable[None]]
# A run's end state stored in its end transaction: the run, and what its webhooks are told of it.
End = Callable[[AsyncSession], Awaitable[tuple[Run, dict[str, Any]]]]

# Think-aloud deltas are joined for this long before they are stored (and streamed): a reviser that
# streams a few characters at a time would otherwise cost a transaction per few characters.
THINKING_WINDOW_S = 0.25

# Transcript rows in one executemany on the table, without the ORM: its bulk INSERT would split rows
# with and without a dedupe key into one statement each, and it costs CPU per row (bench/overhead.py).
_EVENTS = insert(SQLModel.metadata.tables["transcript_events"])


def dedupe_key(event: dict[str, Any]) -> str | None:
    """Events that may be re-emitted when a run resumes are recorded once, by this key."""
    kind = event["type"]
    if kind == "reviser.thinking":
        return None
    parts = [kind, event.get("round", ""), event.get("judge", "")]
    if "stage" in event:  # one round.escalated event per stage of the cascade
        parts.append(event["stage"])
    return ":".join(str(part) for part in parts)


def event_row(run_id: str, seq: int, kind: str, key: str | None, data: dict[str, Any]) -> dict[str, Any]:
    """A transcript event's row (``TranscriptEvent``'s columns)."""
    return {
        "run_id": run_id,
        "seq": seq,
        "type": kind,
        "dedupe_key": key,
        "data": data,
        "created_at": utcnow(),
    }


def undescribed(
    attempt: Attempt, rounds: list[Round], revisions: list[RevisionResult], original: Problem | None
) -> list[Write]:
    """The events of the run's rounds and revisions that its transcript lacks (lost with a process
    or a database connection after their checkpoint was stored), rebuilt from them."""
    if original is None:
        return []
    transcript, missing = attempt.transcript, []
    from graphs.replay import described

    for event in described(rounds, revisions, original):
        data = event.model_dump(mode="json")
        key = dedupe_key(data)
        if key is not None and key not in transcript.keys:
            transcript.keys.add(key)
            missing.append(Write(event=data, key=key))
    return missing


def replayed(attempt: Attempt, result: RunResult) -> list[Write]:
    """The events of rounds a resumed run took from its checkpoint's pending writes, and any other
    whose event was lost: stored with the rows, just before the end."""
    return undescribed(attempt, result.rounds, result.revisions, result.original)


def headlines(rounds: Sequence[Round]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The stored form of events stored with ``rounds``' rows: a ``judge.verdict`` event of theirs
    as its headline, where its judgement row gives the text back exactly (``JudgeVerdict.cut``)."""
    texts: dict[tuple[object, object], dict[str, Any]] = {
        (outcome.round, outcome.judge): repo.judgement_text(outcome)
        for record in rounds
        for outcome in record.outcomes
    }

    def stored(data: dict[str, Any]) -> dict[str, Any]:
        if data["type"] != "judge.verdict":
            return data
        headline = JudgeVerdict.cut(data, texts.get((data.get("round"), data.get("judge"))))
        return data if headline is None else headline

    return stored


class Recorder(Protocol):
    """How an executor records its runs. ``holds_spend``: whether its runs may hold reservations of
    the daily ledgers (a deferred store's never do: its runs end without looking their holds up)."""

    holds_spend: bool

    async def started(self, attempt: Attempt, saved: dict[str, Any] | None) -> None:
        """The run starts (``saved`` None), or resumes from the state its checkpoint ``saved``."""

    def event(self, attempt: Attempt, data: dict[str, Any]) -> None:
        """One transcript event, as the graph emitted it."""

    def step(self, attempt: Attempt, update: dict[str, Any]) -> None:
        """One graph step's update (its rounds and revisions)."""

    async def finished(self, attempt: Attempt, result: RunResult, event: dict[str, Any], end: End) -> None:
        """Store what the run recorded, then its end ``event`` with its end state (``end``), after
        the events of ``result``'s rounds its transcript lacks."""

    async def failed(self, attempt: Attempt, event: dict[str, Any], end: End) -> None:
        """Store what the run recorded, then its failure ``event`` with its end state (``end``)."""


class _Transcripts:
    """The transcript writer both recorders share: think-aloud batching, dedupe keys, and the
    transactions that store events with the rows and end states they go with. ``leases``: probed
    before each write (None: nobody else can reach the store); ``notifier``: the streams that
    follow runs (None: nobody follows them); ``eager``: a writer stores what is queued as it comes
    (else everything waits for the run's end); ``outbox``: a run's end is queued for its webhooks."""

    holds_spend = True

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        leases: Leases | None,
        notifier: Notifier | None,
        *,
        eager: bool,
        outbox: bool,
    ) -> None:
        self.sessions, self.leases, self.notifier = sessions, leases, notifier
        self.eager, self.outbox = eager, outbox

    def event(self, attempt: Attempt, data: dict[str, Any]) -> None:
        if data["type"] == "reviser.thinking":
            self.think(attempt, data)
            return
        self.flush_thinking(attempt)
        key = dedupe_key(data)
        transcript = attempt.transcript
        if key is None or key not in transcript.keys:
            if key is not None:
                transcript.keys.add(key)
            self.queue(attempt, Write(event=data, key=key))

    def step(self, attempt: Attempt, update: dict[str, Any]) -> None:
        self.flush_thinking(attempt)
        self.queue(attempt, Write(update=update))

    def think(self, attempt: Attempt, data: dict[str, Any]) -> None:
        """Hold a think-aloud delta, joined to the ones before it of the same round; queue them
        once they span ``THINKING_WINDOW_S`` (and before any other event)."""
        transcript = attempt.transcript
        held = transcript.thinking
        if held is not None and held["round"] == data["round"]:
            held["delta"] += data["delta"]
        else:
            self.flush_thinking(attempt)
            transcript.thinking, transcript.thinking_since = data, time.monotonic()
        if time.monotonic() - transcript.thinking_since >= THINKING_WINDOW_S:
            self.flush_thinking(attempt)

    def flush_thinking(self, attempt: Attempt) -> None:
        transcript = attempt.transcript
        if transcript.thinking is not None:
            data, transcript.thinking = transcript.thinking, None
            self.queue(attempt, Write(event=data))

    def queue(self, attempt: Attempt, write: Write) -> None:
        """Hand a change to the run's writer (started when idle, if ``eager``). Raises why the
        writer stopped, so the run ends on a lost lease or an unreachable database as if it had
        written itself."""
        transcript = attempt.transcript
        if transcript.failed is not None:
            raise transcript.failed
        transcript.queued.append(write)
        if self.eager:
            self.start_writer(attempt)

    def start_writer(self, attempt: Attempt) -> None:
        transcript = attempt.transcript
        if transcript.writer is None or transcript.writer.done():
            transcript.writer = asyncio.create_task(self.write(attempt), name=f"write-{attempt.run_id}")

    async def write(self, attempt: Attempt) -> None:
        """The run's writer: everything queued so far, in one transaction, until nothing is."""
        transcript = attempt.transcript
        while transcript.queued and transcript.failed is None:
            writes, transcript.queued = transcript.queued, []
            try:
                await self.store(attempt, writes)
            except Exception as exc:  # surfaces in the run's task, at its next change or its end
                transcript.failed, transcript.queued = exc, []

    async def drain(self, attempt: Attempt) -> None:
        """Wait until everything queued for the run is stored; raise why it could not be."""
        transcript = attempt.transcript
        if transcript.queued and transcript.failed is None:
            self.start_writer(attempt)  # writes held for the run's end go now
        if transcript.writer is not None:
            await asyncio.wait({transcript.writer})
        if transcript.failed is not None:
            raise transcript.failed

    async def held(self, session: AsyncSession, run_id: str) -> None:
        """Raise ``LeaseLost`` when this process no longer holds the run."""
        if self.leases is not None:
            await self.leases.check(session, run_id)

    async def notify(self, session: AsyncSession, run_id: str, seq: int) -> None:
        """Wake the run's streams in other processes, at commit."""
        if self.notifier is not None:
            await announce(session, run_id, seq)

    def publish(self, run_id: str, seq: int, data: dict[str, Any]) -> None:
        """Hand a stored event to the run's streams in this process."""
        if self.notifier is not None:
            self.notifier.publish(run_id, StreamEvent.of(seq, data["type"], data))

    async def store(self, attempt: Attempt, writes: list[Write]) -> None:
        """Store queued changes in one transaction, then stream their events in order. A duplicate
        (stored by an earlier attempt that the keys in memory did not know of) is skipped alone."""
        run_id, transcript = attempt.run_id, attempt.transcript
        events: list[tuple[int, dict[str, Any]]] = []
        try:
            async with short_session(self.sessions) as session:
                await self.held(session, run_id)
                rounds: list[Round] = []
                revisions: list[RevisionResult] = []
                rows: list[dict[str, Any]] = []
                for write in writes:
                    if write.update is not None:
                        rounds += (write.update.get("score") or {}).get("rounds", [])
                        for node in ("revise", "revise_unaided"):
                            revisions += (write.update.get(node) or {}).get("revisions", [])
                    elif write.event is not None:
                        seq = transcript.seq + len(events) + 1
                        events.append((seq, write.event))
                        rows.append(event_row(run_id, seq, write.event["type"], write.key, write.event))
                if rounds or revisions:
                    await repo.record_rounds(session, run_id, rounds, revisions, held=self.holds_spend)
                if rows:
                    await session.execute(_EVENTS, rows)
                if events:
                    await self.notify(session, run_id, events[-1][0])
        except IntegrityError:
            if len(writes) == 1:
                log.warning("transcript.duplicate", key=writes[0].key)
                return
            for write in writes:
                await self.store(attempt, [write])
            return
        for seq, data in events:
            transcript.seq = seq
            self.publish(run_id, seq, data)

    async def append(
        self,
        attempt: Attempt,
        data: dict[str, Any],
        key: str | None,
        along: Work | None = None,
        held: Sequence[Write] = (),
        then: Work | None = None,
        stored: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        """Store the run's next transcript event and publish it to its streams.

        ``along`` makes more changes in the same transaction: a run's end state is stored with its
        end event, so a stream that sees the run ended also sees the event that ends the stream.
        ``held``: changes held back until now, whose events go first, in the same INSERT; their
        rounds and revisions are ``along``'s to store (the run's end stores all of them from its
        final state). ``then``: a last change in the transaction, once the events are stored.
        ``stored``: the form an event is stored in, when it is not the form it is streamed in.
        """
        run_id, transcript = attempt.run_id, attempt.transcript
        duplicate = key is not None and key in transcript.keys
        events = [(write.event, write.key) for write in held if write.event is not None]
        if not duplicate:
            events.append((data, key))
        try:
            async with short_session(self.sessions) as session:
                if along is not None:
                    await along(session)
                else:
                    await self.held(session, run_id)
                if events:
                    rows = [
                        event_row(
                            run_id,
                            transcript.seq + n,
                            event["type"],
                            dedupe,
                            stored(event) if stored else event,
                        )
                        for n, (event, dedupe) in enumerate(events, 1)
                    ]
                    await session.execute(_EVENTS, rows)
                    await self.notify(session, run_id, transcript.seq + len(rows))
                if then is not None:
                    await then(session)
        except IntegrityError:
            if held:  # held changes are not duplicates: the caller reads the transcript again
                raise
            log.warning("transcript.duplicate", key=key)
            if along is not None or then is not None:
                # The event is stored already; the changes still have to be.
                async with short_session(self.sessions) as session:
                    if along is not None:
                        await along(session)
                    if then is not None:
                        await then(session)
            return
        for event, _ in events:
            transcript.seq += 1
            self.publish(run_id, transcript.seq, event)
        if key is not None:
            transcript.keys.add(key)

    async def reread(self, attempt: Attempt) -> None:
        """The run's transcript as stored (its last seq number and its dedupe keys)."""
        async with short_session(self.sessions) as session:
            attempt.restart(*await repo.last_event(session, attempt.run_id))

    async def end(
        self,
        attempt: Attempt,
        event: dict[str, Any],
        end: End,
        held: list[Write],
        rounds: Sequence[Round] = (),
    ) -> None:
        """Store the run's end ``event`` with its end state and the ``held`` changes, in one
        transaction; rolled back, the held changes are queued again (its failure stores them).

        Each verdict's text is left in its judgement row alone: a held ``judge.verdict`` event of
        one of ``rounds`` (every round is a row once the end is stored) goes in as its headline,
        and events stored earlier are cut down in the same transaction. A run with nothing stored
        before its end (a deferred recorder's) ends without a query."""

        async def store(session: AsyncSession) -> None:
            run, payload = await end(session)
            if self.outbox:
                await enqueue(session, run, event["type"], payload)

        async def settle(session: AsyncSession) -> None:
            await repo.keep_verdict_text_once(session, attempt.run_id)

        earlier = attempt.transcript.seq > 0
        try:
            await self.append(
                attempt,
                event,
                event["type"],
                along=store,
                held=held,
                then=settle if earlier else None,
                stored=headlines(rounds) if rounds else None,
            )
        except BaseException:
            attempt.transcript.queued[:0] = held
            raise

    async def failed(self, attempt: Attempt, event: dict[str, Any], end: End) -> None:
        """Store what the run recorded before it failed, then its failure with its end state."""
        with contextlib.suppress(Exception):
            await self.drain(attempt)
        await self.reread(attempt)  # the writer may have stopped half-way
        await self.end(attempt, event, end, [])


class DurableRecorder(_Transcripts):
    """Records a run as it happens, under its lease: each change stored by the run's writer in the
    background, announced to the run's streams (here and, through PostgreSQL, in other processes),
    and its end queued for its webhooks in its end transaction. Other processes can follow the run
    and resume it from what is stored."""

    holds_spend = True

    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], leases: Leases, notifier: Notifier
    ) -> None:
        super().__init__(sessions, leases, notifier, eager=True, outbox=True)
        self.durable_leases = leases

    @property
    def worker(self) -> str:
        """The process holding the runs recorded here (named in a ``run.resumed`` event)."""
        return self.durable_leases.worker

    async def started(self, attempt: Attempt, saved: dict[str, Any] | None) -> None:
        """Mark the run running and say so in its transcript. A fresh start is one transaction (the
        status with its first event), as it sits before the item's first call."""
        run_id = attempt.run_id

        async def running(session: AsyncSession) -> None:
            await self.held(session, run_id)
            run = await session.get(Run, run_id)
            assert run is not None
            run.status = "running"

        if saved is None:
            await self.append(attempt, {"type": "run.started"}, "run.started", along=running)
            return
        rounds, revisions = saved.get("rounds") or [], saved.get("revisions") or []
        async with short_session(self.sessions) as session:
            # A revise step cut short will think again: the run.resumed event names the rounds whose
            # think-aloud so far the trace drops (kept in the transcript: its seq numbers stay whole).
            dropped = await repo.unfinished_thinking(session, run_id)
        event: dict[str, Any] = {"type": "run.resumed", "executor": self.worker}
        if dropped:
            event["discarded_thinking_rounds"] = dropped

        async def resume(session: AsyncSession) -> None:
            await running(session)
            # What the checkpoint holds is stored with its events, before any step runs again.
            await repo.record_rounds(session, run_id, rounds, revisions, held=self.holds_spend)

        replayed = undescribed(attempt, rounds, revisions, saved.get("original"))
        log.info("run.resumed", executor=self.worker, replayed=len(replayed))
        try:
            await self.append(attempt, event, None, along=resume, held=replayed)
        except IntegrityError:  # an earlier attempt's writer stored more since the transcript was read
            await self.reread(attempt)
            replayed = undescribed(attempt, rounds, revisions, saved.get("original"))
            await self.append(attempt, event, None, along=resume, held=replayed)

    async def finished(self, attempt: Attempt, result: RunResult, event: dict[str, Any], end: End) -> None:
        self.flush_thinking(attempt)
        await self.drain(attempt)
        await self.end(attempt, event, end, replayed(attempt, result), result.rounds)


class DeferredRecorder(_Transcripts):
    """Records a run in one transaction at its end (or, if it fails, in one before its failure):
    for a store nobody else reads while the run runs (a temporary store, whose caller follows the
    run live). No stream is announced, no webhook queued, no lease probed, nothing reserved."""

    holds_spend = False

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        super().__init__(sessions, None, None, eager=False, outbox=False)

    async def started(self, attempt: Attempt, saved: dict[str, Any] | None) -> None:
        """The run was created running: its first event waits for its end, as the others do."""
        attempt.transcript.keys.add("run.started")
        self.queue(attempt, Write(event={"type": "run.started"}, key="run.started"))

    async def finished(self, attempt: Attempt, result: RunResult, event: dict[str, Any], end: End) -> None:
        """What the run queued goes in with its end, in one transaction."""
        self.flush_thinking(attempt)
        held, attempt.transcript.queued = attempt.transcript.queued, []
        await self.end(attempt, event, end, held + replayed(attempt, result), result.rounds)
