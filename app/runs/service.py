"""Executing runs in the background: durable through the checkpointer, recorded exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

import structlog
from sqlalchemy import insert
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import SQLModel, col, select

from agents.identity import Warrants
from agents.llm.calls import CallFailure
from agents.llm.lanes import Lanes, RunLane, Stopping, holding
from agents.panel import PanelFactory
from agents.schemas import Problem, RevisionResult
from app.access.budget import Budget
from app.access.metering import Meter, escalation_judges, metered, run_budget
from app.access.usage import owner_of
from app.db import short_session
from app.errors import QuotaExceeded
from app.grading import GradingProgress, grading_progress
from app.heap import freeze_startup_heap
from app.metrics import ServiceMetrics
from app.models import RUN_TERMINAL, ProblemRow, Run, utcnow
from app.runs import repository as repo
from app.runs.stream import Notifier, StreamEvent, announce
from app.settings import Settings
from app.validity.guarantee import target_of, thresholds
from app.validity.records import run_warrants, with_warrant
from app.webhooks import enqueue
from graphs.context import RunContext
from graphs.escalation import Guarantee, Stage
from graphs.events import (
    JudgeVerdictEvent,
    RevisionProposed,
    RoundEscalated,
    RoundEvent,
    RunEvent,
    RunFinished,
)
from graphs.result import EventSink, RunResult, build_result, finished_event
from graphs.scoring import ScoringPolicy, get_policy
from graphs.state import RefinementState, Round

if TYPE_CHECKING:
    # LangGraph (and, through langchain-core, langsmith) loads with the first graph built or run,
    # not with the import of the executor: `thinkloop --help` and a server's settings need neither.
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import Durability, StreamMode

    # the model client stack loads with the first model-backed panel, not here
    from agents.llm.client import ResponseCache

log = structlog.get_logger(__name__)
Work = Callable[[AsyncSession], Awaitable[None]]
# More changes made in the transaction that stores a run's end state (a batch item's own columns).
Settle = Callable[[AsyncSession, RunResult | None], Awaitable[None]]
# (session, run, outcome, stop reason, (round, question, solution) decided) → grading progress
EndHook = Callable[[AsyncSession, Run, str, str, tuple[int, str, str]], Awaitable[GradingProgress]]


def dedupe_key(event: dict[str, Any]) -> str | None:
    """Events that may be re-emitted when a run resumes are recorded once, by this key."""
    kind = event["type"]
    if kind == "reviser.thinking":
        return None
    parts = [kind, event.get("round", ""), event.get("judge", "")]
    if "stage" in event:  # one round.escalated event per stage of the cascade
        parts.append(event["stage"])
    return ":".join(str(part) for part in parts)


# Think-aloud deltas are joined for this long before they are stored (and streamed): a reviser that
# streams a few characters at a time would otherwise cost a transaction per few characters.
THINKING_WINDOW_S = 0.25


@dataclasses.dataclass
class _Write:
    """A change waiting for the run's writer: a transcript event, or a graph step's rows."""

    event: dict[str, Any] | None = None
    key: str | None = None
    update: dict[str, Any] | None = None


@dataclasses.dataclass
class _Transcript:
    """What this process knows of a run's transcript while it executes the run.

    The graph does not wait for the database: events and rows are queued, and one writer task per
    run stores everything queued so far in one transaction, then streams the events. A round's
    seven verdicts usually land in one transaction, and no LLM call waits for a commit.
    """

    seq: int
    keys: set[str]  # dedupe keys stored or queued
    thinking: dict[str, Any] | None = None  # think-aloud not queued yet: its deltas joined
    thinking_since: float = 0.0
    queued: list[_Write] = dataclasses.field(default_factory=list)
    writer: asyncio.Task[None] | None = None
    failed: BaseException | None = None  # why the writer stopped (the lease was lost, the database away)

    def stop(self) -> None:
        if self.writer is not None:
            self.writer.cancel()


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
        executor = RunExecutor(sessions, graph, factory, settings, metrics or ServiceMetrics())
        freeze_startup_heap()  # the process's start-up heap: never scanned again by the collector
        yield executor


# Transcript rows in one executemany on the table, without the ORM: its bulk INSERT would split rows
# with and without a dedupe key into one statement each, and it costs CPU per row (bench/overhead.py).
_EVENTS = insert(SQLModel.metadata.tables["transcript_events"])


def _event_row(run_id: str, seq: int, kind: str, key: str | None, data: dict[str, Any]) -> dict[str, Any]:
    """A transcript event's row (``TranscriptEvent``'s columns)."""
    return {
        "run_id": run_id,
        "seq": seq,
        "type": kind,
        "dedupe_key": key,
        "data": data,
        "created_at": utcnow(),
    }


def _failed(work: asyncio.Future[Any]) -> bool:
    """Whether a run's work raised an error that its caller ends the run with (``fail_here``): not a
    lost lease, a process stopping or a cancellation, after which nobody ends the run here."""
    if not work.done() or work.cancelled():
        return False
    error = work.exception()
    return isinstance(error, Exception) and not isinstance(error, LeaseLost | Stopping)


class LeaseLost(Exception):
    """This process no longer holds the run: it ended or was cancelled elsewhere, or was taken over."""


class RunExecutor:
    """Runs refinement graphs as background tasks and records everything they produce.

    Every run is a durable job. A process executes a run only while it holds the run's lease (one
    conditional update claims it), renews the lease while the run executes, and hands it back on a
    graceful stop; a run whose lease lapsed (its process died) is taken over by whichever live
    process sweeps first, and resumes from its last checkpoint. So any number of API processes can
    share one database without executing a run twice, and none waits for a restart.
    """

    # Whether a run's rows and events wait for its end (or its failure) to be stored, in one
    # transaction: for a store nobody else reads while the run runs (``TemporaryExecutor``). Here
    # they are stored as they happen, so other processes can follow the run and resume it.
    defer_writes = False

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        graph: Any,
        factory: PanelFactory,
        settings: Settings,
        metrics: ServiceMetrics,
    ) -> None:
        self.sessions, self.graph, self.factory = sessions, graph, factory
        self.settings, self.metrics = settings, metrics
        self.notifier = Notifier()
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self.lease = timedelta(seconds=settings.run_lease_s)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        # Runs executed in their callers' tasks (batch items, ``execute_here``), by the task driving each.
        self._here: dict[str, asyncio.Task[RunResult | None]] = {}
        self._lost: set[str] = set()
        # Runs whose end this process is storing or has stored: past the end commit their leases are
        # gone (the run ended), but they are not lost: their tasks still drop the checkpoints.
        self._ending: set[str] = set()
        # More work for each sweep (a batch runtime's: re-send items nobody holds), besides the runs.
        self.sweepers: list[Callable[[], Awaitable[object]]] = []
        self.is_running = False  # within ``running()``: the heartbeat renews the leases held here
        self._claim_runs = True
        self._transcripts: dict[str, _Transcript] = {}
        self.wake_webhooks: Callable[[], None] = lambda: None  # the app sets its outbox's wake()
        # What a durable store does when a run ends (the app sets its review queue's entry); None:
        # nothing (a temporary store's runs, a bench's, never enter a queue).
        self.on_end: EndHook | None = None
        # Whether its runs may hold reservations of the daily ledgers (a temporary store's never do:
        # its runs end without looking their holds up).
        self.holds_spend = True
        # With workers (Redis): how a new run reaches them. None: this process executes its runs.
        self.send: Callable[[str], Awaitable[None]] | None = None
        # A run's typed events as they happen, for a caller in this process that shows them live
        # (`thinkloop refine`'s trace), beside what is recorded: by run id, set before it executes.
        self.observers: dict[str, EventSink] = {}
        self._closing = False

    @property
    def embedded(self) -> bool:
        """Whether runs submitted here execute here (no workers)."""
        return self.send is None

    def lease_deadline(self) -> datetime:
        """When a lease taken now lapses (a run created here is held by this process from the start)."""
        return utcnow() + self.lease

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
        task = self._tasks.get(run_id)
        if task is not None:
            await asyncio.wait({task})
        async with short_session(self.sessions) as session:
            status = (await session.execute(select(col(Run.status)).where(col(Run.id) == run_id))).scalar()
        return str(status or "missing")

    def submit(self, run_id: str, lanes: Lanes | None = None) -> None:
        """Start (or resume) a run in the background, if this process can claim it."""
        if run_id not in self._tasks and not self._closing:
            task = asyncio.create_task(self._execute(run_id, lanes), name=f"run-{run_id}")
            self._tasks[run_id] = task
            task.add_done_callback(lambda _: self._stopped(run_id))

    def _stopped(self, run_id: str) -> None:
        self._tasks.pop(run_id, None)
        self._lost.discard(run_id)
        self._forget(run_id)

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
        if self._claim_runs:
            async with short_session(self.sessions) as session:
                ids = await repo.claimable_runs(session, limit=100)
            for run_id in ids:
                if run_id not in self._tasks:
                    self.submit(run_id)
                    started += 1
        for sweeper in self.sweepers:
            await sweeper()
        return started

    async def heartbeat(self) -> set[str]:
        """Renew this process's leases (its batch items' runs too); stop any run whose lease was
        lost. Returns the lost ids."""
        held = set(self._tasks) | set(self._here)
        if not held:
            return set()
        async with short_session(self.sessions) as session:
            kept = await repo.renew_leases(session, held, self.worker, self.lease)
        lost = set()
        for run_id in held - kept:
            task = self._tasks.get(run_id) or self._here.get(run_id)
            if task is None or task.done() or run_id in self._ending:  # it ended (or is ending) here
                continue
            log.warning("run.lease_lost", run_id=run_id)
            lost.add(run_id)
            self._lost.add(run_id)
            task.cancel()
        return lost

    async def wait(self, run_id: str, within_s: float) -> bool:
        """Wait for a run to end; True when it ended within ``within_s`` seconds. A run executed by
        another process (a worker, a replica) is waited for through its announcements."""
        task = self._tasks.get(run_id)
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
        if self.graph.checkpointer is None:  # a temporary store's graph keeps none
            return
        for run_id in run_ids:
            await self.graph.checkpointer.adelete_thread(run_id)

    def cancel(self, run_id: str) -> bool:
        """Cancel a running task; False when this process is not running it."""
        task = self._tasks.get(run_id)
        if task is None:
            return False
        task.cancel()
        return True

    async def shutdown(self) -> None:
        """Stop every task and hand their runs back: they stay unfinished, and the next sweep of
        any live process (or of this service's next start) resumes them from their checkpoints."""
        self._closing = True
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        try:
            async with short_session(self.sessions) as session:
                released = await repo.release_leases(session, self.worker)
            if released:
                log.info("runs.released", count=released)
        except (DBAPIError, OSError):  # unreachable: the leases lapse instead
            log.warning("runs.release_skipped", reason="database not reachable")

    async def _execute(self, run_id: str, lanes: Lanes | None = None) -> None:
        with structlog.contextvars.bound_contextvars(run_id=run_id):
            try:
                async with short_session(self.sessions) as session:
                    if not await repo.claim_run(session, run_id, self.worker, self.lease):
                        return  # finished, or another live process holds it
                await self._drive(run_id, lanes=lanes)
            except LeaseLost:
                log.warning("run.lease_lost", run_id=run_id)
            except Stopping:  # released by this process's shutdown, or left for its lease to lapse
                log.info("run.handed_back", run_id=run_id)
            except QuotaExceeded as exc:  # a round would pass a daily cap: it was never started
                capped = CallFailure.internal("thinkloop", exc).model_dump()  # an error run names its cause
                await self._fail(run_id, "error", f"stopped at a daily cap: {exc.detail}"[:500], capped)
            except asyncio.CancelledError:
                if not self._closing and run_id not in self._lost:
                    await self._fail(run_id, "cancelled", "cancelled by request")
                raise
            except Exception as exc:
                log.exception("run.failed")
                failure = CallFailure.internal("thinkloop", exc).model_dump()  # an error run names its cause
                await self._fail(
                    run_id, "error", f"internal error: {type(exc).__name__}: {exc}"[:500], failure
                )

    async def execute_here(
        self,
        run_id: str,
        *,
        cache: ResponseCache | None = None,
        settle: Settle | None = None,
        lanes: Lanes | None = None,
    ) -> RunResult | None:
        """Execute a run that this process has claimed, in the calling task: how a batch item runs.

        Everything is recorded as for any run (rows and transcript as they happen, so the run can be
        followed live; checkpoints, so a resumed run repeats no finished step). ``settle`` makes
        the caller's own changes in the transaction that stores the run's end state. The heartbeat
        (``running``) renews the lease with the others held here; if it finds the lease lost (taken
        over after missed renewals), the run stops and ``LeaseLost`` is raised. Other errors
        propagate (a database outage is the caller's to wait out and resume). Returns None when the
        run had already ended. A run holds one of ``lanes`` while it has model calls in flight; the
        first may raise ``Stopping`` (the run is then left as it is, for the caller).
        """
        # Driven by a task of its own, which the heartbeat stops alone: never the caller's task.
        work = asyncio.ensure_future(self._drive(run_id, cache, settle, lanes))
        self._here[run_id] = work
        try:
            try:
                await asyncio.wait({work})
            except asyncio.CancelledError:  # the caller stops: so does the run
                work.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await work
                raise
            if work.cancelled() and run_id in self._lost:
                raise LeaseLost(run_id)
            return work.result()
        finally:
            self._here.pop(run_id, None)
            self._lost.discard(run_id)
            if not _failed(work):
                self._forget(run_id)

    async def fail_here(
        self, run_id: str, status: str, reason: str, failure: dict[str, Any] | None, settle: Settle
    ) -> bool:
        """End a run executed by ``execute_here`` that raised; False when this process lost it. What
        the run recorded before it raised is stored first (``execute_here`` kept it for this)."""
        try:
            return await self._fail(run_id, status, reason, failure, settle)
        finally:
            self._forget(run_id)

    def _forget(self, run_id: str) -> None:
        self._ending.discard(run_id)
        transcript = self._transcripts.pop(run_id, None)
        if transcript is not None:
            transcript.stop()
        self.notifier.forget(run_id)

    async def _drive(
        self,
        run_id: str,
        cache: ResponseCache | None = None,
        settle: Settle | None = None,
        lanes: Lanes | None = None,
    ) -> RunResult | None:
        """Load, start, run the graph, end. The run holds a lane only while it has model calls in
        flight (``agents.llm.lanes``): its start, its end and its steps between calls overlap the model
        calls of the others."""
        run, problem = await self._load(run_id)
        if run.status in RUN_TERMINAL:
            return None
        context = await self.context_of(run, cache)
        if run.arm == "control":  # one blind revision, judged once
            context = dataclasses.replace(context, policy=dataclasses.replace(context.policy, max_rounds=1))
        # Started before (here or by a process that died), with or without a checkpoint written since.
        resuming = "run.started" in self._transcripts[run_id].keys
        await self._start(run_id, resuming)
        with holding(RunLane(lanes) if lanes is not None else None):
            self.metrics.in_flight.inc()
            try:
                result, finished = await self._loop(run_id, problem, context, resuming, run.arm)
            finally:
                self.metrics.in_flight.dec()
        if context.warrants is not None:
            result = with_warrant(result, context.warrants)
        await self._complete(run, result, finished, settle)
        return result

    async def context_of(self, run: Run, cache: ResponseCache | None) -> RunContext:
        """What the run depends on: the panel its model names build, its policy, and the warrants
        its panel may cite (``TemporaryExecutor`` takes the caller's context instead)."""
        policy = get_policy(run.policy, max_rounds=run.max_rounds)
        panel = self.factory.build(run.judge_model, run.model, cache)
        # each round reserved against the daily caps before its calls (app.access.budget), and so
        # is each stronger panel's step when an acceptance escalates
        registry = self.factory.registry
        budget = await run_budget(self.sessions, self.settings, registry, run, self._stronger(run))
        if budget is not None:
            panel = metered(panel, Meter(budget=budget, tally=False))
        guarantee = await self._guarantee(run, policy, cache, budget)
        return RunContext.of(panel, policy, warrants=await self._warrants(run, policy), guarantee=guarantee)

    def _stronger(self, run: Run) -> list[str]:
        """The stronger panels the run's acceptances may escalate to (``THINKLOOP_ESCALATE_TO``)."""
        return [name for name in self.settings.escalate_to if name != run.judge_model]

    async def _guarantee(
        self, run: Run, policy: ScoringPolicy, cache: ResponseCache | None, budget: Budget | None
    ) -> Guarantee | None:
        """The run's guarantee target with its panel's calibrated thresholds and the stronger panels
        it escalates to (``THINKLOOP_ESCALATE_TO``), each with its own, found by each panel's exact
        identity in the run's project (``app.validity.guarantee``), each stronger panel's calls
        reserved in the run's ``budget`` at its own model's prices; None without a target."""
        stronger = self._stronger(run)
        registry = self.factory.registry
        async with short_session(self.sessions) as session:
            target = await target_of(session, run)
            if target is None:
                return None
            found = await thresholds(
                session, registry, run.project_id, [run.judge_model, *stronger], policy, target
            )
        stages = tuple(
            Stage(
                name,
                escalation_judges(budget, registry, name, self.factory.build(name, run.model, cache).judges),
                policy,
                found[name],
            )
            for name in stronger
        )
        return Guarantee(target.alpha, target.delta, found[run.judge_model], stages)

    async def _warrants(self, run: Run, policy: ScoringPolicy) -> Warrants:
        """What the run's panel may cite, by the model id its endpoint reports, and the bound a
        required warrant sets (an acceptance above it goes to review)."""
        async with short_session(self.sessions) as session:
            return await run_warrants(
                session,
                self.factory.registry,
                run.judge_model,
                policy,
                run.project_id,
                self.settings.warrant_requirement(),
                self.settings.specificity_floor,
            )

    async def _loop(
        self, run_id: str, problem: Problem, context: RunContext, resuming: bool, arm: str = "loop"
    ) -> tuple[RunResult, RunFinished | None]:
        """The feedback loop (``arm`` "control": the zero-shot control arm, its one blind revision
        judged once), from its last checkpoint (``resuming``: the run was started before)."""
        config = self._config(run_id, context.policy.max_rounds)
        # The start is stored before the graph runs, so a run never started has no checkpoint to read.
        checkpointed = resuming and bool((await self.graph.aget_state(config)).values)
        start: RefinementState | None = (
            None
            if checkpointed
            else {"arm": arm, "original": problem, "current": problem, "previous": None, "round": 0}
        )
        observe = self.observers.get(run_id)
        finished: RunFinished | None = None
        state: RefinementState | None = None
        modes: list[StreamMode] = ["custom", "updates", "values"]
        stream = self.graph.astream(start, config, context=context, stream_mode=modes, **self._durability())
        async for mode, chunk in stream:
            if mode == "values":
                state = cast(RefinementState, chunk)  # after each step; the last is the final state
            elif mode == "updates":
                self._record_update(run_id, chunk)
            else:
                if observe is not None:
                    observe(chunk)
                if isinstance(chunk, RunFinished):
                    finished = chunk  # published after the run's final state is stored
                else:
                    self._record_event(run_id, chunk)
        if self.graph.checkpointer is not None and (state is None or not state.get("rounds")):
            # Nothing was left to execute, or a resumed stream's last values were taken before a round
            # it had already judged: the checkpoint holds the run's whole state.
            state = (await self.graph.aget_state(config)).values
        assert state is not None, "a graph without checkpoints streams its state after every step"
        return build_result(state, context.policy), finished

    def _config(self, run_id: str, max_rounds: int = 0) -> RunnableConfig:
        """The run's graph configuration: its checkpoint thread, and the steps its rounds allow."""
        from graphs.refinement import recursion_limit

        return {"configurable": {"thread_id": run_id}, "recursion_limit": recursion_limit(max_rounds)}

    def _durability(self) -> dict[str, Durability]:
        """Each step's checkpoint is stored before the next step's model calls start ("sync"): a
        run taken over repeats only the step it was in, and none waits at its end for a queue of
        checkpoint writes. LangGraph's default ("async") stores them in the background, where under
        load they fell whole runs behind the work. A graph without checkpoints takes no mode."""
        return {} if self.graph.checkpointer is None else {"durability": "sync"}

    async def _load(self, run_id: str) -> tuple[Run, Problem]:
        async with short_session(self.sessions) as session:
            run = await session.get(Run, run_id)
            if run is None:
                raise LookupError(run_id)
            row = await session.get(ProblemRow, run.problem_id)
            assert row is not None
            seq, keys = await repo.last_event(session, run_id)
        self._begin(run_id, seq, keys)
        return run, Problem(question=row.question, solution=row.solution)

    def _begin(self, run_id: str, seq: int, keys: set[str]) -> None:
        """The run's transcript as this attempt starts it. An earlier attempt here that raised (and
        is executed again, after an outage) no longer writes: its writer stops."""
        earlier = self._transcripts.get(run_id)
        if earlier is not None:
            earlier.stop()
        self._transcripts[run_id] = _Transcript(seq, keys)

    async def _start(self, run_id: str, resuming: bool) -> None:
        """Mark the run running and say so in its transcript. A fresh start is one transaction (the
        status with its first event), as it sits before the item's first call."""

        async def running(session: AsyncSession) -> None:
            await self._still_held(session, run_id)
            run = await session.get(Run, run_id)
            assert run is not None
            run.status = "running"

        if not resuming:
            await self._append(run_id, {"type": "run.started"}, "run.started", along=running)
            return
        saved = (await self.graph.aget_state(self._config(run_id))).values if self.graph.checkpointer else {}
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

        replayed = self._undescribed(run_id, rounds, revisions, saved.get("original"))
        log.info("run.resumed", executor=self.worker, replayed=len(replayed))
        try:
            await self._append(run_id, event, None, along=resume, held=replayed)
        except IntegrityError:  # an earlier attempt's writer stored more since the transcript was read
            await self._reread(run_id)
            replayed = self._undescribed(run_id, rounds, revisions, saved.get("original"))
            await self._append(run_id, event, None, along=resume, held=replayed)

    async def _reread(self, run_id: str) -> None:
        """The run's transcript as stored (its last seq number and its dedupe keys)."""
        async with short_session(self.sessions) as session:
            self._transcripts[run_id] = _Transcript(*await repo.last_event(session, run_id))

    def _undescribed(
        self, run_id: str, rounds: list[Round], revisions: list[RevisionResult], original: Problem | None
    ) -> list[_Write]:
        """The events of the run's rounds and revisions that its transcript lacks (lost with a
        process or a database connection after their checkpoint was stored), rebuilt from them."""
        if original is None:
            return []
        transcript, missing = self._transcripts[run_id], []
        from graphs.replay import described

        for event in described(rounds, revisions, original):
            data = event.model_dump(mode="json")
            key = dedupe_key(data)
            if key is not None and key not in transcript.keys:
                transcript.keys.add(key)
                missing.append(_Write(event=data, key=key))
        return missing

    def _record_update(self, run_id: str, update: dict[str, Any]) -> None:
        self._flush_thinking(run_id)
        self._queue(run_id, _Write(update=update))

    def _record_event(self, run_id: str, event: RunEvent) -> None:
        if isinstance(event, JudgeVerdictEvent):
            self.metrics.observe_call(event.model, "judge", event.usage)
        elif isinstance(event, RevisionProposed):
            self.metrics.observe_call(event.model, "reviser", event.usage)
        elif isinstance(event, RoundEvent) and event.solver is not None:
            self.metrics.observe_call(event.solver.model, "solver", event.solver.usage)
        elif isinstance(event, RoundEscalated) and (event.usage.calls or event.usage.failed_attempts):
            # A stronger panel's judges, as one observation: its latency is the stage's calls summed.
            self.metrics.observe_call(event.panel, "escalation", event.usage)
        data = event.model_dump(mode="json")
        if data["type"] == "reviser.thinking":
            self._think(run_id, data)
            return
        self._flush_thinking(run_id)
        key = dedupe_key(data)
        transcript = self._transcripts[run_id]
        if key is None or key not in transcript.keys:
            if key is not None:
                transcript.keys.add(key)
            self._queue(run_id, _Write(event=data, key=key))

    def _think(self, run_id: str, data: dict[str, Any]) -> None:
        """Hold a think-aloud delta, joined to the ones before it of the same round; queue them
        once they span ``THINKING_WINDOW_S`` (and before any other event)."""
        transcript = self._transcripts[run_id]
        held = transcript.thinking
        if held is not None and held["round"] == data["round"]:
            held["delta"] += data["delta"]
        else:
            self._flush_thinking(run_id)
            transcript.thinking, transcript.thinking_since = data, time.monotonic()
        if time.monotonic() - transcript.thinking_since >= THINKING_WINDOW_S:
            self._flush_thinking(run_id)

    def _flush_thinking(self, run_id: str) -> None:
        transcript = self._transcripts[run_id]
        if transcript.thinking is not None:
            data, transcript.thinking = transcript.thinking, None
            self._queue(run_id, _Write(event=data))

    def _queue(self, run_id: str, write: _Write) -> None:
        """Hand a change to the run's writer (started when idle). Raises why the writer stopped, so
        the run ends on a lost lease or an unreachable database as if it had written itself."""
        transcript = self._transcripts[run_id]
        if transcript.failed is not None:
            raise transcript.failed
        transcript.queued.append(write)
        if not self.defer_writes:
            self._start_writer(run_id, transcript)

    def _start_writer(self, run_id: str, transcript: _Transcript) -> None:
        if transcript.writer is None or transcript.writer.done():
            transcript.writer = asyncio.create_task(self._write(run_id, transcript), name=f"write-{run_id}")

    async def _write(self, run_id: str, transcript: _Transcript) -> None:
        """The run's writer: everything queued so far, in one transaction, until nothing is."""
        while transcript.queued and transcript.failed is None:
            writes, transcript.queued = transcript.queued, []
            try:
                await self._store(run_id, transcript, writes)
            except Exception as exc:  # surfaces in the run's task, at its next change or its end
                transcript.failed, transcript.queued = exc, []

    async def _drain(self, run_id: str) -> None:
        """Wait until everything queued for the run is stored; raise why it could not be."""
        transcript = self._transcripts[run_id]
        if transcript.queued and transcript.failed is None:
            self._start_writer(run_id, transcript)  # deferred writes (``defer_writes``) go now
        if transcript.writer is not None:
            await asyncio.wait({transcript.writer})
        if transcript.failed is not None:
            raise transcript.failed

    async def _store(self, run_id: str, transcript: _Transcript, writes: list[_Write]) -> None:
        """Store queued changes in one transaction, then stream their events in order. A duplicate
        (stored by an earlier attempt that the keys in memory did not know of) is skipped alone."""
        events: list[tuple[int, dict[str, Any]]] = []
        try:
            async with short_session(self.sessions) as session:
                await self._still_held(session, run_id)
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
                        data = write.event
                        kind, key = data["type"], write.key
                        events.append((seq, data))
                        rows.append(_event_row(run_id, seq, kind, key, data))
                if rounds or revisions:
                    await repo.record_rounds(session, run_id, rounds, revisions, held=self.holds_spend)
                if rows:
                    await session.execute(_EVENTS, rows)
                if events:
                    await announce(session, run_id, events[-1][0])  # wakes streams elsewhere at commit
        except IntegrityError:
            if len(writes) == 1:
                log.warning("transcript.duplicate", key=writes[0].key)
                return
            for write in writes:
                await self._store(run_id, transcript, [write])
            return
        for seq, data in events:
            transcript.seq = seq
            self._publish(run_id, seq, data)

    async def _append(
        self,
        run_id: str,
        data: dict[str, Any],
        key: str | None,
        along: Work | None = None,
        held: Sequence[_Write] = (),
    ) -> None:
        """Store the run's next transcript event and publish it to its streams.

        ``along`` makes more changes in the same transaction: a run's end state is stored with its
        end event, so a stream that sees the run ended also sees the event that ends the stream.
        ``held``: changes queued and held back until now (``defer_writes``), whose events go first, in
        the same INSERT; their rounds and revisions are ``along``'s to store (the run's end stores
        all of them from its final state).
        """
        transcript = self._transcripts[run_id]
        duplicate = key is not None and key in transcript.keys
        events = [(write.event, write.key) for write in held if write.event is not None]
        if not duplicate:
            events.append((data, key))
        try:
            async with short_session(self.sessions) as session:
                if along is not None:
                    await along(session)
                else:
                    await self._still_held(session, run_id)
                if events:
                    rows = [
                        _event_row(run_id, transcript.seq + n, event["type"], dedupe, event)
                        for n, (event, dedupe) in enumerate(events, 1)
                    ]
                    await session.execute(_EVENTS, rows)
                    await announce(session, run_id, transcript.seq + len(rows))  # wakes streams at commit
        except IntegrityError:
            if held:  # nothing of a run whose writes wait is stored before its end: not a duplicate
                raise
            log.warning("transcript.duplicate", key=key)
            if along is not None:  # the event is stored already; the changes still have to be
                async with short_session(self.sessions) as session:
                    await along(session)
            return
        for event, _ in events:
            transcript.seq += 1
            self._publish(run_id, transcript.seq, event)
        if key is not None:
            transcript.keys.add(key)

    async def _ended(self, session: AsyncSession, run: Run, result: RunResult) -> GradingProgress:
        """The run's grading progress once it ended, after its ``on_end`` hook (the service's review
        queue: ``app.reviews.queue.on_run_end``) had its say, in the run's end transaction."""
        if self.on_end is None:
            return grading_progress(result.outcome, run.review)
        last = result.rounds[-1].round if result.rounds else 0
        version = (last, result.final.question, result.final.solution)
        return await self.on_end(session, run, result.outcome, result.stop_reason, version)

    async def _webhooks(self, session: AsyncSession, run: Run, kind: str, payload: dict[str, Any]) -> None:
        """Queue the run's end for its webhooks, in its end transaction."""
        await enqueue(session, run, kind, payload)

    def _publish(self, run_id: str, seq: int, data: dict[str, Any]) -> None:
        """Hand a stored event to the run's streams in this process."""
        self.notifier.publish(run_id, StreamEvent.of(seq, data["type"], data))

    async def _still_held(self, session: AsyncSession, run_id: str) -> None:
        """Write nothing more for a run this process no longer holds (cancelled or taken over
        elsewhere since the last renewal): the transaction rolls back and the run's task ends."""
        if not await repo.holds(session, run_id, self.worker):
            raise LeaseLost(run_id)

    async def _complete(
        self, run: Run, result: RunResult, finished: RunFinished | None, settle: Settle | None = None
    ) -> None:
        self._flush_thinking(run.id)
        transcript = self._transcripts[run.id]
        held: list[_Write] = []
        if self.defer_writes:  # what the run queued goes in with its end, in one transaction
            held, transcript.queued = transcript.queued, []
        else:
            await self._drain(run.id)
        # The events of rounds a resumed run took from its checkpoint's pending writes, and any other
        # whose event was lost: stored with the rows, just before the end.
        held += self._undescribed(run.id, result.rounds, result.revisions, result.original)

        async def store(session: AsyncSession) -> None:
            # The checkpoint is the source of truth: store any round an interrupted stream missed
            # (none is stored while the transcript is empty: a deferred run's, until this commit).
            await repo.record_rounds(
                session,
                run.id,
                result.rounds,
                result.revisions,
                none_stored=transcript.seq == 0,
                owner=owner_of(run),
                held=self.holds_spend,
            )
            failure = result.failure.model_dump() if result.failure else None
            ended = await repo.finish_run(
                session,
                run.id,
                result.outcome,
                result.stop_reason,
                repo.facts(result),
                failure,
                owner=self.worker,
                held=self.holds_spend,
            )
            if not ended:  # rolled back with the end event: the run's end state was set elsewhere
                raise LeaseLost(run.id)
            if settle is not None:
                await settle(session, result)
            grading = await self._ended(session, run, result)
            payload = {**event, "metrics": result.metrics, "grading_progress": grading}
            await self._webhooks(session, run, "run.finished", payload)

        event = (finished or finished_event(result)).model_dump(mode="json")
        event["status"] = result.outcome  # the run's status, named as in traces and webhooks
        event["warrant"] = result.warrant  # an accepted run's: in its stream and its webhooks too
        self._ending.add(run.id)  # its end commit checks the lease itself (``finish_run``'s owner)
        try:
            await self._append(run.id, event, "run.finished", along=store, held=held)
        except BaseException:
            transcript.queued[:0] = held  # rolled back: ``_fail`` stores them before the failure
            raise
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
        run_id: str,
        status: str,
        reason: str,
        failure: dict[str, Any] | None = None,
        settle: Settle | None = None,
    ) -> bool:
        if run_id in self._transcripts:  # what the run recorded before it failed goes first
            with contextlib.suppress(Exception):
                await self._drain(run_id)
        await self._reread(run_id)  # the writer may have stopped half-way
        event = {"type": "run.failed", "status": status, "reason": reason}

        async def store(session: AsyncSession) -> None:
            if not await repo.finish_run(
                session, run_id, status, reason, None, failure, owner=self.worker, held=self.holds_spend
            ):
                raise LeaseLost(run_id)
            if settle is not None:
                await settle(session, None)
            run = await session.get(Run, run_id)
            assert run is not None
            grading = grading_progress(status, run.review)
            payload = {"status": status, "reason": reason, "grading_progress": grading}
            await self._webhooks(session, run, "run.failed", payload)

        self._ending.add(run_id)  # its end commit checks the lease itself (``finish_run``'s owner)
        try:
            await self._append(run_id, event, "run.failed", along=store)
        except LeaseLost:
            log.warning("run.lease_lost", run_id=run_id)
            return False
        self.metrics.observe_run(status, None, None)
        self.wake_webhooks()
        return True
