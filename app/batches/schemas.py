"""HTTP schemas of the batches API."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from graphs.scoring import PolicyName

BatchStatus = Literal["queued", "running", "paused", "completed", "cancelled", "budget_exhausted"]
ReportFormat = Literal["json", "md", "csv", "html"]
ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200)]
MAX_BATCH_ITEMS = 100_000


class BatchCreate(BaseModel):
    """POST /v1/batches body: a dataset × models under test × repeats, judged the same way."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"dataset_id": "3f2c…", "models": ["gpt4o", "qwen-local"], "control_arm": True}]
        },
    )

    dataset_id: str = Field(max_length=64)
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
