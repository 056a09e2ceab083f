"""Database access for batches: their items, idempotent claims with leases, and progress counts."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Subquery, and_, case, func, insert, literal, or_, true, type_coerce, union_all, update
from sqlalchemy import select as sa_select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.models import (
    BATCH_ACTIVE,
    RUN_UNFINISHED,
    Batch,
    BatchItem,
    DatasetItem,
    Run,
    UTCDateTime,
    utcnow,
)


async def create_items(session: AsyncSession, batch: Batch) -> int:
    """One item per problem × model × repeat × arm, in problem order (models interleaved, so a batch
    stopped early has compared them on the same problems).

    One INSERT ... SELECT: the database builds the rows, so memory does not grow with the batch.
    """
    arms = ("loop", "control") if batch.control_arm else ("loop",)
    models, repeats, kinds = (
        _choices("model", batch.models),
        _choices("repeat", range(batch.repeats)),
        _choices("arm", arms),
    )
    rows = (
        sa_select(
            literal(batch.id),
            col(DatasetItem.problem_id),
            models.c.model,
            repeats.c.repeat,
            kinds.c.arm,
            literal("pending"),
            literal(0),
            literal(0),
            literal(0),
            literal(0.0),
            literal(0.0),
        )
        .select_from(DatasetItem)
        .join(models, true())
        .join(repeats, true())
        .join(kinds, true())
        .where(col(DatasetItem.dataset_id) == batch.dataset_id)
        .order_by(col(DatasetItem.position), models.c.rank, repeats.c.rank, kinds.c.rank)
    )
    columns = ["batch_id", "problem_id", "model", "repeat", "arm", "status", "attempts"]
    columns += ["input_tokens", "output_tokens", "cost_usd", "latency_s"]
    await session.execute(insert(BatchItem).from_select(columns, rows))
    # Counted, not taken from rowcount: psycopg reports -1 for an INSERT ... SELECT here.
    created = select(func.count()).where(col(BatchItem.batch_id) == batch.id)
    return int((await session.execute(created)).scalar_one())


def _choices(name: str, values: Iterable[object]) -> Subquery:
    """A derived table of literal rows (``name``, ``rank``): portable to SQLite and PostgreSQL."""
    parts = [sa_select(literal(v).label(name), literal(i).label("rank")) for i, v in enumerate(values)]
    return (parts[0] if len(parts) == 1 else union_all(*parts)).subquery(name)


async def transition(
    session: AsyncSession, batch_id: str, from_states: Collection[str], **values: Any
) -> bool:
    """Change a batch only if it is still in one of ``from_states`` (no lost updates between processes)."""
    statement = (
        update(Batch).where(col(Batch.id) == batch_id, col(Batch.status).in_(from_states)).values(**values)
    )
    return bool((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]


async def claim(session: AsyncSession, item_id: int, worker: str, lease: timedelta) -> bool:
    """Take an item of an active batch: pending, running under an expired lease (its worker died),
    or running under ``worker``'s own claim. The last is this worker's earlier claim whose commit
    reached the database while its acknowledgement was lost to an outage: the retry finds the item
    taken by itself. The caller makes sure it is not already running the item (a duplicate delivery);
    that retry does not count as another attempt."""
    now = utcnow()
    active = select(col(Batch.id)).where(col(Batch.status).in_(BATCH_ACTIVE))
    running = col(BatchItem.status) == "running"
    ours = and_(running, col(BatchItem.claimed_by) == worker)
    statement = (
        update(BatchItem)
        .where(
            col(BatchItem.id) == item_id,
            col(BatchItem.batch_id).in_(active),
            or_(col(BatchItem.status) == "pending", and_(running, _lapsed(now)), ours),
        )
        .values(
            status="running",
            claimed_by=worker,
            claimed_at=now,
            lease_until=now + lease,
            attempts=case((ours, BatchItem.attempts), else_=BatchItem.attempts + 1),
            waiting=None,
        )
    )
    return bool((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]


async def turn_away(session: AsyncSession, item_id: int, reason: str) -> None:
    """Say why a pending item was left alone (a write only when the reason changes)."""
    statement = (
        update(BatchItem)
        .where(
            col(BatchItem.id) == item_id,
            col(BatchItem.status) == "pending",
            or_(col(BatchItem.waiting).is_(None), col(BatchItem.waiting) != reason),
        )
        .values(waiting=reason)
    )
    await session.execute(statement)


async def waiting(session: AsyncSession, batch_id: str) -> list[dict[str, Any]]:
    """The batch's pending items that processes turned away, by reason (most first)."""
    statement = (
        sa_select(col(BatchItem.waiting), func.count())
        .where(
            col(BatchItem.batch_id) == batch_id,
            col(BatchItem.status) == "pending",
            col(BatchItem.waiting).is_not(None),
        )
        .group_by(col(BatchItem.waiting))
    )
    rows = (await session.execute(statement)).all()
    return [{"reason": r, "items": n} for r, n in sorted(rows, key=lambda row: (-row[1], row[0]))]


def _lapsed(now: datetime) -> Any:
    """A running item's claim lapsed: its worker stopped renewing it (it died or lost the database)."""
    return or_(col(BatchItem.lease_until).is_(None), col(BatchItem.lease_until) < now)


async def renew(session: AsyncSession, item_ids: Sequence[int], worker: str, lease: timedelta) -> set[int]:
    """Extend this worker's claims on ``item_ids`` while it runs them; the ids it still holds."""
    if not item_ids:
        return set()
    statement = (
        update(BatchItem)
        .where(
            col(BatchItem.id).in_(item_ids),
            col(BatchItem.status) == "running",
            col(BatchItem.claimed_by) == worker,
        )
        .values(lease_until=utcnow() + lease)
        .returning(col(BatchItem.id))
    )
    return {i for i in (await session.execute(statement)).scalars().all() if i is not None}


async def complete(session: AsyncSession, item_id: int, worker: str, **values: Any) -> bool:
    """Record an item's result, only if this worker still holds it (a result is never written twice)."""
    statement = (
        update(BatchItem)
        .where(
            col(BatchItem.id) == item_id,
            col(BatchItem.status) == "running",
            col(BatchItem.claimed_by) == worker,
        )
        .values(finished_at=utcnow(), **values)
    )
    return bool((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]


async def link_run(session: AsyncSession, item_id: int, run_id: str) -> None:
    """Point an item at the run that executes it (and records its trace)."""
    await session.execute(update(BatchItem).where(col(BatchItem.id) == item_id).values(run_id=run_id))


async def release(session: AsyncSession, worker: str) -> int:
    """Hand back the items this worker still holds (it is shutting down or was interrupted): they
    become pending again, and their runs' leases are released with them, so any process (a
    `thinkloop batch resume` started a second later) can claim both at once."""
    held = select(col(BatchItem.run_id)).where(
        col(BatchItem.status) == "running", col(BatchItem.claimed_by) == worker
    )
    runs = [r for r in (await session.execute(held)).scalars().all() if r is not None]
    statement = (
        update(BatchItem)
        .where(col(BatchItem.status) == "running", col(BatchItem.claimed_by) == worker)
        .values(status="pending", claimed_by=None, claimed_at=None, lease_until=None)
    )
    released = int((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]
    if runs:
        await session.execute(
            update(Run)
            .where(col(Run.id).in_(runs), col(Run.lease_owner) == worker, col(Run.status).in_(RUN_UNFINISHED))
            .values(lease_owner=None, lease_until=None)
        )
    return released


async def counts(session: AsyncSession, batch_id: str) -> dict[str, int]:
    """Items by status."""
    query = (
        select(col(BatchItem.status), func.count())
        .where(col(BatchItem.batch_id) == batch_id)
        .group_by(col(BatchItem.status))
    )
    return {status: int(n) for status, n in (await session.execute(query)).all()}


async def unfinished(session: AsyncSession, batch_id: str) -> bool:
    """Whether any item of the batch is pending or running (one index probe, whatever the size)."""
    query = select(col(BatchItem.id)).where(
        col(BatchItem.batch_id) == batch_id, col(BatchItem.status).in_(("pending", "running"))
    )
    return (await session.execute(query.limit(1))).first() is not None


async def totals(session: AsyncSession, batch_id: str) -> dict[str, float]:
    """Tokens, cost and LLM latency spent so far."""
    query = select(
        func.coalesce(func.sum(BatchItem.input_tokens), 0),
        func.coalesce(func.sum(BatchItem.output_tokens), 0),
        func.coalesce(func.sum(BatchItem.cost_usd), 0.0),
        func.coalesce(func.sum(BatchItem.latency_s), 0.0),
    ).where(col(BatchItem.batch_id) == batch_id)
    tokens_in, tokens_out, cost, latency = (await session.execute(query)).one()
    return {
        "input_tokens": int(tokens_in),
        "output_tokens": int(tokens_out),
        "cost_usd": float(cost),
        "latency_s": float(latency),
    }


async def stalled(session: AsyncSession, stall: timedelta) -> list[int]:
    """Items to send again: pending or lease-expired items of active batches with no activity lately.

    Messages can be stranded in a dead worker's hands; the database, not the queue, decides what is
    left to do, and sending an item twice is harmless (claims are conditional).
    """
    now = utcnow()
    active = select(col(Batch.id)).where(col(Batch.status).in_(BATCH_ACTIVE))
    # Typed as the columns are, so the bound "now - stall" is stored-format UTC on every database.
    activity = type_coerce(
        func.max(func.coalesce(col(BatchItem.finished_at), col(BatchItem.claimed_at))), UTCDateTime()
    )
    quiet = (
        select(col(BatchItem.batch_id))
        .where(col(BatchItem.batch_id).in_(active))
        .group_by(col(BatchItem.batch_id))
        .having(or_(activity.is_(None), activity < now - stall))
    )
    query = select(col(BatchItem.id)).where(
        col(BatchItem.batch_id).in_(quiet),
        or_(
            col(BatchItem.status) == "pending",
            and_(col(BatchItem.status) == "running", _lapsed(now)),
        ),
    )
    return [i for i in (await session.execute(query)).scalars().all() if i is not None]


async def pending_ids(
    session: AsyncSession, batch_id: str, statuses: Sequence[str] = ("pending",)
) -> list[int]:
    """Ids of the batch's items in the given states."""
    query = select(col(BatchItem.id)).where(
        col(BatchItem.batch_id) == batch_id, col(BatchItem.status).in_(statuses)
    )
    return [i for i in (await session.execute(query)).scalars().all() if i is not None]


async def set_items(
    session: AsyncSession, batch_id: str, from_statuses: Sequence[str], to_status: str
) -> int:
    """Move the batch's items in ``from_statuses`` to ``to_status``."""
    outcome = "cancelled" if to_status == "cancelled" else None  # pending again: no outcome yet
    statement = (
        update(BatchItem)
        .where(col(BatchItem.batch_id) == batch_id, col(BatchItem.status).in_(from_statuses))
        .values(status=to_status, outcome=outcome, claimed_by=None, error=None, failure=None)
    )
    return int((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]


async def items(
    session: AsyncSession, batch_id: str, model: str | None = None, arm: str | None = None
) -> Sequence[BatchItem]:
    """Every item of a batch (of one model and arm, when given), finished or not (a report counts
    them all), in creation order."""
    query = select(BatchItem).where(col(BatchItem.batch_id) == batch_id)
    if model is not None:
        query = query.where(col(BatchItem.model) == model)
    if arm is not None:
        query = query.where(col(BatchItem.arm) == arm)
    return (await session.execute(query.order_by(col(BatchItem.id)))).scalars().all()


async def item_page(
    session: AsyncSession,
    batch_id: str,
    *,
    limit: int,
    after: int | None,
    status: str | None = None,
    outcome: str | None = None,
) -> tuple[Sequence[BatchItem], int | None]:
    """Items of a batch in id order after ``after`` (keyset), filtered; and the next ``after``."""
    query = select(BatchItem).where(col(BatchItem.batch_id) == batch_id)
    if status:
        query = query.where(col(BatchItem.status) == status)
    if outcome:
        query = query.where(col(BatchItem.outcome) == outcome)
    if after is not None:
        query = query.where(col(BatchItem.id) > after)
    rows = (await session.execute(query.order_by(col(BatchItem.id)).limit(limit + 1))).scalars().all()
    return rows[:limit], (rows[limit - 1].id if len(rows) > limit else None)


async def counts_by_model(session: AsyncSession, batch_id: str) -> dict[str, dict[str, int]]:
    """Items by model and status (a progress bar per model)."""
    query = (
        select(col(BatchItem.model), col(BatchItem.status), func.count())
        .where(col(BatchItem.batch_id) == batch_id)
        .group_by(col(BatchItem.model), col(BatchItem.status))
    )
    out: dict[str, dict[str, int]] = {}
    for model, status, n in (await session.execute(query)).all():
        out.setdefault(model, {})[status] = int(n)
    return out


async def with_prefix(session: AsyncSession, prefix: str, limit: int = 10) -> Sequence[Batch]:
    """Batches whose id is ``prefix`` or starts with it (an exact id first), newest first; at most
    ``limit`` + 1, so a caller can tell there were more. Only hexadecimal prefixes match (ids are)."""
    prefix = prefix.strip().lower()
    if not prefix or any(c not in "0123456789abcdef" for c in prefix):
        return []
    exact = await session.get(Batch, prefix)
    if exact is not None:
        return [exact]
    query = (
        select(Batch)
        .where(col(Batch.id).startswith(prefix))
        .order_by(col(Batch.created_at).desc())
        .limit(limit + 1)
    )
    return (await session.execute(query)).scalars().all()


async def recent(session: AsyncSession, limit: int, status: str | None = None) -> Sequence[Batch]:
    """The newest batches of every project (the CLI's list), optionally in one status."""
    query = select(Batch)
    if status:
        query = query.where(col(Batch.status) == status)
    return (await session.execute(query.order_by(col(Batch.created_at).desc()).limit(limit))).scalars().all()


async def external_ids(session: AsyncSession, dataset_id: str) -> dict[str, str | None]:
    """Each problem of a dataset with the id its row gave it (exports name items by it)."""
    query = select(col(DatasetItem.problem_id), col(DatasetItem.external_id)).where(
        col(DatasetItem.dataset_id) == dataset_id
    )
    return {str(problem): external for problem, external in (await session.execute(query)).all()}


async def resumable_ids(session: AsyncSession, batch_id: str) -> list[int]:
    """The batch's items left to do that nobody holds: pending, or running under a lapsed lease."""
    query = (
        select(col(BatchItem.id))
        .where(
            col(BatchItem.batch_id) == batch_id,
            or_(
                col(BatchItem.status) == "pending",
                and_(col(BatchItem.status) == "running", _lapsed(utcnow())),
            ),
        )
        .order_by(col(BatchItem.id))
    )
    return [i for i in (await session.execute(query)).scalars().all() if i is not None]
