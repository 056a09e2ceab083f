"""The review queue's request and response bodies (HTTP, the CLI and the Python client alike)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.schemas import Problem
from agents.validity.labels import TAXONOMY
from app.grading import GradingProgress

_FLAW: dict[str, Any] = {"type": "missing_data", "evidence": "the price of one ticket is never given"}
_DECISION: dict[str, Any] = {
    "decision": "flawed",
    "flaws": [_FLAW],
    "corrected": {
        "question": "A ticket costs $4. How much do 3 tickets cost?",
        "solution": "3 × 4 = 12. The answer is $12.",
    },
    "note": "fine once the price is given",
}


class FlawIn(BaseModel):
    """One flaw a teacher found: its type (from the project's taxonomy) and the evidence."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: str = Field(
        min_length=1, max_length=64, description="A flaw type of the taxonomy", examples=["missing_data"]
    )
    evidence: str = Field(
        min_length=1, max_length=1000, description="Where and why it is a flaw, in a sentence"
    )

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in TAXONOMY:
            raise ValueError(f"unknown flaw type {value!r}; the valid ones are {', '.join(TAXONOMY)}")
        return value


class DecisionIn(BaseModel):
    """A teacher's decision on a queued version: sound, or flawed with the flaws' types and
    evidence; optionally a corrected (or edited) version, which is labelled sound, a note and the
    reviewer's name (default: the API key's name)."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [_DECISION]})

    decision: Literal["sound", "flawed"] = Field(description="sound or flawed")
    flaws: list[FlawIn] = Field(
        default_factory=list, max_length=20, description="With flawed: at least one flaw; with sound: none"
    )
    corrected: Problem | None = Field(
        default=None, description="The version the teacher would publish (labelled sound)"
    )
    note: str | None = Field(default=None, max_length=2000, description="Anything to keep with the decision")
    reviewer: str | None = Field(
        default=None, min_length=1, max_length=200, description="Who decided (default: the API key's name)"
    )
    replaces: str | None = Field(
        default=None,
        max_length=64,
        description="To replace a decided item's decision: that decision's id (the history is kept); "
        "a decided item is otherwise no longer in the queue (409)",
    )

    @model_validator(mode="after")
    def _consistent(self) -> DecisionIn:
        if self.decision == "flawed" and not self.flaws:
            raise ValueError("a flawed decision names at least one flaw (type and evidence)")
        if self.decision == "sound" and self.flaws:
            raise ValueError("a sound decision names no flaws")
        return self


class DecisionPublic(BaseModel):
    """A recorded decision."""

    id: str = Field(description="The decision's id")
    review_id: str = Field(description="The review item decided")
    decision: Literal["sound", "flawed"]
    flaws: list[dict[str, Any]] = Field(description="The flaws' types and evidence (flawed)")
    corrected: Problem | None = Field(description="The teacher's corrected version, if given")
    note: str | None
    reviewer: str = Field(description="Who decided")
    replaces: str | None = Field(description="The decision this one replaced, if any")
    created_at: datetime


class ReviewPublic(BaseModel):
    """A review item: a run's version in its project's queue, why it is there, and its state."""

    id: str
    run_id: str
    status: Literal["pending", "decided"]
    reason: Literal["needs_review", "audit", "requested"] = Field(
        description="needs_review (the run ended so), audit (an accepted or screened run drawn for "
        "audit) or requested"
    )
    cause: str = Field(description="The run's stop reason, 'audit sample', or the request's note")
    round: int = Field(description="The round of the version to decide (0: the problem as submitted)")
    question: str
    solution: str
    run_status: str = Field(description="The run's outcome when it entered the queue")
    grading_progress: GradingProgress = Field(description="The run's grading progress (LTI AGS)")
    metadata: dict[str, Any] = Field(description="The run's metadata (a pupil's id, say)")
    draw: dict[str, Any] | None = Field(description="An audit sample's seeded draw (rate, value, rule)")
    requested_by: str | None
    decision: DecisionPublic | None = Field(description="The latest decision, if decided")
    created_at: datetime
    decided_at: datetime | None


class ReviewDetail(ReviewPublic):
    """A review item with what a teacher needs to decide: each judge's words on the version, the
    warrant, the think-aloud of every revision, and every decision so far (oldest first)."""

    verdicts: list[dict[str, Any]] = Field(description="The judges' verdicts on the version decided")
    warrant: dict[str, Any] | None = Field(description="The run's warrant (accepted runs)")
    stop_reason: str | None
    thinking: list[dict[str, Any]] = Field(description="Each revision's think-aloud: round and text")
    history: list[DecisionPublic] = Field(description="Every decision, oldest first")


class ReviewPage(BaseModel):
    """GET /v1/reviews."""

    items: list[ReviewPublic]
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null: the last")


class ReviewRequest(BaseModel):
    """POST /v1/runs/{id}/review-requests: ask a teacher to decide the run's final version."""

    model_config = ConfigDict(extra="forbid", strict=True)

    note: str | None = Field(default=None, max_length=2000, description="Why (kept as the item's cause)")


class _ReviewWebhook(BaseModel):
    """What a review event carries beside the stamp (type, id, created) and the run (run_id, status,
    metadata, grading_progress) every event about a run carries."""

    type: str
    id: str
    created: datetime
    run_id: str
    status: str = Field(description="The run's status")
    metadata: dict[str, Any]
    grading_progress: GradingProgress
    review_id: str = Field(description="The review item: GET /v1/reviews/{review_id}")


class ReviewRequestedWebhook(_ReviewWebhook):
    """A run's version entered its project's review queue."""

    type: Literal["review.requested"]
    reason: Literal["needs_review", "audit", "requested"]
    cause: str
    round: int


class ReviewDecidedWebhook(_ReviewWebhook):
    """A teacher decided a review item (or replaced an earlier decision)."""

    type: Literal["review.decided"]
    decision_id: str
    decision: Literal["sound", "flawed"]
    flaws: list[dict[str, Any]]
    reviewer: str
    replaces: str | None
