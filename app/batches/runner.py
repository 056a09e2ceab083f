"""Processing batch items: claim once (under the item's run's lease), run the loop (or the control
arm), record once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
import psycopg_pool
import structlog
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_delay,
)

from agents.llm.calls import CallFailure
from agents.llm.lanes import Lanes, Stopping
from agents.llm.models import UnknownModelError
from agents.llm.retrying import OUTAGE_BACKOFF, log_retry
from agents.outcome import Outcome
from app.batches import repository as repo
from app.batches.cache import SqlResponseCache
from app.datasets import repository as datasets_repo
from app.db import short_session
from app.models import (
    BATCH_ACTIVE,
    RUN_UNFINISHED,
    Batch,
    BatchItem,
    BatchStatus,
    Run,
    RunStatus,
    utcnow,
)
from app.runs import repository as runs_repo
from app.runs.executor import LeaseLost, RunExecutor
from graphs.result import RunResult

log = structlog.get_logger(__name__)
T = TypeVar("T")
# The database (rows, or the checkpointer's pool) is unreachable: wait, then resume the run.
OUTAGE = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg_pool.PoolTimeout)


class _Taken(Exception):
    """Another process claimed the item first (rolls this claim back, with any run it created)."""


class BatchRunner:
    """What a worker (or the service's in-process broker) does with one item id.

    An item is executed as a run, by the run executor, and under that run's lease: the run is
    created when the item is first claimed (so ``GET /v1/runs/{id}`` and its event stream follow it
    live), held by this process from that moment, renewed by the executor's heartbeat with every
    other run executed here, checkpointed as it goes, and ended in the same transaction as the
    item's result. A worker that dies mid-item leaves the lease to lapse; the next claim takes the
    run over and resumes it from its checkpoint. The process must have the executor running
    (``RunExecutor.running``), whose heartbeat renews the lease.

    ``concurrency`` bounds the items whose runs have model calls in flight at once (the lanes,
    ``agents.llm.lanes``). The broker hands over ``prefetch`` more, so that items are claimed, started
    and between steps while the lanes are busy with other items' calls: a lane goes from one step's
    last reply straight to a waiting step's first call, and an item's claim, scoring, checkpoints
    and end transaction are written outside any lane. A freed lane goes to an item that has called
    before ahead of a fresh one, so the items claimed ahead are a reserve that has made no call and
    is handed back at once when the process stops.
    """

    def __init__(self, executor: RunExecutor, concurrency: int, outage_s: float = 300.0) -> None:
        self.executor = executor
        self.sessions = executor.sessions
        # Places for runs with model calls in flight in this process (batch items, and a worker's
        # API runs): a run holds one from its first call of a step to its last reply.
        self.lanes = Lanes(concurrency)
        self._active = 0
        self._in_flight: dict[int, asyncio.Task[Any]] = {}  # the items processed here, by their tasks
        self._idle = asyncio.Event()
        self._idle.set()
        self.lease = executor.lease  # THINKLOOP_RUN_LEASE_S: an item is held by its run's lease
        self.worker = executor.worker
        self.outage_s = outage_s

    async def process(self, item_id: int) -> str:
        """Run one item if it can be claimed; returns what happened (for logs and tests)."""
        self._active += 1
        self._idle.clear()
        task = asyncio.current_task()
        assert task is not None  # a coroutine is always run by a task
        try:
            if self.closing:  # shutting down: leave the item pending for the next process
                return "closing"
            if item_id in self._in_flight:  # delivered twice: this process runs it already
                return "taken"
            self._in_flight[item_id] = task
            return await self._process(item_id)
        finally:
            if self._in_flight.get(item_id) is task:
                del self._in_flight[item_id]
            self._active -= 1
            if not self._active:
                self._idle.set()

    @property
    def closing(self) -> bool:
        """Shutting down: nothing more is claimed, and a run that has not called a model yet is
        handed back when it asks for a lane (or at once, if it is waiting for one)."""
        return self.lanes.closing

    def stop_claiming(self) -> None:
        """Begin shutting down (see ``closing``)."""
        self.lanes.close()

    async def drain(self) -> None:
        """Wait until no item is being processed or waiting for a slot (graceful shutdown)."""
        await self._idle.wait()

    async def close(self, grace_s: float) -> int:
        """Claim nothing more, let items in flight finish for ``grace_s``, then hand back the rest."""
        self.stop_claiming()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.drain(), grace_s)
        return await self.release()

    async def interrupt(self, within_s: float = 30.0) -> int:
        """Stop now (the user interrupted): claim nothing more, stop the items in flight where they
        are (each run keeps its checkpoints), and hand them back with their runs' leases, so that a
        resume anywhere can take them at once; how many were handed back."""
        self.stop_claiming()
        for task in list(self._in_flight.values()):
            task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.drain(), within_s)
        return await self.release()

    async def release(self) -> int:
        """Hand back every item this worker runs, and their runs (queued again, free to claim)."""
        try:
            async with short_session(self.sessions) as session:
                released = await repo.release(session, self.worker)
        except DBAPIError:  # unreachable: the claims expire after the lease instead
            log.warning("batch.release_skipped", reason="database not reachable", worker=self.worker)
            return 0
        if released:
            log.info("batch.items_released", count=released, worker=self.worker)
        return released

    async def _process(self, item_id: int) -> str:
        try:
            # A claim is retried through an outage; one whose commit landed unacknowledged finds the
            # item's run held by this worker, which is accepted (nothing here runs it: see process).
            claimed = await self._db(lambda session: self._claim(session, item_id))
        except _Taken:
            return "taken"
        if isinstance(claimed, str):
            return claimed
        batch, item, run_id = claimed
        with structlog.contextvars.bound_contextvars(batch_id=batch.id, item_id=item_id, run_id=run_id):
            outcome = await self._run(batch, item, run_id)
        await self._db(lambda session: self._after(session, batch.id))
        return outcome

    async def _claim(self, session: AsyncSession, item_id: int) -> str | tuple[Batch, BatchItem, str]:
        """The item, its batch and its run's id if this worker may run it; otherwise why not.

        The item is held by its run's lease. The first claim creates the item's run, held by this
        worker from the start; a later claim (the previous worker died or stopped) takes the
        unfinished run's lease over, to resume it. A retried item gets a new run; the failed one
        stays, as the record of that attempt.
        """
        found = await repo.item_with_batch(session, item_id)
        if found is None:
            return "missing"
        item, batch = found
        if batch.status not in BATCH_ACTIVE:
            return f"batch {batch.status}"
        if item.status not in RUN_UNFINISHED:
            return "taken"  # it ended (or was cancelled) since it was sent
        if await self._over_budget(session, batch):
            return "budget"
        unknown = self._unknown_model(item.model, batch.judge_model)
        if unknown is not None:  # another process's registry has it: leave the item to that one
            log.warning("batch.item_model_unknown", item_id=item_id, model=unknown, worker=self.worker)
            await repo.turn_away(session, item_id, f"{self.worker} has no model '{unknown}' in its registry")
            return f"unknown model {unknown}"
        run = await session.get(Run, item.run_id) if item.run_id is not None else None
        if run is not None and run.status in RUN_UNFINISHED:
            # Its run started before: take its lease over (lapsed, handed back, or already this
            # worker's: a claim committed while its answer was lost, which is not another attempt).
            again = item.status == RunStatus.RUNNING and run.lease_owner == self.worker
            if not await runs_repo.claim_run(session, run.id, self.worker, self.lease):
                return "taken"  # its worker is alive and renews the lease
            if not await repo.take(session, item_id, run.id, run.id, again=again):
                raise _Taken(item_id)
            run_id = run.id
        else:  # never claimed, or its run ended and the item is queued again (a retry): a new run
            run = Run(
                project_id=batch.project_id,
                problem_id=item.problem_id,
                meta=await datasets_repo.row_meta(session, batch.dataset_id, item.problem_id),
                status=RunStatus.QUEUED,
                model=item.model,
                judge_model=batch.judge_model,
                policy=batch.policy,
                max_rounds=batch.max_rounds,
                batch_id=batch.id,
                arm=item.arm,
                lease_owner=self.worker,
                lease_until=self.executor.lease_deadline(),
            )
            session.add(run)
            await session.flush()
            if not await repo.take(session, item_id, run.id, item.run_id):
                raise _Taken(item_id)  # another process took it first: this run is rolled back
            run_id = run.id
        if batch.status == BatchStatus.QUEUED:  # its first claim (of any process: conditional)
            await repo.transition(session, batch.id, (BatchStatus.QUEUED,), status=BatchStatus.RUNNING)
        return batch, item, run_id

    def _unknown_model(self, *names: str) -> str | None:
        """The first of ``names`` this process's model registry does not know, if any.

        Registries differ between processes (`thinkloop view` on a laptop, a worker with the
        provider's keys): an item is run only where its models are known, and otherwise stays
        pending, untouched, for a process that knows them. Failing it here made opening the viewer
        turn another process's batch into errors."""
        for name in names:
            try:
                self.executor.factory.registry.get(name)
            except UnknownModelError:
                return name
        return None

    async def _db(self, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
        """One short transaction, retried while the database is unreachable (up to ``outage_s``)."""

        async def once() -> T:
            async with short_session(self.sessions) as session:
                return await work(session)

        return await self._through_outages(once)

    async def _through_outages(
        self, work: Callable[[], Awaitable[T]], event: str = "batch.database_unavailable"
    ) -> T:
        """``work()``, again after a backoff whenever the database (rows, or the checkpointer's
        pool) is unreachable, for up to ``outage_s``: an outage pauses the batch."""
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(OUTAGE),
            wait=OUTAGE_BACKOFF,
            stop=stop_after_delay(self.outage_s),
            before_sleep=log_retry(event),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await work()
        raise AssertionError("unreachable")  # AsyncRetrying either returns or re-raises

    async def _run(self, batch: Batch, item: BatchItem, run_id: str) -> str:
        assert item.id is not None
        item_id = item.id

        async def settle(session: AsyncSession, result: RunResult | None) -> None:
            """The item's result, stored with its run's end: only while this worker holds the item."""
            hits = cache.hits if cache is not None else 0
            columns = _columns(result, hits) if result is not None else failed
            if not await repo.complete(session, item_id, run_id, **columns):
                raise LeaseLost(run_id)

        cache = SqlResponseCache(self.sessions, batch.project_id, batch.id) if batch.use_cache else None
        failed: dict[str, Any] = {}
        try:  # anything that goes wrong fails this item alone, never leaves it 'running'
            # After an outage the run resumes from its last checkpoint.
            result = await self._through_outages(
                lambda: self.executor.execute_here(run_id, cache=cache, settle=settle, lanes=self.lanes),
                "batch.run_paused",
            )
            if result is None:  # it ended elsewhere since the claim (its end state was not ours)
                return "lost-claim"
        except LeaseLost:
            return "lost-claim"
        except Stopping:  # never called a model before the process closed: handed back by close()
            return "closing"
        except Exception as exc:  # an item fails alone; the batch goes on
            failure = internal_failure(item.model, exc)
            failed.update(
                status=RunStatus.ERROR,
                error=failure.summary(),
                failure=failure.model_dump(),
            )
            log.exception("batch.item_failed")
            ended = await self._through_outages(
                lambda: self.executor.fail_here(
                    run_id, Outcome.ERROR, failure.summary(), failure.model_dump(), settle
                )
            )
            return RunStatus.ERROR if ended else "lost-claim"
        return str(result.outcome)

    async def _over_budget(self, session: AsyncSession, batch: Batch) -> bool:
        if batch.budget_tokens is None and batch.budget_usd is None:
            return False
        spent = await repo.totals(session, batch.id)
        tokens = spent["input_tokens"] + spent["output_tokens"]
        over_tokens = batch.budget_tokens is not None and tokens >= batch.budget_tokens
        over_cost = batch.budget_usd is not None and spent["cost_usd"] >= batch.budget_usd
        if not (over_tokens or over_cost):
            return False
        reason = f"budget reached: {tokens} tokens, ${spent['cost_usd']:.4f}"
        if await repo.transition(
            session,
            batch.id,
            BATCH_ACTIVE,
            status=BatchStatus.BUDGET_EXHAUSTED,
            stop_reason=reason,
            finished_at=utcnow(),
        ):
            await repo.set_items(session, batch.id, (RunStatus.QUEUED,), RunStatus.CANCELLED)
            log.info("batch.budget_exhausted", batch_id=batch.id, tokens=tokens, cost_usd=spent["cost_usd"])
        return True

    async def _after(self, session: AsyncSession, batch_id: str) -> None:
        """Close the batch when no item is left to do; check the budget after every item."""
        batch = await session.get(Batch, batch_id)
        if batch is None or batch.status not in BATCH_ACTIVE:
            return
        if await self._over_budget(session, batch):
            return
        if await repo.unfinished(session, batch_id):
            return
        if await repo.transition(
            session, batch_id, BATCH_ACTIVE, status=BatchStatus.COMPLETED, finished_at=utcnow()
        ):
            log.info("batch.completed", batch_id=batch_id, items=await repo.counts(session, batch_id))


def internal_failure(model: str, exc: Exception) -> CallFailure:
    """The cause of an item that raised before or outside any LLM call (a configuration, a bug)."""
    return CallFailure(
        kind="internal",
        model=model,
        exception=type(exc).__name__,
        message=(str(exc) or type(exc).__name__)[:500],
    )


def _columns(result: RunResult, cache_hits: int = 0) -> dict[str, Any]:
    """The item's columns for a finished run: its status is the run's outcome (with the cause, for
    an error).
    ``cache_hits`` counts the replies this attempt took from the response cache (an item resumed
    after an interruption counts those of its last attempt: earlier ones are in its checkpoints)."""
    usage, error = result.usage, result.outcome == Outcome.ERROR
    return {
        "status": result.outcome,
        "error": (result.failure.summary() if result.failure else result.stop_reason) if error else None,
        "failure": result.failure.model_dump() if result.failure else None,
        "cache_hits": cache_hits,  # the rest of its result is its run's rows (app/reporting/item_result.py)
        "input_tokens": usage.input_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": usage.cost_usd or 0.0,
        "latency_s": usage.latency_s,
    }
