"""HTTP schemas of the batches API."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from agents.schemas import CallFailure
from app.models import BatchItem
from app.reporting.item_result import ItemResult
from app.text import storable_if_text
from graphs.scoring import PolicyName

BatchStatus = Literal["queued", "running", "paused", "completed", "cancelled", "budget_exhausted"]
ReportFormat = Literal["json", "md", "csv", "html"]
ItemFormat = Literal["jsonl", "csv", "parquet"]
ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200), BeforeValidator(storable_if_text)]
MAX_BATCH_ITEMS = 100_000


class BatchCreate(BaseModel):
    """POST /v1/batches body: a dataset × models under test × repeats, judged the same way."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"dataset_id": "3f2c…", "models": ["gpt4o", "qwen-local"], "control_arm": True}]
        },
    )

    dataset_id: Annotated[str, BeforeValidator(storable_if_text)] = Field(max_length=64)
    models: list[ModelName] = Field(min_length=1, max_length=20, description="Models under test")
    judge_model: ModelName | None = Field(default=None, description="Judge model (default: settings)")
    policy: PolicyName | None = None
    max_rounds: int = Field(default=3, ge=1, le=10)
    repeats: int = Field(default=1, ge=1, le=100)
    control_arm: bool = Field(default=False, description="Also one revision with no feedback, judged alike")
    use_cache: bool = Field(default=True, description="Answer identical temperature-0 calls from the cache")
    budget_tokens: int | None = Field(default=None, ge=1, description="Stop cleanly once spent")
    budget_usd: float | None = Field(default=None, ge=0, description="Stop cleanly once spent")


class BatchProgress(BaseModel):
    """Items by state, what was spent, and an ETA from the rate so far."""

    status: BatchStatus
    stop_reason: str | None
    items: dict[str, int]
    total: int
    finished: int
    eta_s: float | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float


class BatchPublic(BaseModel):
    """A batch: what it evaluates and how far it got."""

    id: str
    dataset_id: str
    models: list[str]
    judge_model: str
    policy: str
    max_rounds: int
    repeats: int
    control_arm: bool
    use_cache: bool
    budget_tokens: int | None
    budget_usd: float | None
    created_at: datetime
    finished_at: datetime | None = None
    progress: BatchProgress


class BatchPage(BaseModel):
    """A page of batches; pass ``next_cursor`` as ``cursor`` for the next one."""

    items: list[BatchPublic]
    next_cursor: str | None


ItemStatus = Literal["pending", "running", "done", "failed", "cancelled"]
ItemOutcome = Literal["accepted", "exhausted", "needs_review", "error", "cancelled"]


class BatchItemPublic(BaseModel):
    """One item: a problem under one model, arm and repeat; its outcome and what it cost."""

    id: int
    run_id: str | None = Field(
        description="The run recording the finished item's trace: GET /v1/runs/{run_id} (null until it ends)"
    )
    problem_id: str
    model: str
    arm: str
    repeat: int
    status: ItemStatus = Field(
        description="Where the item is: pending, running, done, failed (= error), cancelled"
    )
    outcome: ItemOutcome | None = Field(description="How it ended; null while pending or running")
    error: str | None = Field(description="For an error: the cause in one line")
    failure: CallFailure | None = Field(
        description="For an error: model, endpoint host, HTTP status, exception"
    )
    stop_reason: str | None
    rounds: int = Field(description="Versions judged")
    final_quality: float | None = Field(description="Q of the last judged version (0-1)")
    attempts: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    finished_at: datetime | None

    @classmethod
    def of(cls, item: BatchItem) -> BatchItemPublic:
        """The public view of a stored item."""
        result = ItemResult.model_validate(item.result) if item.result else None
        return cls(
            **item.model_dump(
                include={
                    "run_id",
                    "problem_id",
                    "model",
                    "arm",
                    "repeat",
                    "status",
                    "outcome",
                    "error",
                    "attempts",
                    "input_tokens",
                    "output_tokens",
                    "cost_usd",
                    "latency_s",
                    "finished_at",
                }
            ),
            id=item.id or 0,
            failure=CallFailure.model_validate(item.failure) if item.failure else None,
            stop_reason=result.stop_reason if result else None,
            rounds=len(result.rounds) if result else 0,
            final_quality=result.rounds[-1].quality if result and result.rounds else None,
        )


class BatchItemPage(BaseModel):
    """A page of a batch's items; pass ``next_cursor`` as ``cursor`` for the next one."""

    items: list[BatchItemPublic]
    next_cursor: str | None
