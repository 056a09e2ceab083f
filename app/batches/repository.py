"""Database access for batches: their items, claims under their runs' leases, and progress counts."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Subquery, and_, func, insert, literal, or_, true, type_coerce, union_all, update
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
    RunStatus,
    UTCDateTime,
    utcnow,
)

QUEUED, RUNNING = RunStatus.QUEUED.value, RunStatus.RUNNING.value


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
            literal(QUEUED),
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


async def item_with_batch(session: AsyncSession, item_id: int) -> tuple[BatchItem, Batch] | None:
    """An item and its batch, read in one round trip (None if either is gone)."""
    query = select(BatchItem, Batch).join(Batch, col(Batch.id) == col(BatchItem.batch_id))
    row = (await session.execute(query.where(col(BatchItem.id) == item_id))).first()
    return None if row is None else (row[0], row[1])


async def take(
    session: AsyncSession, item_id: int, run_id: str, previous: str | None, *, again: bool = False
) -> bool:
    """Mark an item of an active batch running under ``run_id``, if it still is where its claim found
    it: queued or running, and pointing at ``previous`` (its run when it was read; None for an item
    never claimed). The run's lease is what holds the item: ``run_id`` is either a run this process
    just claimed (a resumption: ``previous`` is the same run) or a new one it created, held from the
    start. Of processes racing for the item, the first to commit wins; the others' conditions no
    longer hold, and their new runs roll back with their claims. ``again``: this worker's own earlier
    claim, whose commit reached the database while its acknowledgement was lost to an outage; it
    does not count as another attempt."""
    active = select(col(Batch.id)).where(col(Batch.status).in_(BATCH_ACTIVE))
    same = col(BatchItem.run_id).is_(None) if previous is None else col(BatchItem.run_id) == previous
    statement = (
        update(BatchItem)
        .where(
            col(BatchItem.id) == item_id,
            col(BatchItem.batch_id).in_(active),
            col(BatchItem.status).in_((QUEUED, RUNNING)),
            same,
        )
        .values(
            status=RUNNING,
            run_id=run_id,
            claimed_at=utcnow(),
            attempts=BatchItem.attempts if again else BatchItem.attempts + 1,
            waiting=None,
        )
    )
    return bool((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]


async def turn_away(session: AsyncSession, item_id: int, reason: str) -> None:
    """Say why a queued item was left alone (a write only when the reason changes)."""
    statement = (
        update(BatchItem)
        .where(
            col(BatchItem.id) == item_id,
            col(BatchItem.status) == QUEUED,
            or_(col(BatchItem.waiting).is_(None), col(BatchItem.waiting) != reason),
        )
        .values(waiting=reason)
    )
    await session.execute(statement)


async def waiting(session: AsyncSession, batch_id: str) -> list[dict[str, Any]]:
    """The batch's queued items that processes turned away, by reason (most first)."""
    statement = (
        sa_select(col(BatchItem.waiting), func.count())
        .where(
            col(BatchItem.batch_id) == batch_id,
            col(BatchItem.status) == QUEUED,
            col(BatchItem.waiting).is_not(None),
        )
        .group_by(col(BatchItem.waiting))
    )
    rows = (await session.execute(statement)).all()
    return [{"reason": r, "items": n} for r, n in sorted(rows, key=lambda row: (-row[1], row[0]))]


def _unheld(now: datetime) -> Any:
    """An item nobody holds: no run, or its run's lease lapsed (its worker died or lost the
    database), was handed back, or ended (cancelled over the API while its item ran)."""
    held = (
        select(col(Run.id))
        .where(
            col(Run.id) == col(BatchItem.run_id),
            col(Run.status).in_(RUN_UNFINISHED),
            col(Run.lease_owner).is_not(None),
            col(Run.lease_until) >= now,
        )
        .exists()
    )
    return ~held


async def complete(session: AsyncSession, item_id: int, run_id: str, **values: Any) -> bool:
    """Record an item's result with its run's end, in the transaction that ended the run (only while
    this worker held the run's lease): only while the item still runs under that run, so a result
    is never written twice."""
    statement = (
        update(BatchItem)
        .where(
            col(BatchItem.id) == item_id,
            col(BatchItem.status) == RUNNING,
            col(BatchItem.run_id) == run_id,
        )
        .values(finished_at=utcnow(), **values)
    )
    return bool((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]


async def link_run(session: AsyncSession, item_id: int, run_id: str) -> None:
    """Point an item at the run that executes it (and records its trace)."""
    await session.execute(update(BatchItem).where(col(BatchItem.id) == item_id).values(run_id=run_id))


async def release(session: AsyncSession, worker: str) -> int:
    """Hand back the items this worker runs (it is shutting down or was interrupted) with their runs'
    leases: the items are queued again and their runs free, so any process (a `thinkloop batch
    resume` started a second later) can claim both at once and resume each run from its checkpoint."""
    held = (
        select(col(Run.id))
        .join(BatchItem, col(BatchItem.run_id) == col(Run.id))
        .where(
            col(BatchItem.status) == RUNNING,
            col(Run.lease_owner) == worker,
            col(Run.status).in_(RUN_UNFINISHED),
        )
    )
    runs = [r for r in (await session.execute(held)).scalars().all() if r is not None]
    if not runs:
        return 0
    statement = (
        update(BatchItem)
        .where(col(BatchItem.status) == RUNNING, col(BatchItem.run_id).in_(runs))
        .values(status=QUEUED)
    )
    released = int((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]
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
    """Whether any item of the batch is queued or running (one index probe, whatever the size)."""
    query = select(col(BatchItem.id)).where(
        col(BatchItem.batch_id) == batch_id, col(BatchItem.status).in_(RUN_UNFINISHED)
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
    """Items to send again: queued items of active batches with no activity lately, and every
    orphan (``orphaned``) of any active batch.

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
        or_(
            and_(col(BatchItem.batch_id).in_(quiet), col(BatchItem.status) == QUEUED),
            and_(col(BatchItem.batch_id).in_(active), col(BatchItem.status) == RUNNING, _unheld(now)),
        )
    )
    return [i for i in (await session.execute(query)).scalars().all() if i is not None]


async def orphaned(session: AsyncSession) -> list[int]:
    """Items that started and that nobody holds now (their runs' leases lapsed: a worker died, or
    was cut off from the database), in any active batch, however busy the batch is otherwise."""
    now = utcnow()
    active = select(col(Batch.id)).where(col(Batch.status).in_(BATCH_ACTIVE))
    query = select(col(BatchItem.id)).where(
        col(BatchItem.batch_id).in_(active), col(BatchItem.status) == RUNNING, _unheld(now)
    )
    return [i for i in (await session.execute(query)).scalars().all() if i is not None]


async def pending_ids(session: AsyncSession, batch_id: str, statuses: Sequence[str] = (QUEUED,)) -> list[int]:
    """Ids of the batch's items in the given states."""
    query = select(col(BatchItem.id)).where(
        col(BatchItem.batch_id) == batch_id, col(BatchItem.status).in_(statuses)
    )
    return [i for i in (await session.execute(query)).scalars().all() if i is not None]


async def set_items(
    session: AsyncSession, batch_id: str, from_statuses: Sequence[str], to_status: str
) -> int:
    """Move the batch's items in ``from_statuses`` to ``to_status`` (queued items cancelled, or
    items that ended in error queued again: their failed runs stay, as the record of the attempt)."""
    statement = (
        update(BatchItem)
        .where(col(BatchItem.batch_id) == batch_id, col(BatchItem.status).in_(from_statuses))
        .values(status=to_status, error=None, failure=None)
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
    if outcome:  # how it ended: its status, once terminal
        query = query.where(col(BatchItem.status) == outcome)
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
    """The batch's items left to do that nobody holds: queued, or running under a run whose lease
    lapsed."""
    query = (
        select(col(BatchItem.id))
        .where(
            col(BatchItem.batch_id) == batch_id,
            or_(col(BatchItem.status) == QUEUED, and_(col(BatchItem.status) == RUNNING, _unheld(utcnow()))),
        )
        .order_by(col(BatchItem.id))
    )
    return [i for i in (await session.execute(query)).scalars().all() if i is not None]
