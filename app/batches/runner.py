"""Processing batch items: claim once, run the loop (or the control arm), record once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

import structlog
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_delay,
)

from agents.panel import PanelFactory
from agents.retrying import OUTAGE_BACKOFF, log_retry
from agents.schemas import CallFailure, Problem
from app.batches import repository as repo
from app.batches.cache import SqlResponseCache
from app.batches.item_result import ItemResult
from app.db import short_session
from app.models import Batch, BatchItem, ProblemRow, Run, utcnow
from app.runs.repository import record_finished_run
from graphs.baseline import run_control
from graphs.context import RunContext
from graphs.events import RunEvent
from graphs.result import RunResult, run_refinement
from graphs.scoring import Outcome, get_policy

log = structlog.get_logger(__name__)
T = TypeVar("T")
ACTIVE = ("queued", "running")


class BatchRunner:
    """What a worker (or the service's in-process broker) does with one item id."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        factory: PanelFactory,
        lease_s: float,
        concurrency: int,
        outage_s: float = 300.0,
    ) -> None:
        self.sessions, self.factory = sessions, factory
        # Items in flight in this process; budgets are checked when a slot frees, before claiming.
        self._slots = asyncio.Semaphore(concurrency)
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.lease = timedelta(seconds=lease_s)
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self.cache = SqlResponseCache(sessions)
        self.closing = False
        self.outage_s = outage_s

    async def process(self, item_id: int) -> str:
        """Run one item if it can be claimed; returns what happened (for logs and tests)."""
        self._active += 1
        self._idle.clear()
        try:
            async with self._slots:
                if self.closing:  # shutting down: leave the item pending for the next process
                    return "closing"
                return await self._process(item_id)
        finally:
            self._active -= 1
            if not self._active:
                self._idle.set()

    async def drain(self) -> None:
        """Wait until no item is being processed or waiting for a slot (graceful shutdown)."""
        await self._idle.wait()

    async def close(self, grace_s: float) -> int:
        """Claim nothing more, let items in flight finish for ``grace_s``, then hand back the rest."""
        self.closing = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.drain(), grace_s)
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
        claimed = await self._db(lambda session: self._claim(session, item_id))
        if isinstance(claimed, str):
            return claimed
        batch, item, problem = claimed
        with structlog.contextvars.bound_contextvars(batch_id=batch.id, item_id=item_id):
            outcome = await self._holding(item_id, self._run(batch, item, problem))
        await self._db(lambda session: self._after(session, batch.id))
        return outcome

    async def _holding(self, item_id: int, work: Awaitable[str]) -> str:
        """Run ``work`` while renewing the item's lease every third of it; if the lease is lost
        (another worker took the item after this one could not renew in time), stop the work."""
        task: asyncio.Task[str] = asyncio.ensure_future(work)
        every = self.lease.total_seconds() / 3
        while True:
            done, _ = await asyncio.wait({task}, timeout=every)
            if done:
                return task.result()
            try:
                async with short_session(self.sessions) as session:
                    held = await repo.renew(session, [item_id], self.worker, self.lease)
            except DBAPIError as exc:  # the database is away: the lease may lapse, the result will tell
                log.warning("batch.lease_renewal_failed", error=type(exc).__name__)
                continue
            if not held:
                log.warning("batch.lease_lost", item_id=item_id)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                return "lost-claim"

    async def _claim(self, session: AsyncSession, item_id: int) -> str | tuple[Batch, BatchItem, Problem]:
        """The item, its batch and problem if this worker may run it; otherwise why not."""
        item = await session.get(BatchItem, item_id)
        batch = await session.get(Batch, item.batch_id) if item else None
        if item is None or batch is None:
            return "missing"
        if batch.status not in ACTIVE:
            return f"batch {batch.status}"
        if await self._over_budget(session, batch):
            return "budget"
        if not await repo.claim(session, item_id, self.worker, self.lease):
            return "taken"
        await repo.transition(session, batch.id, ("queued",), status="running")
        row = await session.get(ProblemRow, item.problem_id)
        assert row is not None
        return batch, item, Problem(question=row.question, solution=row.solution)

    async def _db(self, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
        """One short transaction, retried while the database is unreachable (up to ``outage_s``):
        an outage pauses the batch, and a finished item's result waits in memory to be written."""
        retrying = AsyncRetrying(
            retry=retry_if_exception_type((OperationalError, InterfaceError)),
            wait=OUTAGE_BACKOFF,
            stop=stop_after_delay(self.outage_s),
            before_sleep=log_retry("batch.database_unavailable"),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                async with short_session(self.sessions) as session:
                    return await work(session)
        raise AssertionError("unreachable")  # AsyncRetrying either returns or re-raises

    async def _run(self, batch: Batch, item: BatchItem, problem: Problem) -> str:
        started = utcnow()
        transcript = Transcript()
        try:  # anything that goes wrong fails this item alone, never leaves it 'running'
            policy = get_policy(batch.policy, max_rounds=batch.max_rounds)
            panel = self.factory.build(batch.judge_model, item.model, self.cache if batch.use_cache else None)
            context = RunContext.of(panel, policy)
            execute = run_control if item.arm == "control" else run_refinement
            result = await execute(problem, context, on_event=transcript.add)
        except Exception as exc:  # an item fails alone; the batch goes on
            failure = internal_failure(item.model, exc)
            columns: dict[str, Any] = {
                "status": "failed",
                "outcome": Outcome.ERROR,
                "error": failure.summary(),
                "failure": failure.model_dump(),
            }
            transcript.events.append(
                {"type": "run.failed", "status": Outcome.ERROR, "reason": failure.summary()}
            )
            # Record first: logging must not lose it.
            await self._db(
                lambda session: self._complete(session, batch, item, started, columns, None, transcript)
            )
            log.exception("batch.item_failed")
            return "failed"
        columns = _columns(result)
        stored = await self._db(
            lambda session: self._complete(session, batch, item, started, columns, result, transcript)
        )
        return ("failed" if result.outcome == Outcome.ERROR else "done") if stored else "lost-claim"

    async def _complete(
        self,
        session: AsyncSession,
        batch: Batch,
        item: BatchItem,
        started: datetime,
        columns: dict[str, Any],
        result: RunResult | None,
        transcript: Transcript,
    ) -> bool:
        """Record the item's result and, in the same transaction, its run: the rounds, verdicts,
        revisions and transcript that ``GET /v1/runs/{id}`` shows for any run. Only while this
        worker still holds the item (a result is never written twice)."""
        assert item.id is not None
        run = Run(
            problem_id=item.problem_id,
            status=columns["outcome"],
            model=item.model,
            judge_model=batch.judge_model,
            policy=batch.policy,
            max_rounds=batch.max_rounds,
            stop_reason=result.stop_reason if result else columns["error"],
            failure=columns["failure"],
            result=result.model_dump(mode="json") if result else None,
            created_at=started,
            finished_at=utcnow(),
            batch_id=batch.id,
            arm=item.arm,
        )
        if not await repo.complete(session, item.id, self.worker, **columns):
            return False
        await record_finished_run(session, run, result, transcript.events)
        await repo.link_run(session, item.id, run.id)
        return True

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
            session, batch.id, ACTIVE, status="budget_exhausted", stop_reason=reason, finished_at=utcnow()
        ):
            await repo.set_items(session, batch.id, ("pending",), "cancelled")
            log.info("batch.budget_exhausted", batch_id=batch.id, tokens=tokens, cost_usd=spent["cost_usd"])
        return True

    async def _after(self, session: AsyncSession, batch_id: str) -> None:
        """Close the batch when no item is left to do; check the budget after every item."""
        batch = await session.get(Batch, batch_id)
        if batch is None or batch.status not in ACTIVE:
            return
        if await self._over_budget(session, batch):
            return
        if await repo.unfinished(session, batch_id):
            return
        if await repo.transition(session, batch_id, ACTIVE, status="completed", finished_at=utcnow()):
            log.info("batch.completed", batch_id=batch_id, items=await repo.counts(session, batch_id))


def internal_failure(model: str, exc: Exception) -> CallFailure:
    """The cause of an item that raised before or outside any LLM call (a configuration, a bug)."""
    return CallFailure(
        kind="internal",
        model=model,
        exception=type(exc).__name__,
        message=(str(exc) or type(exc).__name__)[:500],
    )


class Transcript:
    """A batch item's events as its run's transcript: what the graph emitted, in order, with each
    revise step's think-aloud joined into one event (a stream of deltas is for live followers)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = [{"type": "run.started"}]

    def add(self, event: RunEvent) -> None:
        """Keep one event."""
        data = event.model_dump(mode="json")
        last = self.events[-1]
        if data["type"] == last["type"] == "reviser.thinking" and data["round"] == last["round"]:
            last["delta"] += data["delta"]
        else:
            self.events.append(data)


def _columns(result: RunResult) -> dict[str, Any]:
    """The item's columns for a finished run: an error outcome is a failed item with its cause."""
    usage, error = result.usage, result.outcome == Outcome.ERROR
    return {
        "status": "failed" if error else "done",
        "outcome": result.outcome,
        "error": (result.failure.summary() if result.failure else result.stop_reason) if error else None,
        "failure": result.failure.model_dump() if result.failure else None,
        "result": ItemResult.of(result).model_dump(mode="json"),
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": usage.cost_usd or 0.0,
        "latency_s": usage.latency_s,
    }
