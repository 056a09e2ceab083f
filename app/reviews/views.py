"""The public views of review items: a row of the queue, and an item with all a teacher needs."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.grading import grading_progress
from app.models import ReviewDecision, ReviewItem, Run
from app.reviews.decisions import corrected_of, history, latest
from app.reviews.schemas import DecisionPublic, ReviewDetail, ReviewPublic
from app.runs import service


def decision_public(row: ReviewDecision) -> DecisionPublic:
    """A stored decision as the API shows it."""
    return DecisionPublic(
        id=row.id,
        review_id=row.item_id,
        decision=row.decision,
        flaws=row.flaws,
        corrected=corrected_of(row),
        note=row.note,
        reviewer=row.reviewer,
        replaces=row.replaces,
        created_at=row.created_at,
    )


def review_public(item: ReviewItem, run: Run | None, decision: ReviewDecision | None) -> ReviewPublic:
    """A queue row: the item, its run's grading progress and metadata, and its latest decision."""
    return ReviewPublic(
        id=item.id,
        run_id=item.run_id,
        status=item.status,
        reason=item.reason,
        cause=item.cause,
        round=item.round,
        question=item.question,
        solution=item.solution,
        run_status=item.run_status,
        grading_progress=grading_progress(run.status, run.review) if run else "NotReady",
        metadata=(run.meta if run else None) or {},
        draw=item.draw,
        requested_by=item.requested_by,
        decision=decision_public(decision) if decision else None,
        created_at=item.created_at,
        decided_at=item.decided_at,
    )


async def review_rows(session: AsyncSession, items: Sequence[ReviewItem]) -> list[ReviewPublic]:
    """Queue rows of ``items``."""
    decisions = await latest(session, [item.id for item in items])
    found = await session.execute(select(Run).where(col(Run.id).in_({item.run_id for item in items})))
    runs = {run.id: run for run in found.scalars().all()}
    return [review_public(i, runs.get(i.run_id), decisions.get(i.id)) for i in items]


async def review_detail(session: AsyncSession, item: ReviewItem) -> ReviewDetail:
    """The item with its run's verdicts on the version decided, warrant, think-aloud and history."""
    run = await session.get(Run, item.run_id)
    past = await history(session, item.id)
    row = review_public(item, run, past[-1] if past else None)
    decided = [decision_public(d) for d in past]
    trace = await service.trace(session, row.run_id, item.project_id)  # rereads: ``item`` expires
    judged = next((r for r in trace.rounds if r.round == row.round), None)
    thinking = [
        {"round": r.round, "text": r.revision.thinking}
        for r in trace.rounds
        if r.revision is not None and r.revision.thinking
    ]
    return ReviewDetail(
        **row.model_dump(),
        verdicts=[v.model_dump(mode="json") for v in judged.verdicts] if judged else [],
        warrant=trace.warrant.model_dump(mode="json") if trace.warrant is not None else None,
        stop_reason=trace.stop_reason,
        thinking=thinking,
        history=decided,
    )
