"""HTTP schemas of the runs API."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field

from agents.schemas import CallFailure, QuestionText, SolutionText, SolverOutcome
from graphs.scoring import Outcome
from graphs.state import RoundFigures

RunStatus = Literal["queued", "running", "accepted", "exhausted", "needs_review", "error", "cancelled"]
# A run's status, once it ends, is its outcome.
TERMINAL: frozenset[str] = frozenset(Outcome)

_EXAMPLE_PROBLEM: dict[str, Any] = {
    "question": "An orchestra of 120 musicians takes 40 minutes to perform a symphony. How long would "
    "it take 60 musicians?",
    "solution": "40 × 120 / 60 = 80 minutes.",
    "metadata": {"source": "worksheet 3"},
}


class ProblemIn(BaseModel):
    """The problem to refine."""

    model_config = ConfigDict(extra="forbid")

    question: QuestionText
    solution: SolutionText = ""
    metadata: dict[str, str | int | float | bool | None] = Field(default_factory=dict, max_length=32)


class RunOptions(BaseModel):
    """How to run: who judges, who revises, the scoring policy and the round limit."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(
        default=None, max_length=200, description="Model under test (default: settings)"
    )
    judge_model: str | None = Field(
        default=None, max_length=200, description="Judge model (default: settings)"
    )
    policy: Literal["default", "think-paper"] | None = None
    max_rounds: int | None = Field(default=None, ge=1, le=10)


class RunCreate(BaseModel):
    """POST /v1/runs body."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"problem": _EXAMPLE_PROBLEM, "options": {"max_rounds": 3}}]},
    )

    problem: ProblemIn
    options: RunOptions = Field(default_factory=RunOptions)
    webhook_url: AnyHttpUrl | None = Field(default=None, description="POSTed a signed run.finished event")


class RunPublic(BaseModel):
    """A run as listed: its state, options and headline figures."""

    id: str
    status: RunStatus
    model: str
    judge_model: str
    policy: str
    max_rounds: int
    question: str
    created_at: datetime
    finished_at: datetime | None
    stop_reason: str | None
    failure: CallFailure | None = Field(
        default=None, description="Why the run ended in error: model, endpoint host, HTTP status or exception"
    )
    rounds_to_pass: int | None = None
    avg_quality_final: float | None = None


class CallAccounting(BaseModel):
    """Who produced an output, with which prompt version, and what it cost."""

    model: str
    prompt_version: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: float | None


class VerdictPublic(CallAccounting):
    """One judge's verdict with its audit trail."""

    judge: str
    score: int | None
    confidence: int | None
    rationale: str | None
    details: dict[str, Any] | None
    abstained: bool
    abstain_reason: str | None
    failure: CallFailure | None = None
    reasoning: str = Field(default="", description="A reasoning model's own thinking before its verdict")
    raw_outputs: list[str]


class RevisionPublic(CallAccounting):
    """What the model under test made of a round's feedback."""

    question: str | None
    solution: str | None
    thinking: str
    error: str | None
    failure: CallFailure | None = None


class RoundPublic(RoundFigures):
    """One evaluated version, its seven verdicts, its scores, and the revision it led to."""

    round: int
    question: str
    solution: str
    verification: list[str] = Field(
        default_factory=list,
        description="Computations of the stated solution found wrong (none: all checked ones hold)",
    )
    solver: SolverOutcome | None = Field(
        default=None,
        description="The solver's answer to the question alone, or its failed call (then nothing was "
        "compared); a disagreeing answer is a line in `verification`. None: no solver ran",
    )
    verdicts: list[VerdictPublic]
    feedback: list[str]
    revision: RevisionPublic | None


class RunTrace(RunPublic):
    """GET /v1/runs/{id}: the full revision trace."""

    problem: ProblemIn
    rounds: list[RoundPublic]
    metrics: dict[str, Any] | None
    usage: dict[str, Any]


class RunPage(BaseModel):
    """A page of runs; pass ``next_cursor`` as ``cursor`` for the next one."""

    items: list[RunPublic]
    next_cursor: str | None
