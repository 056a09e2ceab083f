"""Executing runs in the background: durable through the checkpointer, recorded exactly once.

The executor is composed, never subclassed per store: a ``Driver`` runs the graph, a ``Recorder``
records what it produces (durable: as it happens; deferred: at the run's end), and ``Leases`` (none
for a store no other process reaches) say which process executes which run. Each run executed here
is one ``Attempt``."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import col, select

from agents.llm.calls import CallFailure
from agents.llm.lanes import Lanes, RunLane, Stopping, holding
from agents.panel import PanelFactory
from agents.schemas import Problem
from app.access.usage import owner_of
from app.db import short_session
from app.errors import QuotaExceeded
from app.grading import GradingProgress, grading_progress
from app.heap import freeze_startup_heap
from app.metrics import ServiceMetrics
from app.models import RUN_TERMINAL, ProblemRow, Run, utcnow
from app.runs import repository as repo
from app.runs.attempt import Attempt
from app.runs.context import run_context
from app.runs.driver import Driver
from app.runs.leases import LeaseLost, Leases, worker_name
from app.runs.recorder import DeferredRecorder, DurableRecorder, Recorder
from app.runs.stream import Notifier
from app.settings import Settings
from app.validity.records import with_warrant
from graphs.context import RunContext
from graphs.events import (
    JudgeVerdict,
    RevisionProposed,
    RoundEscalated,
    RoundScored,
    RunEvent,
    RunFinished,
)
from graphs.result import EventSink, RunResult, finished_event

if TYPE_CHECKING:  # the model client stack loads with the first model-backed panel, not here
    from agents.llm.client import ResponseCache

__all__ = ["EndHook", "LeaseLost", "RunExecutor", "Settle", "open_executor"]

log = structlog.get_logger(__name__)
# More changes made in the transaction that stores a run's end state (a batch item's own columns).
Settle = Callable[[AsyncSession, RunResult | None], Awaitable[None]]
# (session, run, outcome, stop reason, (round, question, solution) decided) → grading progress
EndHook = Callable[[AsyncSession, Run, str, str, tuple[int, str, str]], Awaitable[GradingProgress]]


@contextlib.asynccontextmanager
async def open_executor(
    settings: Settings,
    sessions: async_sessionmaker[AsyncSession],
    factory: PanelFactory,
    metrics: ServiceMetrics | None = None,
    connections: int | None = None,
) -> AsyncIterator[RunExecutor]:
    """A run executor on the database's checkpointer (``connections`` at most, by default
    THINKLOOP_CHECKPOINT_CONNECTIONS): what the API, `thinkloop batch run` and `thinkloop worker`
    each execute runs with. The checkpointer closes on exit."""
    from app.checkpoints import open_checkpointer
    from graphs.refinement import build_refinement_graph

    pool = connections or settings.checkpoint_connections
    async with open_checkpointer(settings.database_url, pool) as saver:
        graph = build_refinement_graph(saver)
        executor = RunExecutor.durable(sessions, graph, factory, settings, metrics or ServiceMetrics())
        freeze_startup_heap()  # the process's start-up heap: never scanned again by the collector
        yield executor


def _failed(work: asyncio.Future[Any]) -> bool:
    """Whether a run's work raised an error that its caller ends the run with (``fail_here``): not a
    lost lease, a process stopping or a cancellation, after which nobody ends the run here."""
    if not work.done() or work.cancelled():
        return False
    error = work.exception()
    return isinstance(error, Exception) and not isinstance(error, LeaseLost | Stopping)


class RunExecutor:
    """Runs refinement graphs as background tasks and records everything they produce.

    Every run of a durable store is a durable job. A process executes a run only while it holds the
    run's lease (one conditional update claims it), renews the lease while the run executes, and
    hands it back on a graceful stop; a run whose lease lapsed (its process died) is taken over by
    whichever live process sweeps first, and resumes from its last checkpoint. So any number of API
    processes can share one database without executing a run twice, and none waits for a restart.
    A temporary store's executor is the same class with a deferred recorder and no leases.
    """

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        graph: Any,
        factory: PanelFactory,
        settings: Settings,
        metrics: ServiceMetrics,
        recorder: Recorder,
        leases: Leases | None,
        notifier: Notifier,
    ) -> None:
        self.sessions, self.graph, self.factory = sessions, graph, factory
        self.settings, self.metrics = settings, metrics
        self.driver, self.recorder, self.leases, self.notifier = Driver(graph), recorder, leases, notifier
        self._worker = leases.worker if leases is not None else worker_name()
        self.lease = timedelta(seconds=settings.run_lease_s)
        self.attempts: dict[str, Attempt] = {}  # the runs executed here, one attempt each
        # More work for each sweep (a batch runtime's: re-send items nobody holds), besides the runs.
        self.sweepers: list[Callable[[], Awaitable[object]]] = []
        self.is_running = False  # within ``running()``: the heartbeat renews the leases held here
        self._claim_runs = True
        self.wake_webhooks: Callable[[], None] = lambda: None  # the app sets its outbox's wake()
        # What a durable store does when a run ends (the app sets its review queue's entry); None:
        # nothing (a temporary store's runs, a bench's, never enter a queue).
        self.on_end: EndHook | None = None
        # With workers (Redis): how a new run reaches them. None: this process executes its runs.
        self.send: Callable[[str], Awaitable[None]] | None = None
        self._closing = False

    @classmethod
    def durable(
        cls,
        sessions: async_sessionmaker[AsyncSession],
        graph: Any,
        factory: PanelFactory,
        settings: Settings,
        metrics: ServiceMetrics,
    ) -> RunExecutor:
        """An executor of a shared store: leased runs, recorded as they happen, streamed and
        announced, their ends queued for webhooks."""
        leases = Leases(sessions, worker_name(), timedelta(seconds=settings.run_lease_s))
        notifier = Notifier()
        recorder = DurableRecorder(sessions, leases, notifier)
        return cls(sessions, graph, factory, settings, metrics, recorder, leases, notifier)

    @classmethod
    def deferred(
        cls,
        sessions: async_sessionmaker[AsyncSession],
        graph: Any,
        factory: PanelFactory,
        settings: Settings,
        metrics: ServiceMetrics,
    ) -> RunExecutor:
        """An executor of a store no other process reaches (a temporary store): no leases to
        probe, each run recorded in one transaction at its end, no stream and no webhook."""
        return cls(sessions, graph, factory, settings, metrics, DeferredRecorder(sessions), None, Notifier())

    @property
    def worker(self) -> str:
        """This process, as its leases and its runs' ends name it (host:pid)."""
        return self._worker

    @worker.setter
    def worker(self, name: str) -> None:
        self._worker = name
        if self.leases is not None:
            self.leases.worker = name

    @property
    def embedded(self) -> bool:
        """Whether runs submitted here execute here (no workers)."""
        return self.send is None

    def lease_deadline(self) -> datetime:
        """When a lease taken now lapses (a run created here is held by this process from the start)."""
        return utcnow() + self.lease

    def _background(self, run_id: str) -> asyncio.Future[Any] | None:
        """The task of a run executed here in the background (``submit``), if any."""
        attempt = self.attempts.get(run_id)
        return attempt.task if attempt is not None and not attempt.here else None

    async def start(self, run_id: str) -> None:
        """A new run: executed here (embedded), or sent to the workers. If the message cannot be
        sent (Redis is away), the workers' sweep finds the run in the database instead."""
        if self.send is None:
            self.submit(run_id)
            return
        try:
            await self.send(run_id)
        except Exception as exc:
            log.warning("run.send_failed", run_id=run_id, error=type(exc).__name__)

    async def execute(self, run_id: str, lanes: Lanes | None = None) -> str:
        """Execute a run here and wait for its end (a worker's task); how it ended, or why not.
        ``lanes``: the worker's lanes, which its batch items share (None: no bound here)."""
        self.submit(run_id, lanes)
        task = self._background(run_id)
        if task is not None:
            await asyncio.wait({task})
        async with short_session(self.sessions) as session:
            status = (await session.execute(select(col(Run.status)).where(col(Run.id) == run_id))).scalar()
        return str(status or "missing")

    def submit(self, run_id: str, lanes: Lanes | None = None) -> None:
        """Start (or resume) a run in the background, if this process can claim it."""
        if run_id not in self.attempts and not self._closing:
            attempt = Attempt(run_id)
            attempt.task = asyncio.create_task(self._execute(attempt, lanes), name=f"run-{run_id}")
            self.attempts[run_id] = attempt
            attempt.task.add_done_callback(lambda _: self._forget(attempt))

    @property
    def heartbeat_s(self) -> float:
        """How often the leases held here are renewed: THINKLOOP_RUN_HEARTBEAT_S, and at least three
        times a lease (a lease outlives two missed renewals)."""
        return min(self.settings.run_heartbeat_s, self.settings.run_lease_s / 3)

    @contextlib.asynccontextmanager
    async def running(self, claim_runs: bool = True) -> AsyncIterator[None]:
        """Execute runs until exit. One heartbeat renews the lease of every run executed here (batch
        items' runs included); one sweep takes queued runs and runs whose lease lapsed (the first
        sweep resumes what a previous life of this service left; without ``claim_runs``, as in
        `thinkloop batch run`, it takes none) and does the ``sweepers``' work. On exit, tasks stop
        and their runs are handed back for any process."""
        self.is_running, self._claim_runs = True, claim_runs
        loops = [
            asyncio.create_task(self._every(self.settings.run_sweep_s, self.sweep), name="runs-sweep"),
            asyncio.create_task(self._every(self.heartbeat_s, self.heartbeat), name="runs-lease"),
        ]
        try:
            yield
        finally:
            for loop in loops:
                loop.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            self.is_running = False
            await self.shutdown()

    async def _every(self, seconds: float, work: Callable[[], Awaitable[object]]) -> None:
        while True:
            try:
                await work()
            except (DBAPIError, OSError) as exc:  # the database is away: try again next time
                log.warning("runs.background_failed", work=work.__name__, error=type(exc).__name__)
            await asyncio.sleep(seconds)

    async def sweep(self) -> int:
        """Start every unfinished run that no live process holds (unless this process claims none),
        then do the sweepers' work; how many runs were started here."""
        started = 0
        if self._claim_runs and self.leases is not None:
            for run_id in await self.leases.sweep():
                if run_id not in self.attempts:
                    self.submit(run_id)
                    started += 1
        for sweeper in self.sweepers:
            await sweeper()
        return started

    async def heartbeat(self) -> set[str]:
        """Renew this process's leases (its batch items' runs too); stop any run whose lease was
        lost. Returns the lost ids."""
        held = {run_id for run_id, attempt in self.attempts.items() if attempt.active}
        if not held or self.leases is None:
            return set()
        kept = await self.leases.renew(held)
        lost = set()
        for run_id in held - kept:
            attempt = self.attempts.get(run_id)
            task = attempt.task if attempt is not None else None
            if (
                attempt is None or task is None or task.done() or attempt.ending
            ):  # it ended (or is ending) here
                continue
            log.warning("run.lease_lost", run_id=run_id)
            lost.add(run_id)
            attempt.lost = True
            task.cancel()
        return lost

    async def wait(self, run_id: str, within_s: float) -> bool:
        """Wait for a run to end; True when it ended within ``within_s`` seconds. A run executed by
        another process (a worker, a replica) is waited for through its announcements."""
        task = self._background(run_id)
        if task is not None:
            done, _ = await asyncio.wait({task}, timeout=within_s)
            return bool(done)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        with self.notifier.following(run_id) as follow:
            while True:
                async with short_session(self.sessions) as session:
                    query = select(col(Run.status)).where(col(Run.id) == run_id)
                    status = (await session.execute(query)).scalar()
                remaining = deadline - loop.time()
                if status is None or status in RUN_TERMINAL:
                    return True
                if remaining <= 0:
                    return False
                await follow.wait(min(remaining, self.settings.sse_reread_s))

    async def delete_checkpoints(self, run_ids: Iterable[str]) -> None:
        """Delete the checkpoints of ended runs (their graph states, which hold every version)."""
        await self.driver.delete_checkpoints(run_ids)

    def cancel(self, run_id: str) -> bool:
        """Cancel a running task; False when this process is not running it."""
        task = self._background(run_id)
        if task is None:
            return False
        task.cancel()
        return True

    async def shutdown(self) -> None:
        """Stop every task and hand their runs back: they stay unfinished, and the next sweep of
        any live process (or of this service's next start) resumes them from their checkpoints."""
        self._closing = True
        tasks = [task for run_id in list(self.attempts) if (task := self._background(run_id)) is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.leases is None:
            return
        try:
            released = await self.leases.release()
            if released:
                log.info("runs.released", count=released)
        except (DBAPIError, OSError):  # unreachable: the leases lapse instead
            log.warning("runs.release_skipped", reason="database not reachable")

    async def _execute(self, attempt: Attempt, lanes: Lanes | None = None) -> None:
        run_id = attempt.run_id
        with structlog.contextvars.bound_contextvars(run_id=run_id):
            try:
                if self.leases is not None and not await self.leases.claim(run_id):
                    return  # finished, or another live process holds it
                await self._drive(attempt, lanes=lanes)
            except LeaseLost:
                log.warning("run.lease_lost", run_id=run_id)
            except Stopping:  # released by this process's shutdown, or left for its lease to lapse
                log.info("run.handed_back", run_id=run_id)
            except QuotaExceeded as exc:  # a round would pass a daily cap: it was never started
                capped = CallFailure.internal("thinkloop", exc).model_dump()  # an error run names its cause
                await self._fail(attempt, "error", f"stopped at a daily cap: {exc.detail}"[:500], capped)
            except asyncio.CancelledError:
                if not self._closing and not attempt.lost:
                    await self._fail(attempt, "cancelled", "cancelled by request")
                raise
            except Exception as exc:
                log.exception("run.failed")
                failure = CallFailure.internal("thinkloop", exc).model_dump()  # an error run names its cause
                await self._fail(
                    attempt, "error", f"internal error: {type(exc).__name__}: {exc}"[:500], failure
                )

    async def execute_here(
        self,
        run_id: str,
        *,
        cache: ResponseCache | None = None,
        settle: Settle | None = None,
        lanes: Lanes | None = None,
        context: RunContext | None = None,
        created: tuple[Run, Problem] | None = None,
        observe: EventSink | None = None,
    ) -> RunResult | None:
        """Execute a run that this process has claimed, in the calling task: how a batch item runs.

        Everything is recorded as the executor's recorder records any run (a durable store's rows
        and transcript as they happen, so the run can be followed live; checkpoints, so a resumed
        run repeats no finished step). ``settle`` makes the caller's own changes in the
        transaction that stores the run's end state. The heartbeat (``running``) renews the lease
        with the others held here; if it finds the lease lost (taken over after missed renewals),
        the run stops and ``LeaseLost`` is raised. Other errors propagate (a database outage is the
        caller's to wait out and resume). Returns None when the run had already ended. A run holds
        one of ``lanes`` while it has model calls in flight; the first may raise ``Stopping`` (the
        run is then left as it is, for the caller). ``context``: the run's, built by its caller
        (else from its row); ``created``: the run and its problem as its caller has just created
        them (else they are read); ``observe``: its typed events as they happen (a live trace).
        """
        attempt = Attempt(run_id, here=True, context=context, loaded=created, observe=observe)
        earlier = self.attempts.get(run_id)
        if earlier is not None:  # an earlier attempt here raised and is executed again: it writes no more
            earlier.transcript.stop()
        self.attempts[run_id] = attempt
        # Driven by a task of its own, which the heartbeat stops alone: never the caller's task.
        work: asyncio.Future[RunResult | None] = asyncio.ensure_future(
            self._drive(attempt, cache, settle, lanes)
        )
        attempt.task = work
        try:
            try:
                await asyncio.wait({work})
            except asyncio.CancelledError:  # the caller stops: so does the run
                work.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await work
                raise
            if work.cancelled() and attempt.lost:
                raise LeaseLost(run_id)
            return work.result()
        finally:
            attempt.active = False
            if not _failed(work):
                self._forget(attempt)

    async def fail_here(
        self, run_id: str, status: str, reason: str, failure: dict[str, Any] | None, settle: Settle
    ) -> bool:
        """End a run executed by ``execute_here`` that raised; False when this process lost it. What
        the run recorded before it raised is stored first (``execute_here`` kept it for this)."""
        attempt = self.attempts.get(run_id) or Attempt(run_id, here=True, active=False)
        try:
            return await self._fail(attempt, status, reason, failure, settle)
        finally:
            self._forget(attempt)

    def _forget(self, attempt: Attempt) -> None:
        if self.attempts.get(attempt.run_id) is attempt:
            del self.attempts[attempt.run_id]
        attempt.transcript.stop()
        self.notifier.forget(attempt.run_id)

    async def _drive(
        self,
        attempt: Attempt,
        cache: ResponseCache | None = None,
        settle: Settle | None = None,
        lanes: Lanes | None = None,
    ) -> RunResult | None:
        """Load, start, run the graph, end. The run holds a lane only while it has model calls in
        flight (``agents.llm.lanes``): its start, its end and its steps between calls overlap the model
        calls of the others."""
        run, problem = await self._load(attempt)
        if run.status in RUN_TERMINAL:
            return None
        context = attempt.context or await run_context(self.sessions, self.settings, self.factory, run, cache)
        if run.arm == "control":  # one blind revision, judged once
            context = dataclasses.replace(context, policy=dataclasses.replace(context.policy, max_rounds=1))
        # Started before (here or by a process that died), with or without a checkpoint written since.
        resuming = "run.started" in attempt.transcript.keys
        await self.recorder.started(attempt, await self.driver.saved(run.id) if resuming else None)
        with holding(RunLane(lanes) if lanes is not None else None):
            self.metrics.in_flight.inc()
            try:
                result, finished = await self.driver.drive(
                    run.id,
                    problem,
                    context,
                    resuming,
                    run.arm,
                    step=lambda update: self.recorder.step(attempt, update),
                    event=lambda event: self._record_event(attempt, event),
                    observe=attempt.observe,
                )
            finally:
                self.metrics.in_flight.dec()
        if context.warrants is not None:
            result = with_warrant(result, context.warrants)
        await self._complete(attempt, run, result, finished, settle)
        return result

    async def _load(self, attempt: Attempt) -> tuple[Run, Problem]:
        """The run and its problem, and its transcript as this attempt starts it (a run its caller
        has just created: nothing of it is stored but its row)."""
        if attempt.loaded is not None:
            attempt.restart(0, set())
            return attempt.loaded
        async with short_session(self.sessions) as session:
            run = await session.get(Run, attempt.run_id)
            if run is None:
                raise LookupError(attempt.run_id)
            row = await session.get(ProblemRow, run.problem_id)
            assert row is not None
            seq, keys = await repo.last_event(session, attempt.run_id)
        attempt.restart(seq, keys)
        return run, Problem(question=row.question, solution=row.solution)

    def _record_event(self, attempt: Attempt, event: RunEvent) -> None:
        if isinstance(event, JudgeVerdict):
            self.metrics.observe_call(event.model, "judge", event.usage)
        elif isinstance(event, RevisionProposed):
            self.metrics.observe_call(event.model, "reviser", event.usage)
        elif isinstance(event, RoundScored) and event.solver is not None:
            self.metrics.observe_call(event.solver.model, "solver", event.solver.usage)
        elif isinstance(event, RoundEscalated) and (event.usage.calls or event.usage.failed_attempts):
            # A stronger panel's judges, as one observation: its latency is the stage's calls summed.
            self.metrics.observe_call(event.panel, "escalation", event.usage)
        self.recorder.event(attempt, event.model_dump(mode="json"))

    async def _ended(self, session: AsyncSession, run: Run, result: RunResult) -> GradingProgress:
        """The run's grading progress once it ended, after its ``on_end`` hook (the service's review
        queue: ``app.reviews.queue.on_run_end``) had its say, in the run's end transaction."""
        if self.on_end is None:
            return grading_progress(result.outcome, run.review)
        last = result.rounds[-1].round if result.rounds else 0
        version = (last, result.final.question, result.final.solution)
        return await self.on_end(session, run, result.outcome, result.stop_reason, version)

    async def _complete(
        self,
        attempt: Attempt,
        run: Run,
        result: RunResult,
        finished: RunFinished | None,
        settle: Settle | None,
    ) -> None:
        held = self.recorder.holds_spend

        async def end(session: AsyncSession) -> tuple[Run, dict[str, Any]]:
            # The checkpoint is the source of truth: store any round an interrupted stream missed
            # (none is stored while the transcript is empty: a deferred run's, until this commit).
            await repo.record_rounds(
                session,
                run.id,
                result.rounds,
                result.revisions,
                none_stored=attempt.transcript.seq == 0,
                owner=owner_of(run),
                held=held,
            )
            failure = result.failure.model_dump() if result.failure else None
            outcome, reason, facts = result.outcome, result.stop_reason, repo.facts(result)
            if not await repo.finish_run(
                session, run.id, outcome, reason, facts, failure, owner=self.worker, held=held
            ):
                raise LeaseLost(run.id)  # rolled back with the end event: the run's end was set elsewhere
            if settle is not None:
                await settle(session, result)
            grading = await self._ended(session, run, result)
            return run, {**event, "metrics": result.metrics, "grading_progress": grading}

        event = (finished or finished_event(result)).model_dump(mode="json")
        event["status"] = result.outcome  # the run's status, named as in traces and webhooks
        event["warrant"] = result.warrant  # an accepted run's: in its stream and its webhooks too
        attempt.ending = True  # its end commit checks the lease itself (``finish_run``'s owner)
        await self.recorder.finished(attempt, result, event, end)
        await self._drop_state(run.id)
        metrics = result.metrics or {}  # an error run has none: a failure is never a score
        rounds_to_pass, quality = metrics.get("rounds_to_pass"), metrics.get("avg_quality_final")
        self.metrics.observe_run(result.outcome, rounds_to_pass, quality)
        log.info(
            "run.finished",
            outcome=result.outcome,
            rounds=len(result.rounds),
            rounds_to_pass=metrics.get("rounds_to_pass"),
            avg_quality_final=metrics.get("avg_quality_final"),
            avg_quality_all_steps=metrics.get("avg_quality_all_steps"),
            level_final=metrics.get("level_final"),
        )
        self.wake_webhooks()

    async def _drop_state(self, run_id: str) -> None:
        """Delete an ended run's checkpoints: they serve only resumption, and what they hold of its
        rounds, verdicts and revisions is in rows by now (a finished run's stored with its end, from
        this very state). A deletion that fails leaves them to the run's deletion or the retention
        purge; the run has ended either way. A run that failed outside the loop keeps its states
        until then: they may hold a round its stream had not recorded yet."""
        try:
            await self.delete_checkpoints([run_id])
        except Exception:
            log.warning("run.checkpoints_left", run_id=run_id, exc_info=True)

    async def _fail(
        self,
        attempt: Attempt,
        status: str,
        reason: str,
        failure: dict[str, Any] | None = None,
        settle: Settle | None = None,
    ) -> bool:
        run_id, held = attempt.run_id, self.recorder.holds_spend

        async def end(session: AsyncSession) -> tuple[Run, dict[str, Any]]:
            if not await repo.finish_run(
                session, run_id, status, reason, None, failure, owner=self.worker, held=held
            ):
                raise LeaseLost(run_id)
            if settle is not None:
                await settle(session, None)
            run = await session.get(Run, run_id)
            assert run is not None
            grading = grading_progress(status, run.review)
            return run, {"status": status, "reason": reason, "grading_progress": grading}

        attempt.ending = True  # its end commit checks the lease itself (``finish_run``'s owner)
        try:
            await self.recorder.failed(
                attempt, {"type": "run.failed", "status": status, "reason": reason}, end
            )
        except LeaseLost:
            log.warning("run.lease_lost", run_id=run_id)
            return False
        self.metrics.observe_run(status, None, None)
        self.wake_webhooks()
        return True
