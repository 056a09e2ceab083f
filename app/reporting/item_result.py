"""What a batch stores for one finished item, as a typed model (reports read these, never loose dicts)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agents.schemas import CallFailure
from app.problems import content_hash
from graphs.result import RunResult


class RoundSummary(BaseModel):
    """One judged version: Q, the decision, each judge's score (None: no verdict), mean confidence."""

    round: int
    quality: float | None
    decision: str
    scores: dict[str, float | None]
    confidence: float
    version: str = Field(default="", description="Content hash of the judged question and solution")
    n_failed: int = 0


class CallCounts(BaseModel):
    """LLM calls answered, HTTP retries behind them, judge verdicts missing, and replies taken from
    the response cache (not counted among the calls: they cost nothing)."""

    llm_calls: int = 0
    retries: int = 0
    abstentions: int = 0
    cache_hits: int = 0


class ItemResult(BaseModel):
    """A finished item: its outcome, metrics, per-round summaries and final version."""

    outcome: str
    stop_reason: str = ""
    metrics: dict[str, Any] | None = Field(description="None for an error run: a failure is never a score")
    rounds: list[RoundSummary]
    final: dict[str, str]
    calls: CallCounts = Field(default_factory=CallCounts)
    failure: CallFailure | None = None
    # An accepted item's warrant (app.validity.records.warrant_of); null for any other outcome
    warrant: dict[str, Any] | None = None

    @property
    def figures(self) -> dict[str, Any]:
        """The run metrics; empty for an error run (it has none)."""
        return self.metrics or {}

    @classmethod
    def of(cls, result: RunResult) -> ItemResult:
        """The summary a report needs of a finished run."""
        rounds = []
        for record in result.rounds:
            confidences = [o.verdict.confidence for o in record.outcomes if o.verdict]
            rounds.append(
                RoundSummary(
                    round=record.round,
                    quality=record.quality,
                    decision=record.decision,
                    scores=record.level_scores(),
                    confidence=sum(confidences) / len(confidences) if confidences else 0.0,
                    version=content_hash(record.problem.question, record.problem.solution),
                    n_failed=record.n_failed,
                )
            )
        usage = result.usage
        return cls(
            outcome=result.outcome,
            stop_reason=result.stop_reason,
            metrics=result.metrics,
            rounds=rounds,
            final=result.final.model_dump(),
            calls=CallCounts(
                llm_calls=usage.calls,
                retries=usage.retries,
                abstentions=sum(1 for r in result.rounds for o in r.outcomes if o.verdict is None),
            ),
            failure=result.failure,
            warrant=result.warrant,
        )
