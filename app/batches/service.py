"""Batch lifecycle: create, enqueue, pause, resume, cancel, retry failed items, progress."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from taskiq import AsyncBroker

from app.batches import repository as repo
from app.batches.broker import enqueue
from app.db import short_session
from app.models import DEFAULT_PROJECT, ITEM_TERMINAL, Batch, utcnow


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

    async def create(self, spec: BatchSpec) -> Batch:
        """Store the batch and its items, then enqueue every item."""
        async with short_session(self.sessions) as session:
            batch = Batch(**spec.__dict__, status="queued")
            session.add(batch)
            await session.flush()
            await repo.create_items(session, batch)
        await self._enqueue(batch.id)
        return batch

    async def _enqueue(self, batch_id: str, statuses: tuple[str, ...] = ("pending",)) -> int:
        async with short_session(self.sessions) as session:
            ids = await repo.pending_ids(session, batch_id, statuses)
        return await enqueue(self.broker, ids)

    async def pause(self, batch_id: str) -> Batch:
        """Stop starting items; running ones finish."""
        return await self._transition(batch_id, {"queued", "running"}, "paused")

    async def resume(self, batch_id: str) -> Batch:
        """Start again: pending items are sent to the queue anew."""
        batch = await self._transition(batch_id, {"paused"}, "running")
        await self._enqueue(batch_id)
        return batch

    async def cancel(self, batch_id: str) -> Batch:
        """Stop for good: pending items are cancelled; running ones finish."""
        batch = await self._transition(batch_id, {"queued", "running", "paused"}, "cancelled")
        async with short_session(self.sessions) as session:
            await repo.set_items(session, batch_id, ("pending",), "cancelled")
        return batch

    async def retry_failed(self, batch_id: str) -> int:
        """Send the items that ended in error (outcome ``error``, status ``failed``) again."""
        async with short_session(self.sessions) as session:
            batch = await self._get(session, batch_id)
            if batch.status in ("cancelled", "budget_exhausted"):
                raise BatchStateError(f"the batch is {batch.status}")
            moved = await repo.set_items(session, batch_id, ("failed",), "pending")
            if moved:
                batch.status, batch.finished_at = "running", None
        await self._enqueue(batch_id)
        return moved

    async def _transition(self, batch_id: str, allowed: set[str], target: str) -> Batch:
        extra = (
            {"finished_at": utcnow(), "stop_reason": "cancelled by request"} if target == "cancelled" else {}
        )
        async with short_session(self.sessions) as session:
            batch = await self._get(session, batch_id)
            if not await repo.transition(session, batch_id, sorted(allowed), status=target, **extra):
                raise BatchStateError(f"cannot go from {batch.status} to {target}")
            await session.refresh(batch)
            return batch

    async def _get(self, session: AsyncSession, batch_id: str) -> Batch:
        batch = await session.get(Batch, batch_id)
        if batch is None:
            raise LookupError(batch_id)
        return batch

    async def progress(self, batch_id: str) -> dict[str, Any]:
        """Items by state, tokens, cost, and an ETA from the rate so far."""
        return await progress(self.sessions, batch_id)


async def progress(sessions: async_sessionmaker[AsyncSession], batch_id: str) -> dict[str, Any]:
    """Items by state, tokens, cost, and an ETA from the rate so far (needs no broker)."""
    async with short_session(sessions) as session:
        batch = await session.get(Batch, batch_id)
        if batch is None:
            raise LookupError(batch_id)
        states = await repo.counts(session, batch_id)
        spent = await repo.totals(session, batch_id)
    total = sum(states.values())
    finished = sum(states.get(s, 0) for s in ITEM_TERMINAL)
    elapsed = ((batch.finished_at or utcnow()) - batch.created_at).total_seconds()
    remaining = total - finished
    eta = elapsed / finished * remaining if finished and remaining and batch.status == "running" else None
    return {
        "id": batch.id,
        "status": batch.status,
        "stop_reason": batch.stop_reason,
        "items": states,
        "total": total,
        "finished": finished,
        "eta_s": eta,
        **spent,
    }
