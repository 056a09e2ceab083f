"""Entering the review queue: a run that ends needs_review, an accepted or screened run drawn for
audit, or any ended run on request.

The audit draw is seeded and recorded: a run is drawn when ``audit_draw(project.audit_seed, run.id)``
is below the project's ``audit_rate``. The draw is the first 8 bytes of SHA-256 of ``seed:run_id``
read as an integer over 2**64, so an auditor who knows the seed (a project admin sees it) recomputes
every draw with one line of any language, and the service cannot choose which runs are audited.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.grading import DECIDED, PENDING_REVIEW, GradingProgress, grading_progress
from app.models import Project, ReviewItem, Run, RunStatus
from app.webhooks.outbox import enqueue

NEEDS_REVIEW = RunStatus.NEEDS_REVIEW.value  # a run that ended needing review: the reason is its outcome
AUDIT = "audit"
REQUESTED = "requested"
REASONS = (NEEDS_REVIEW, AUDIT, REQUESTED)
AUDIT_CAUSE = "audit sample"
PENDING = "pending"
AUDITED = frozenset({RunStatus.ACCEPTED, RunStatus.SCREENED})


def audit_draw(seed: str, run_id: str) -> float:
    """The run's audit draw in [0, 1): uniform, and the same for anyone holding ``seed``."""
    digest = hashlib.sha256(f"{seed}:{run_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def drawn(project: Project, run_id: str) -> dict[str, Any] | None:
    """The recorded draw when ``run_id`` is drawn for audit under the project's rate; else None."""
    rate = project.audit_rate or 0.0
    value = audit_draw(project.audit_seed, run_id)
    if value >= rate:
        return None
    return {"rate": rate, "value": value, "rule": "sha256(seed:run_id)[:8] / 2**64 < rate"}


Why = tuple[str, str, dict[str, Any] | None]  # reason, cause, the audit's draw


def reason_for(project: Project | None, run: Run, outcome: str, stop_reason: str) -> Why | None:
    """Why a run that ended ``outcome`` (for ``stop_reason``) enters its project's queue, or None. A
    batch's runs enter only on request: a research batch is no tutoring product's traffic."""
    if run.batch_id is not None:
        return None
    if outcome == RunStatus.NEEDS_REVIEW:
        return NEEDS_REVIEW, stop_reason, None
    if outcome in AUDITED and project is not None:
        draw = drawn(project, run.id)
        if draw is not None:
            return AUDIT, AUDIT_CAUSE, draw
    return None


async def on_run_end(
    session: AsyncSession, run: Run, outcome: str, stop_reason: str, version: tuple[int, str, str]
) -> GradingProgress:
    """Queue the run for review when it ends ``outcome`` and should be (``version``: the round, the
    question and the solution to decide), in the run's end transaction; the run's grading progress."""
    # the project (its audit rate and seed) is looked up only for a run an audit may draw
    drawable = outcome in AUDITED and run.batch_id is None
    project = await session.get(Project, run.project_id) if drawable else None
    why = reason_for(project, run, outcome, stop_reason)
    if why is not None:
        await add_item(session, run, outcome, why, version)
    return grading_progress(outcome, run.review)


async def add_item(
    session: AsyncSession,
    run: Run,
    outcome: str,
    why: Why,
    version: tuple[int, str, str],
    requested_by: str | None = None,
) -> ReviewItem:
    """Add the run's version to the queue, mark the run pending review and announce
    ``review.requested`` to its webhooks."""
    reason, cause, draw = why
    round_no, question, solution = version
    item = ReviewItem(
        project_id=run.project_id,
        run_id=run.id,
        reason=reason,
        cause=cause,
        round=round_no,
        question=question,
        solution=solution,
        run_status=outcome,
        draw=draw,
        requested_by=requested_by,
    )
    session.add(item)
    await _mark(session, run.id, PENDING_REVIEW)
    run.review = PENDING_REVIEW
    payload = {
        "status": outcome,
        "review_id": item.id,
        "reason": reason,
        "cause": cause,
        "round": round_no,
        "grading_progress": grading_progress(outcome, PENDING_REVIEW),
    }
    await enqueue(session, run, "review.requested", payload)
    return item


async def _mark(session: AsyncSession, run_id: str, review: str) -> None:
    """Set the stored run's review state (the run object the caller holds may be detached)."""
    stored = await session.get(Run, run_id)
    if stored is not None:
        stored.review = review


async def pending_item(session: AsyncSession, run_id: str) -> ReviewItem | None:
    """The run's review item awaiting a decision, if any."""
    query = select(ReviewItem).where(col(ReviewItem.run_id) == run_id, col(ReviewItem.status) == PENDING)
    return (await session.execute(query)).scalars().first()


async def settle_run(session: AsyncSession, run_id: str) -> None:
    """The run's review state once an item of it is decided: decided unless another still waits."""
    await _mark(session, run_id, PENDING_REVIEW if await pending_item(session, run_id) else DECIDED)
