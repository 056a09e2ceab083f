"""Teachers' decisions: recording one (idempotently, replacing an earlier one on purpose only),
requesting a review, and reading the queue. Every decision is kept; an item's latest is its label."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from agents.schemas import Problem
from app import audit
from app.errors import Conflict, NotFound
from app.grading import grading_progress
from app.models import (
    RUN_TERMINAL,
    ApiKey,
    ProblemRow,
    ReviewDecision,
    ReviewItem,
    RoundRow,
    Run,
    RunStatus,
    utcnow,
)
from app.pagination import page
from app.reviews import queue
from app.reviews.schemas import DecisionIn
from app.webhooks.outbox import enqueue

DECIDED = "decided"


@dataclass
class Decided:
    """A stored decision, and whether it is an earlier request's (the same Idempotency-Key)."""

    decision: ReviewDecision
    item: ReviewItem
    replayed: bool = False


async def get_item(session: AsyncSession, review_id: str, project_id: str) -> ReviewItem:
    """The project's review item; 404 for an unknown id and another project's item alike."""
    item = await session.get(ReviewItem, review_id) if review_id.isalnum() else None
    if item is None or item.project_id != project_id:
        raise NotFound(f"There is no review {review_id}.")
    return item


async def history(session: AsyncSession, item_id: str) -> list[ReviewDecision]:
    """Every decision on the item, oldest first."""
    query = (
        select(ReviewDecision)
        .where(col(ReviewDecision.item_id) == item_id)
        .order_by(col(ReviewDecision.created_at), col(ReviewDecision.id))
    )
    return list((await session.execute(query)).scalars().all())


async def latest(session: AsyncSession, item_ids: Sequence[str]) -> dict[str, ReviewDecision]:
    """Item id → its latest decision (of those decided)."""
    if not item_ids:
        return {}
    query = (
        select(ReviewDecision)
        .where(col(ReviewDecision.item_id).in_(list(item_ids)))
        .order_by(col(ReviewDecision.created_at), col(ReviewDecision.id))
    )
    return {row.item_id: row for row in (await session.execute(query)).scalars().all()}


def corrected_of(decision: ReviewDecision) -> Problem | None:
    """The teacher's corrected version of a decision, if one was given."""
    if not decision.corrected_question:
        return None
    return Problem(question=decision.corrected_question, solution=decision.corrected_solution or "")


def _request_hash(body: DecisionIn) -> str:
    return hashlib.sha256(body.model_dump_json().encode()).hexdigest()


async def _earlier(session: AsyncSession, item_id: str, idempotency_key: str) -> ReviewDecision | None:
    query = select(ReviewDecision).where(
        col(ReviewDecision.item_id) == item_id, col(ReviewDecision.idempotency_key) == idempotency_key
    )
    return (await session.execute(query)).scalars().first()


def _replay(earlier: ReviewDecision, item: ReviewItem, digest: str) -> Decided:
    if earlier.request_hash != digest:
        raise Conflict("This Idempotency-Key was used with a different decision.")
    return Decided(earlier, item, replayed=True)


async def decide(
    session: AsyncSession, item: ReviewItem, body: DecisionIn, key: ApiKey | None, idempotency_key: str | None
) -> Decided:
    """Record a decision on ``item`` (its latest from now on), write it to the audit log and
    announce ``review.decided``. 409 (with the item's state) when the item is no longer in the queue
    and the body does not name the decision it replaces; an Idempotency-Key sent before returns
    that request's decision."""
    digest = _request_hash(body)
    if idempotency_key and (earlier := await _earlier(session, item.id, idempotency_key)) is not None:
        return _replay(earlier, item, digest)
    current = (await latest(session, [item.id])).get(item.id)
    _check_state(item, current, body.replaces)
    row = ReviewDecision(
        item_id=item.id,
        project_id=item.project_id,
        decision=body.decision,
        flaws=[flaw.model_dump() for flaw in body.flaws],
        corrected_question=body.corrected.question if body.corrected else None,
        corrected_solution=body.corrected.solution if body.corrected else None,
        note=body.note,
        reviewer=body.reviewer or (key.name if key else audit.CLI),
        key_id=key.id if key else None,
        idempotency_key=idempotency_key,
        request_hash=digest,
        replaces=current.id if current else None,
    )
    try:
        async with session.begin_nested():
            session.add(row)
    except IntegrityError:  # the same Idempotency-Key raced in
        earlier = await _earlier(session, item.id, idempotency_key or "")
        if earlier is None:
            raise
        return _replay(earlier, item, digest)
    item.status, item.decision, item.decided_at = DECIDED, body.decision, utcnow()
    await queue.settle_run(session, item.run_id)
    await _announce(session, item, row, key)
    return Decided(row, item)


def _check_state(item: ReviewItem, current: ReviewDecision | None, replaces: str | None) -> None:
    """409 unless a pending item gets its first decision or a decided one is replaced knowingly."""
    if item.status == queue.PENDING and replaces is None:
        return
    if item.status == DECIDED and current is not None and replaces == current.id:
        return
    state = {"status": item.status, "decision": item.decision, "decision_id": current.id if current else None}
    if item.status == queue.PENDING:
        raise Conflict(f"Review {item.id} has no decision to replace: send no 'replaces'.", current=state)
    raise Conflict(
        f"Review {item.id} is no longer in the queue: it was decided {item.decision}. To replace that "
        f"decision, send 'replaces': '{state['decision_id']}'.",
        current=state,
    )


async def _announce(session: AsyncSession, item: ReviewItem, row: ReviewDecision, key: ApiKey | None) -> None:
    """The decision's audit entry and its webhooks, in its transaction."""
    detail = {"decision": row.decision, "flaws": [f["type"] for f in row.flaws], "replaces": row.replaces}
    audit.record(session, key, "decided", "review", item.id, item.project_id, detail)
    run = await session.get(Run, item.run_id)
    if run is None:
        return
    payload = {
        "status": run.status,
        "review_id": item.id,
        "decision_id": row.id,
        "decision": row.decision,
        "flaws": row.flaws,
        "reviewer": row.reviewer,
        "replaces": row.replaces,
        "grading_progress": grading_progress(run.status, run.review),
    }
    await enqueue(session, run, "review.decided", payload)


async def request_review(session: AsyncSession, run: Run, key: ApiKey, note: str | None) -> ReviewItem:
    """Queue the run's final version for a teacher; 409 while it runs, or while it already waits."""
    if run.status not in RUN_TERMINAL or run.status == RunStatus.CANCELLED:
        raise Conflict(f"The run is {run.status}: only an ended run's version can be reviewed.")
    waiting = await queue.pending_item(session, run.id)
    if waiting is not None:
        raise Conflict(f"The run already waits in the queue as review {waiting.id}.", review_id=waiting.id)
    version = await _final_version(session, run)
    who = f"{key.name} ({key.prefix}…)"
    why: queue.Why = (queue.REQUESTED, note or f"requested by {who}", None)
    item = await queue.add_item(session, run, run.status, why, version, requested_by=who)
    audit.record(session, key, "requested", "review", item.id, run.project_id, {"run_id": run.id})
    return item


async def _final_version(session: AsyncSession, run: Run) -> tuple[int, str, str]:
    """The run's last judged version (round, question, solution); the problem as submitted if none."""
    query = select(RoundRow).where(col(RoundRow.run_id) == run.id).order_by(col(RoundRow.round).desc())
    last = (await session.execute(query.limit(1))).scalars().first()
    if last is not None:
        return last.round, last.question, last.solution
    problem = await session.get(ProblemRow, run.problem_id)
    assert problem is not None
    return 0, problem.question, problem.solution


async def queue_page(
    session: AsyncSession,
    project_id: str,
    *,
    status: str | None,
    reason: str | None,
    limit: int,
    cursor: str | None,
) -> tuple[Sequence[ReviewItem], str | None]:
    """A page of the project's review items, newest first, by status and reason."""
    query = select(ReviewItem).where(col(ReviewItem.project_id) == project_id)
    if status is not None:
        query = query.where(col(ReviewItem.status) == status)
    if reason is not None:
        query = query.where(col(ReviewItem.reason) == reason)
    return await page(session, query, ReviewItem, limit, cursor)
