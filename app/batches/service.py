"""Batch lifecycle: create, enqueue, pause, resume, cancel, retry failed items, delete, progress.
Every change by a person (an API key, or the CLI) is written to the audit log with it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import col, select
from taskiq import AsyncBroker

from app import audit
from app.batches import repository as repo
from app.batches.broker import enqueue
from app.batches.manifest import build_manifest
from app.db import short_session
from app.models import (
    BATCH_ACTIVE,
    BATCH_TERMINAL,
    DEFAULT_PROJECT,
    RUN_TERMINAL,
    ApiKey,
    Batch,
    BatchItem,
    CachedResponse,
    CacheUse,
    Run,
    RunStatus,
    utcnow,
)
from app.runs import repository as runs_repo

if TYPE_CHECKING:
    from agents.llm.models import ModelRegistry


class BatchStateError(ValueError):
    """The batch's state forbids the action."""


@dataclass(frozen=True)
class BatchSpec:
    """What to evaluate."""

    dataset_id: str
    models: list[str]
    judge_model: str
    policy: str = "default"
    max_rounds: int = 3
    repeats: int = 1
    control_arm: bool = False
    use_cache: bool = True
    budget_tokens: int | None = None
    budget_usd: float | None = None
    project_id: str = DEFAULT_PROJECT  # the dataset's project, which the batch belongs to


class BatchService:
    """The database is the source of truth; the broker only carries item ids."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], broker: AsyncBroker) -> None:
        self.sessions, self.broker = sessions, broker

    async def create(
        self, spec: BatchSpec, key: ApiKey | None = None, registry: ModelRegistry | None = None
    ) -> Batch:
        """Store the batch and its items, then enqueue every item. With the ``registry`` its models
        come from, the batch's manifest is recorded (every entry point passes it)."""
        async with short_session(self.sessions) as session:
            manifest = await build_manifest(session, registry, spec) if registry is not None else None
            key_id = key.id if key is not None else None  # its items' runs are charged to this key
            batch = Batch(**spec.__dict__, api_key_id=key_id, status="queued", manifest=manifest)
            session.add(batch)
            await session.flush()
            items = await repo.create_items(session, batch)
            detail = {"dataset_id": spec.dataset_id, "models": spec.models, "items": items}
            audit.record(session, key, "created", "batch", batch.id, batch.project_id, detail)
        await self._enqueue(batch.id)
        return batch

    async def _enqueue(self, batch_id: str, statuses: tuple[str, ...] = (RunStatus.QUEUED,)) -> int:
        async with short_session(self.sessions) as session:
            ids = await repo.pending_ids(session, batch_id, statuses)
        return await enqueue(self.broker, ids)

    async def pause(self, batch_id: str, key: ApiKey | None = None) -> Batch:
        """Stop starting items; running ones finish."""
        return await self._transition(batch_id, {"queued", "running"}, "paused", key, "paused")

    async def resume(self, batch_id: str, key: ApiKey | None = None) -> Batch:
        """Start again: queued items are sent to the queue anew."""
        batch = await self._transition(batch_id, {"paused"}, "running", key, "resumed")
        await self._enqueue(batch_id)
        return batch

    async def go_on(self, batch_id: str, key: ApiKey | None = None) -> Batch:
        """Send a batch's items left to do (queued, or running under a lapsed lease) to the queue
        again: how `thinkloop batch resume` continues an interrupted batch. A paused batch is
        resumed first; an ended one raises BatchStateError."""
        async with short_session(self.sessions) as session:
            batch = await self._get(session, batch_id)
        if batch.status == "paused":
            batch = await self.resume(batch_id, key)
        elif batch.status in BATCH_TERMINAL:
            raise BatchStateError(f"the batch is {batch.status}: nothing to resume")
        async with short_session(self.sessions) as session:
            ids = await repo.resumable_ids(session, batch_id)
            if not ids and not await repo.unfinished(session, batch_id):  # its last item's process died
                await repo.transition(
                    session, batch_id, BATCH_ACTIVE, status="completed", finished_at=utcnow()
                )
        await enqueue(self.broker, ids)
        return batch

    async def cancel(self, batch_id: str, key: ApiKey | None = None) -> Batch:
        """Stop for good: queued items are cancelled; running ones finish."""
        batch = await self._transition(
            batch_id, {"queued", "running", "paused"}, "cancelled", key, "cancelled"
        )
        async with short_session(self.sessions) as session:
            await repo.set_items(session, batch_id, (RunStatus.QUEUED,), RunStatus.CANCELLED)
        return batch

    async def retry_failed(self, batch_id: str, key: ApiKey | None = None) -> int:
        """Send the items that ended in error (status ``error``) again."""
        async with short_session(self.sessions) as session:
            batch = await self._get(session, batch_id)
            if batch.status in ("cancelled", "budget_exhausted"):
                raise BatchStateError(f"the batch is {batch.status}")
            moved = await repo.set_items(session, batch_id, (RunStatus.ERROR,), RunStatus.QUEUED)
            if moved:
                batch.status, batch.finished_at = "running", None
            audit.record(session, key, "retried", "batch", batch_id, batch.project_id, {"items": moved})
        await self._enqueue(batch_id)
        return moved

    async def delete(
        self, batch_id: str, key: ApiKey | None, delete_checkpoints: Callable[[list[str]], Awaitable[None]]
    ) -> None:
        """Delete an ended batch and every trace of it: its items, their runs (rows, transcripts,
        deliveries, and checkpoints through ``delete_checkpoints``), the cached replies no other
        batch used, and problems nothing else refers to. BatchStateError while it is active or an
        item still runs (cancel it first, and let its items in flight finish)."""
        async with short_session(self.sessions) as session:
            await self._deletable(session, batch_id)
            runs = await _run_ids(session, batch_id)
        await delete_checkpoints(runs)  # first: a failure leaves the batch, never its states
        async with short_session(self.sessions) as session:
            batch = await self._deletable(session, batch_id)
            runs = await _run_ids(session, batch_id)  # a retry may have begun one meanwhile: refused above
            used = select(col(CacheUse.key)).where(col(CacheUse.batch_id) == batch_id)
            keys = set((await session.execute(used)).scalars().all())
            await session.execute(delete(CacheUse).where(col(CacheUse.batch_id) == batch_id))
            if keys:
                still = select(col(CacheUse.key)).where(col(CacheUse.key).in_(keys))
                kept = set((await session.execute(still)).scalars().all())
                gone = delete(CachedResponse).where(col(CachedResponse.key).in_(keys - kept))
                await session.execute(gone)
            items = select(col(BatchItem.problem_id)).where(col(BatchItem.batch_id) == batch_id)
            problems = set((await session.execute(items)).scalars().all())
            await session.execute(delete(BatchItem).where(col(BatchItem.batch_id) == batch_id))
            problems |= await runs_repo.delete_runs(session, runs)
            await session.execute(delete(Batch).where(col(Batch.id) == batch_id))
            await runs_repo.delete_orphan_problems(session, problems)
            audit.record(session, key, "deleted", "batch", batch_id, batch.project_id, {"runs": len(runs)})

    async def _deletable(self, session: AsyncSession, batch_id: str) -> Batch:
        batch = await self._get(session, batch_id)
        if batch.status not in BATCH_TERMINAL:
            raise BatchStateError(f"the batch is {batch.status}: cancel it first")
        if (await repo.counts(session, batch_id)).get(RunStatus.RUNNING):
            raise BatchStateError("items are still running: delete it once they finish")
        return batch

    async def _transition(
        self, batch_id: str, allowed: set[str], target: str, key: ApiKey | None, action: str
    ) -> Batch:
        extra = (
            {"finished_at": utcnow(), "stop_reason": "cancelled by request"} if target == "cancelled" else {}
        )
        async with short_session(self.sessions) as session:
            batch = await self._get(session, batch_id)
            if not await repo.transition(session, batch_id, sorted(allowed), status=target, **extra):
                raise BatchStateError(f"cannot go from {batch.status} to {target}")
            await session.refresh(batch)
            audit.record(session, key, action, "batch", batch_id, batch.project_id)
            return batch

    async def _get(self, session: AsyncSession, batch_id: str) -> Batch:
        batch = await session.get(Batch, batch_id)
        if batch is None:
            raise LookupError(batch_id)
        return batch

    async def progress(self, batch_id: str) -> dict[str, Any]:
        """Items by state, tokens, cost, and an ETA from the rate so far."""
        return await progress(self.sessions, batch_id)

    async def snapshot(self, batch_id: str) -> tuple[Batch, dict[str, Any]]:
        """The batch and its progress, from one read of the batch."""
        return await snapshot(self.sessions, batch_id)


async def progress(sessions: async_sessionmaker[AsyncSession], batch_id: str) -> dict[str, Any]:
    """Items by state, tokens, cost, and an ETA from the rate so far (needs no broker)."""
    return (await snapshot(sessions, batch_id))[1]


async def snapshot(sessions: async_sessionmaker[AsyncSession], batch_id: str) -> tuple[Batch, dict[str, Any]]:
    """The batch row and its progress, both from one read of the row: a batch shown with its
    progress never says "completed" beside a ``finished_at`` read before it ended."""
    async with short_session(sessions) as session:
        batch = await session.get(Batch, batch_id)
        if batch is None:
            raise LookupError(batch_id)
        states = await repo.counts(session, batch_id)
        spent = await repo.totals(session, batch_id)
        waiting = await repo.waiting(session, batch_id) if states.get(RunStatus.QUEUED) else []
    total = sum(states.values())
    finished = sum(states.get(s, 0) for s in RUN_TERMINAL)
    elapsed = ((batch.finished_at or utcnow()) - batch.created_at).total_seconds()
    remaining = total - finished
    eta = elapsed / finished * remaining if finished and remaining and batch.status == "running" else None
    return batch, {
        "id": batch.id,
        "status": batch.status,
        "stop_reason": batch.stop_reason,
        "items": states,
        "total": total,
        "finished": finished,
        "eta_s": None if eta is None else round(eta, 1),
        "waiting": waiting,
        **spent,
        # sums of floats: shown to a person's precision, not as 0.013280000000000021
        "cost_usd": round(spent["cost_usd"], 6),
        "latency_s": round(spent["latency_s"], 3),
    }


async def _run_ids(session: AsyncSession, batch_id: str) -> list[str]:
    """Every run of a batch's items, retried items' earlier runs included."""
    query = select(col(Run.id)).where(col(Run.batch_id) == batch_id)
    return list((await session.execute(query)).scalars().all())
