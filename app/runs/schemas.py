"""HTTP schemas of the runs API."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AnyHttpUrl, BaseModel, BeforeValidator, ConfigDict, Field

from agents.llm.calls import CallFailure
from agents.schemas import QuestionText, SolutionText, SolverResult
from app.grading import GradingProgress
from app.models import RunStatus
from app.text import StorableText, storable_if_text, storable_scalar
from app.validity.panel_schemas import WARRANT_EXAMPLES, Warrant
from graphs.state import RoundFigures

_EXAMPLE_PROBLEM: dict[str, Any] = {
    "question": "An orchestra of 120 musicians takes 40 minutes to perform a symphony. How long would "
    "it take 60 musicians?",
    "solution": "40 × 120 / 60 = 80 minutes.",
    "metadata": {"source": "worksheet 3"},
}


class ProblemIn(BaseModel):
    """The problem to refine."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: Annotated[QuestionText, BeforeValidator(storable_if_text)] = Field(
        description="The word problem's text, as pupils would read it"
    )
    solution: Annotated[SolutionText, BeforeValidator(storable_if_text)] = Field(
        default="", description="Its stated solution (may be empty: then only the question is judged)"
    )
    metadata: dict[
        StorableText, Annotated[str | int | float | bool | None, AfterValidator(storable_scalar)]
    ] = Field(
        default_factory=dict,
        max_length=32,
        description="Up to 32 keys of yours kept with this run (e.g. pupil, worksheet); never shared "
        "with another submission of the same text",
    )


class GuaranteeTarget(BaseModel):
    """Acceptance with a guarantee: false accepts ≤ alpha with confidence 1 − delta (docs/guarantee.md)."""

    model_config = ConfigDict(
        extra="forbid", strict=True, json_schema_extra={"examples": [{"alpha": 0.05, "delta": 0.1}]}
    )

    alpha: float = Field(
        gt=0,
        lt=1,
        description="The false accepts allowed among the versions a panel accepts itself",
        examples=[0.05],
    )
    delta: float = Field(
        gt=0, lt=1, description="The chance allowed that the bound does not hold", examples=[0.1]
    )


class RunOptions(BaseModel):
    """How to run: who judges, who revises, the scoring policy and the round limit."""

    model_config = ConfigDict(extra="forbid", strict=True)  # true is not 1 round, "2" not 2

    model: str | None = Field(
        default=None, max_length=200, description="Model under test (default: settings)", examples=["gpt4o"]
    )
    judge_model: str | None = Field(
        default=None, max_length=200, description="Judge model (default: settings)", examples=["rubric"]
    )
    policy: Literal["default", "think-paper"] | None = Field(
        default=None,
        description="Scoring policy: default (sound) or think-paper (the reference's formulas); "
        "default: settings",
        examples=["default"],
    )
    max_rounds: int | None = Field(
        default=None,
        ge=1,
        le=10,
        description="At most this many judged versions, 1–10 (default: the policy's)",
        examples=[3],
    )
    guarantee: GuaranteeTarget | None = Field(
        default=None,
        description="A guarantee target over the project's: an acceptance below the panel's calibrated "
        "threshold escalates to a stronger panel (THINKLOOP_ESCALATE_TO), then to needs_review",
        examples=[{"alpha": 0.05, "delta": 0.1}],
    )


class RunCreate(BaseModel):
    """POST /v1/runs body."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [{"problem": _EXAMPLE_PROBLEM, "options": {"max_rounds": 3}}]},
    )

    problem: ProblemIn = Field(description="The problem to refine")
    options: RunOptions = Field(
        default_factory=RunOptions, description="Models, policy and round limit; every field optional"
    )
    webhook_url: AnyHttpUrl | None = Field(
        default=None,
        description="POSTed a signed run.finished event",
        examples=["https://tutor.example/hooks/thinkloop"],
    )


_EXAMPLE_RUN: dict[str, Any] = {
    "id": "5dd6f164dde6407fb7dd519ec9a32a8a",
    "status": "accepted",
    "model": "rubric",
    "judge_model": "rubric",
    "policy": "default",
    "max_rounds": 3,
    "question": _EXAMPLE_PROBLEM["question"],
    "created_at": "2026-11-23T09:00:00Z",
    "finished_at": "2026-11-23T09:00:02Z",
    "stop_reason": "quality reached the threshold",
    "failure": None,
    "rounds_to_pass": 2,
    "avg_quality_final": 0.984,
    "batch_id": None,
    "arm": "loop",
}


class RunPublic(BaseModel):
    """A run as listed: its state, options and headline figures."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_RUN]})

    id: str = Field(description="Run id")
    status: RunStatus = Field(
        description="queued, running, then its outcome: accepted, screened, exhausted, needs_review, "
        "error or cancelled (docs/outcomes.md)"
    )
    model: str = Field(description="The model under test (the reviser)")
    judge_model: str = Field(description="The model behind the seven judges (rubric: the offline panel)")
    policy: str = Field(description="The scoring policy it was judged under")
    max_rounds: int = Field(description="Its round limit")
    question: str = Field(description="The submitted question")
    created_at: datetime = Field(description="When it was submitted (UTC)")
    finished_at: datetime | None = Field(description="When it ended (UTC); null while queued or running")
    stop_reason: str | None = Field(description="Why it ended, in words; null while queued or running")
    failure: CallFailure | None = Field(
        default=None, description="Why the run ended in error: model, endpoint host, HTTP status or exception"
    )
    rounds_to_pass: int | None = Field(
        default=None, description="The first round that passed; null if none did (or not ended)"
    )
    avg_quality_final: float | None = Field(
        default=None,
        description="Q of the final round, 0–1 (AvgQualityScore as the reference computes it); null "
        "if no round was scored",
    )
    batch_id: str | None = Field(
        default=None,
        description="The batch this run is an item of; null for a run of its own",
        examples=["6fd4be5b0c7e4b1f9a2d3c4e5f6a7b8c"],
    )
    arm: str = Field(default="loop", description="loop (the feedback loop) or control (one blind revision)")
    warrant: Warrant | None = Field(
        default=None,
        examples=WARRANT_EXAMPLES,
        description="An accepted run's: the validity record its project cites of the exact panel that "
        "accepted (status valid, with its false-accept upper bound), or status none when that panel "
        "was never validated. Null for any other outcome",
    )
    grading_progress: GradingProgress = Field(
        default="Pending",
        description="Its grading progress in LTI AGS's words: Pending (queued or running), "
        "PendingManual (a teacher's review awaited), FullyGraded (its outcome, or a teacher's "
        "decision, stands), Failed (error), NotReady (cancelled)",
        examples=["FullyGraded"],
    )


_ACCOUNTING: dict[str, Any] = {
    "model": "rubric",
    "prompt_version": "rubric-3f9a1c",
    "input_tokens": 0,
    "cached_input_tokens": 0,
    "output_tokens": 0,
    "latency_s": 0.004,
    "cost_usd": None,
}
_EXAMPLE_FAILURE: dict[str, Any] = {
    "kind": "endpoint",
    "model": "gpt4o",
    "host": "api.openai.com",
    "status": 503,
    "exception": "APIStatusError",
    "message": "Service Unavailable",
}
_EXAMPLE_VERDICT: dict[str, Any] = _ACCOUNTING | {
    "judge": "evaluate",
    "score": 35,
    "confidence": 80,
    "rationale": "[proportionality] 60 musicians play a symphony in the same 40 minutes.",
    "details": {"checks": ["proportionality"]},
    "abstained": False,
    "abstain_reason": None,
    "failure": None,
    "reasoning": "",
    "raw_outputs": ['{"score": 35, "confidence": 80, "rationale": "…"}'],
}
_EXAMPLE_REVISION: dict[str, Any] = _ACCOUNTING | {
    "question": "An orchestra of 120 musicians plays a symphony in 40 minutes. How long does the same "
    "symphony take when 60 musicians play it?",
    "solution": "The length of a symphony does not depend on the number of players: 40 minutes.",
    "thinking": "The judges say the time does not scale with the players…",
    "error": None,
    "failure": None,
    "raw_outputs": ['{"thinking": "The judges say…", "question": "An orchestra…", "solution": "…"}'],
    "givens_changed": [],
}
_EXAMPLE_VERSION: dict[str, Any] = {
    "round": 2,
    "question": _EXAMPLE_REVISION["question"],
    "solution": _EXAMPLE_REVISION["solution"],
    "quality": 0.984,
}
_EXAMPLE_ROUND: dict[str, Any] = {
    "round": 1,
    "question": _EXAMPLE_PROBLEM["question"],
    "solution": _EXAMPLE_PROBLEM["solution"],
    "quality": 0.3917,
    "pass_rate": 0.43,
    "agreement": 0.71,
    "confidence": 0.8,
    "n_voting": 7,
    "n_passing": 3,
    "n_failed": 0,
    "decision": "revise",
    "verification": [],
    "unverified": [],
    "solver": {
        "round": 1,
        "solution": {
            "working": "A symphony lasts as long whoever plays it.",
            "answer": "40 minutes",
            "value": 40,
            "unit": "minutes",
        },
        "failure": None,
        "raw_outputs": ['{"working": "…", "answer": "40 minutes", "value": 40, "unit": "minutes"}'],
        "reasoning": "",
        "model": "gpt4o",
        "reported_model": "gpt-4o-2024-08-06",
        "prompt_version": "solver-7c21e0",
        "usage": {
            "input_tokens": 412,
            "cached_input_tokens": 256,
            "output_tokens": 58,
            "latency_s": 1.21,
            "cost_usd": 0.0016,
            "calls": 1,
            "retries": 0,
        },
    },
    "verdicts": [_EXAMPLE_VERDICT],
    "unchanged": False,
    "feedback": [_EXAMPLE_VERDICT["rationale"]],
    "revision": _EXAMPLE_REVISION,
}


class CallRecordPublic(BaseModel):
    """Who produced an output, with which prompt version, and what it cost."""

    model: str = Field(description="The model that produced it")
    prompt_version: str = Field(
        description="Version of the prompt (or rubric) it answered; changes whenever the text does"
    )
    input_tokens: int = Field(description="Prompt tokens billed")
    cached_input_tokens: int = Field(
        default=0,
        description="Of the prompt tokens, those the server reported serving from its prompt cache "
        "(priced at the model's cached-input price; 0 where the server reports none)",
        examples=[384],
    )
    output_tokens: int = Field(description="Completion tokens billed")
    latency_s: float = Field(description="Seconds the call took, retries included")
    cost_usd: float | None = Field(
        description="Its cost in US dollars from the model's configured prices; null when none are "
        "configured",
        examples=[0.0016],
    )


class VerdictPublic(CallRecordPublic):
    """One judge's verdict with its audit trail."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_VERDICT]})

    judge: str = Field(
        description="remember, understand, apply, analyze, evaluate, create, or holistic (the Five Keys)"
    )
    score: int | None = Field(
        description="0–100 on the level's anchored scale; null when the judge abstained"
    )
    confidence: int | None = Field(description="0–100: how sure the judge is; null when it abstained")
    rationale: str | None = Field(
        description="Why, in the judge's words (the offline panel names its checks in [brackets])"
    )
    details: dict[str, Any] | None = Field(
        description="Structured extras: the holistic judge's five keys, the offline panel's checks"
    )
    abstained: bool = Field(description="True when there is no usable verdict: never a score, counted apart")
    abstain_reason: str | None = Field(
        description="Why it abstained (its call failed, or it declined)",
        examples=["the call failed: gpt4o @ api.openai.com: HTTP 503 APIStatusError"],
    )
    failure: CallFailure | None = Field(
        default=None, description="For a failed call: model, endpoint host, HTTP status, exception"
    )
    reasoning: str = Field(default="", description="A reasoning model's own thinking before its verdict")
    raw_outputs: list[str] = Field(
        description="The model's raw replies, kept for audit (several when a malformed reply was retried)"
    )
    reported_model: str | None = Field(
        default=None,
        description='The model id the endpoint reported in its reply ("": it named none; null: it never '
        "answered, or the verdict was stored before thinkloop kept it); part of the panel's identity",
        examples=["gpt-4o-2024-08-06"],
    )


class RevisionPublic(CallRecordPublic):
    """What the model under test made of a round's feedback."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_REVISION]})

    question: str | None = Field(description="The revised question; null when no usable revision came back")
    solution: str | None = Field(description="The revised solution; null when no usable revision came back")
    thinking: str = Field(description="The model's think-aloud as it revised, in full")
    error: str | None = Field(
        description="Why there is no revision, in words",
        examples=["the model under test gave no usable revision: HTTP 503"],
    )
    failure: CallFailure | None = Field(
        default=None, description="For a failed call: model, endpoint host, HTTP status, exception"
    )
    raw_outputs: list[str] = Field(
        default_factory=list,
        description="The model's raw replies, kept for audit (a failed revision's among them: several "
        "when a malformed reply was asked for again)",
    )
    givens_changed: list[str] = Field(
        default_factory=list,
        description="Quantities the question gives that this revision changed, added or removed "
        "(a revision may reword the story, never its data)",
        examples=[["given '120 musicians' became '60 musicians'"]],
    )


class RoundPublic(RoundFigures):
    """One evaluated version, its seven verdicts, its scores, and the revision it led to."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_ROUND]})

    round: int = Field(
        description="1 is the submitted version; each later round judges the previous round's revision"
    )
    question: str = Field(description="The version's question")
    solution: str = Field(description="The version's stated solution")
    verification: list[str] = Field(
        default_factory=list,
        description="Computations of the stated solution found wrong (none: all checked ones hold)",
    )
    unverified: list[str] = Field(
        default_factory=list,
        description="Steps of the stated solution the verifier read but could not check: never passed "
        "as checked (the offline screen refuses a version that has one)",
    )
    solver: SolverResult | None = Field(
        default=None,
        description="The solver's answer to the question alone, or its failed call (then nothing was "
        "compared); a disagreeing answer is a line in `verification`. None: no solver ran",
    )
    verdicts: list[VerdictPublic] = Field(description="The seven judges' verdicts, abstentions included")
    escalations: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Each step of the acceptance's escalation below its calibrated threshold, as the "
        "round.escalated events give them (stage, panel, quality, threshold, decision, reason); empty "
        "when the round was not escalated",
        examples=[
            [
                {
                    "type": "round.escalated",
                    "round": 1,
                    "stage": 0,
                    "panel": "the run's panel",
                    "quality": 0.92,
                    "threshold": 0.95,
                    "decision": "escalated",
                    "reason": "Q 0.920 < 0.950",
                }
            ]
        ],
    )
    unchanged: bool = Field(
        default=False,
        description="No revision: this version is the one the model under test was asked to revise, "
        "up to whitespace (its failure: the run goes on to exhausted, never to needs_review)",
    )
    feedback: list[str] = Field(
        description="What the panel told the reviser (the failing judges' rationales)"
    )
    revision: RevisionPublic | None = Field(
        description="The revision this round led to; null for the last round"
    )


class Version(BaseModel):
    """One judged version of the problem."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_VERSION]})

    round: int = Field(description="The round that judged it (1 is the original)")
    question: str = Field(description="Its question")
    solution: str = Field(description="Its stated solution")
    quality: float | None = Field(description="Its composite quality Q, 0–1 (null: no judge voted)")


class RunTrace(RunPublic):
    """GET /v1/runs/{id}: the full revision trace."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                _EXAMPLE_RUN
                | {
                    "problem": _EXAMPLE_PROBLEM,
                    "rounds": [_EXAMPLE_ROUND],
                    "final": _EXAMPLE_VERSION,
                    "best": _EXAMPLE_VERSION,
                    "best_round": 2,
                    "metrics": {
                        "rounds_to_pass": 2,
                        "avg_quality_final": 0.984,
                        "avg_quality_all_steps": 0.69,
                    },
                    "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": None, "calls": 15},
                }
            ]
        }
    )

    problem: ProblemIn = Field(description="The problem as submitted, with the submission's metadata")
    rounds: list[RoundPublic] = Field(description="Every round, in order")
    final: Version | None = Field(
        default=None,
        description="The last version judged: the accepted one when the run was accepted. Null before the "
        "first round is scored",
    )
    best: Version | None = Field(
        default=None,
        description="The version with the highest Q (the earliest of equals): what to use from a run that "
        "was not accepted. Null before the first round is scored",
    )
    best_round: int | None = Field(default=None, description="The round of ``best``")
    metrics: dict[str, Any] | None = Field(
        description="Run metrics (rounds_to_pass, avg_quality_final, …) once the run ended"
    )
    usage: dict[str, Any] = Field(description="Tokens, cost and calls of every stored call")


_EXAMPLE_CURSOR = "WyIyMDI2LTExLTIzVDA5OjAwOjAwKzAwOjAwIiwgIjVkZDZmMTY0Il0"


class RunPage(BaseModel):
    """A page of runs; pass ``next_cursor`` as ``cursor`` for the next one."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"items": [_EXAMPLE_RUN], "next_cursor": _EXAMPLE_CURSOR}]}
    )

    items: list[RunPublic] = Field(description="Runs, newest first")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page")
