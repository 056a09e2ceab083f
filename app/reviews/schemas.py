"""The review queue's request and response bodies (HTTP, the CLI and the Python client alike)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.labelled.labels import TAXONOMY
from agents.schemas import Problem
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

_ID = "7d1e0c2b9a8f4e3d8c7b6a5f4e3d2c1b"
_RUN_ID = "5dd6f164dde6407fb7dd519ec9a32a8a"
_WHEN = "2026-11-28T09:00:02Z"
_QUESTION = "Tickets for the school play cost the same. How much do 3 tickets cost?"
_SOLUTION = "3 × 4 = 12. The answer is $12."
_CAUSE = "the final answer depends on a step the verifier could not check: not accepted unreviewed"
_DRAW = {"rate": 0.05, "value": 0.0312, "rule": "sha256(seed:run_id)[:8] / 2**64 < rate"}
_DECIDED = {
    "id": "3a2b1c0d9e8f4a7b6c5d4e3f2a1b0c9d",
    "review_id": _ID,
    "decision": "flawed",
    "flaws": [_FLAW],
    "corrected": _DECISION["corrected"],
    "note": "fine once the price is given",
    "reviewer": "ms-okafor",
    "replaces": None,
    "created_at": _WHEN,
}


class FlawIn(BaseModel):
    """One flaw a teacher found: its type (from the project's taxonomy) and the evidence."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [_FLAW]})

    type: str = Field(
        min_length=1, max_length=64, description="A flaw type of the taxonomy", examples=["missing_data"]
    )
    evidence: str = Field(
        min_length=1,
        max_length=1000,
        description="Where and why it is a flaw, in a sentence",
        examples=["the price of one ticket is never given"],
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

    decision: Literal["sound", "flawed"] = Field(description="sound or flawed", examples=["flawed"])
    flaws: list[FlawIn] = Field(
        default_factory=list,
        max_length=20,
        description="With flawed: at least one flaw; with sound: none",
        examples=[[_FLAW]],
    )
    corrected: Problem | None = Field(
        default=None,
        description="The version the teacher would publish (labelled sound)",
        examples=[_DECISION["corrected"]],
    )
    note: str | None = Field(
        default=None,
        max_length=2000,
        description="Anything to keep with the decision",
        examples=["fine once the price is given"],
    )
    reviewer: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Who decided (default: the API key's name)",
        examples=["ms-okafor"],
    )
    replaces: str | None = Field(
        default=None,
        max_length=64,
        description="To replace a decided item's decision: that decision's id (the history is kept); "
        "a decided item is otherwise no longer in the queue (409)",
        examples=[None],
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

    model_config = ConfigDict(json_schema_extra={"examples": [_DECIDED]})

    id: str = Field(description="The decision's id", examples=[_DECIDED["id"]])
    review_id: str = Field(description="The review item decided", examples=[_ID])
    decision: Literal["sound", "flawed"] = Field(description="sound or flawed", examples=["flawed"])
    flaws: list[dict[str, Any]] = Field(
        description="With flawed: each flaw's type and evidence", examples=[[_FLAW]]
    )
    corrected: Problem | None = Field(
        description="The teacher's corrected version, if given (labelled sound)",
        examples=[_DECISION["corrected"]],
    )
    note: str | None = Field(
        description="The teacher's note, if any", examples=["fine once the price is given"]
    )
    reviewer: str = Field(
        description="Who decided (the name given, else the API key's)", examples=["ms-okafor"]
    )
    replaces: str | None = Field(description="The decision this one replaced, if any", examples=[None])
    created_at: datetime = Field(description="When it was decided (UTC)", examples=[_WHEN])


_ITEM: dict[str, Any] = {
    "id": _ID,
    "run_id": _RUN_ID,
    "status": "decided",
    "reason": "needs_review",
    "cause": _CAUSE,
    "round": 1,
    "question": _QUESTION,
    "solution": _SOLUTION,
    "run_status": "needs_review",
    "grading_progress": "FullyGraded",
    "metadata": {"pupil": "P-17"},
    "draw": None,
    "requested_by": None,
    "decision": _DECIDED,
    "created_at": _WHEN,
    "decided_at": _WHEN,
}


class ReviewPublic(BaseModel):
    """A review item: a run's version in its project's queue, why it is there, and its state."""

    model_config = ConfigDict(json_schema_extra={"examples": [_ITEM]})

    id: str = Field(description="The review item's id", examples=[_ID])
    run_id: str = Field(description="The run reviewed: GET /v1/runs/{run_id}", examples=[_RUN_ID])
    status: Literal["pending", "decided"] = Field(
        description="pending (in the queue) or decided (out of it; a decision may still be replaced)",
        examples=["pending"],
    )
    reason: Literal["needs_review", "audit", "requested"] = Field(
        description="needs_review (the run ended so), audit (an accepted or screened run drawn for "
        "audit) or requested",
        examples=["needs_review"],
    )
    cause: str = Field(
        description="The run's stop reason, 'audit sample', or the request's note", examples=[_CAUSE]
    )
    round: int = Field(
        description="The round of the version to decide (0: the problem as submitted)", examples=[1]
    )
    question: str = Field(
        description="The version's question, as a pupil would read it", examples=[_QUESTION]
    )
    solution: str = Field(description="The version's stated solution", examples=[_SOLUTION])
    run_status: str = Field(
        description="The run's outcome when it entered the queue", examples=["needs_review"]
    )
    grading_progress: GradingProgress = Field(
        description="The run's grading progress (LTI AGS): PendingManual while the item waits",
        examples=["PendingManual"],
    )
    metadata: dict[str, Any] = Field(
        description="The run's metadata (a pupil's id, say)", examples=[{"pupil": "P-17"}]
    )
    draw: dict[str, Any] | None = Field(
        description="An audit sample's seeded draw (rate, value, rule): redo it with the project's "
        "audit_seed",
        examples=[_DRAW],
    )
    requested_by: str | None = Field(
        description="The key that requested the review, if requested", examples=[None]
    )
    decision: DecisionPublic | None = Field(
        description="The latest decision, if decided", examples=[_DECIDED]
    )
    created_at: datetime = Field(description="When it entered the queue (UTC)", examples=[_WHEN])
    decided_at: datetime | None = Field(description="When it was last decided (UTC)", examples=[_WHEN])


_VERDICT = {"judge": "apply", "score": 92, "rationale": "3 × 4 = 12 is right", "abstained": False}


class ReviewDetail(ReviewPublic):
    """A review item with what a teacher needs to decide: each judge's words on the version, the
    warrant, the think-aloud of every revision, and every decision so far (oldest first)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_ITEM | {"verdicts": [_VERDICT]}]})

    verdicts: list[dict[str, Any]] = Field(
        description="The judges' verdicts on the version decided (as in the run's trace)",
        examples=[[_VERDICT]],
    )
    warrant: dict[str, Any] | None = Field(
        description="The run's warrant (accepted runs; as in the run's trace)", examples=[None]
    )
    stop_reason: str | None = Field(description="Why the run ended, in words", examples=[_CAUSE])
    thinking: list[dict[str, Any]] = Field(
        description="Each revision's think-aloud: round and text",
        examples=[[{"round": 1, "text": "The price of a ticket is missing, so I give it."}]],
    )
    history: list[DecisionPublic] = Field(description="Every decision, oldest first", examples=[[_DECIDED]])


class ReviewPage(BaseModel):
    """GET /v1/reviews."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"items": [_ITEM], "next_cursor": None}]})

    items: list[ReviewPublic] = Field(description="The page's items, newest first", examples=[[_ITEM]])
    next_cursor: str | None = Field(
        description="Pass as cursor for the next page; null: the last", examples=[None]
    )


class ReviewRequest(BaseModel):
    """POST /v1/runs/{id}/review-requests: ask a teacher to decide the run's final version."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [{"note": "the pupil says the answer key is wrong"}]},
    )

    note: str | None = Field(
        default=None,
        max_length=2000,
        description="Why (kept as the item's cause)",
        examples=["the pupil says the answer key is wrong"],
    )


class _ReviewWebhook(BaseModel):
    """What a review event carries: the stamp and the run every event about a run carries (signed
    like every other event), and the review item."""

    type: str = Field(
        description="The event: review.requested or review.decided", examples=["review.decided"]
    )
    id: str = Field(
        description="The event's id: a redelivery keeps it, so a receiver can drop repeats",
        examples=["0e8d1c2b3a4f4e5d9c8b7a6f5e4d3c2b"],
    )
    created: datetime = Field(description="When the event was made (UTC)", examples=[_WHEN])
    run_id: str = Field(description="The run reviewed: GET /v1/runs/{run_id}", examples=[_RUN_ID])
    status: str = Field(description="The run's status", examples=["needs_review"])
    metadata: dict[str, Any] = Field(
        description="The metadata the run was submitted with", examples=[{"pupil": "P-17"}]
    )
    grading_progress: GradingProgress = Field(
        description="The run's grading progress (LTI AGS): PendingManual once queued, FullyGraded once "
        "decided",
        examples=["PendingManual"],
    )
    review_id: str = Field(description="The review item: GET /v1/reviews/{review_id}", examples=[_ID])


class ReviewRequestedWebhook(_ReviewWebhook):
    """A run's version entered its project's review queue."""

    type: Literal["review.requested"] = Field(description="review.requested", examples=["review.requested"])
    reason: Literal["needs_review", "audit", "requested"] = Field(
        description="Why it entered the queue", examples=["audit"]
    )
    cause: str = Field(
        description="The run's stop reason, 'audit sample', or the request's note", examples=["audit sample"]
    )
    round: int = Field(
        description="The round of the version to decide (0: the problem as submitted)", examples=[2]
    )


class ReviewDecidedWebhook(_ReviewWebhook):
    """A teacher decided a review item (or replaced an earlier decision)."""

    type: Literal["review.decided"] = Field(description="review.decided", examples=["review.decided"])
    decision_id: str = Field(description="The decision's id", examples=[_DECIDED["id"]])
    decision: Literal["sound", "flawed"] = Field(description="sound or flawed", examples=["flawed"])
    flaws: list[dict[str, Any]] = Field(
        description="With flawed: each flaw's type and evidence", examples=[[_FLAW]]
    )
    reviewer: str = Field(description="Who decided", examples=["ms-okafor"])
    replaces: str | None = Field(description="The decision this one replaced, if any", examples=[None])
