"""A run's grading progress in the words of LTI Assignment and Grade Services (AGS), which a
tutoring backend passes on to its learning platform: ``Pending`` while the run is queued or
running; ``PendingManual`` while a teacher's review of it is awaited (a needs_review run, an
audit sample, a requested review); ``FullyGraded`` when its outcome (or a teacher's decision)
stands; ``Failed`` for a run that erred; ``NotReady`` for one cancelled before it ended."""

from __future__ import annotations

from typing import Literal

from app.models import RUN_UNFINISHED, RunStatus

GradingProgress = Literal["Pending", "PendingManual", "FullyGraded", "Failed", "NotReady"]
PENDING_REVIEW = "pending"  # Run.review while a review item of the run awaits a decision
DECIDED = "decided"  # Run.review once a teacher decided (the latest review item)


def grading_progress(status: str, review: str | None) -> GradingProgress:
    """The AGS grading progress of a run with ``status`` whose review is ``review`` (None: never
    queued for review; ``pending``; ``decided``)."""
    if status in RUN_UNFINISHED:
        return "Pending"
    if status == RunStatus.ERROR:
        return "Failed"
    if status == RunStatus.CANCELLED:
        return "NotReady"
    if review == PENDING_REVIEW or (review is None and status == RunStatus.NEEDS_REVIEW):
        return "PendingManual"
    return "FullyGraded"
