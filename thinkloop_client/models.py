"""The API's resources as typed objects.

Written by hand from the server's OpenAPI schemas and kept honest by a test that compares every
field here with the live schema. Fields the server adds later are kept (``extra="allow"``) and
reachable as attributes, so an older client reads a newer server. Quality (Q, pass rate, agreement,
AvgQualityScore) is on 0–1; a judge's score and confidence are on 0–100.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

# How a run or a batch item ends (the server's agents.outcome.Outcome; a test checks they agree).
Outcome = Literal["accepted", "screened", "exhausted", "needs_review", "error", "cancelled"]
# Where a run or a batch item is: queued, running, then its outcome.
RunStatus = Literal["queued", "running", Outcome]
RUN_ENDED: frozenset[str] = frozenset(get_args(Outcome))


class _Resource(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class CallFailure(_Resource):
    """Why a model call failed: which model, which endpoint host, what status or exception."""

    kind: str = Field(description="endpoint (no answer), malformed, client or internal")
    model: str
    host: str | None = None
    status: int | None = None
    exception: str = ""
    message: str = ""


class Problem(_Resource):
    """A math word problem: the question, its stated solution, and the submitter's metadata."""

    question: str
    solution: str = ""
    metadata: dict[str, str | int | float | bool | None] = Field(default_factory=dict)


class Run(_Resource):
    """A run as listed: its state, options and headline figures."""

    id: str
    status: RunStatus
    model: str
    judge_model: str
    policy: str
    max_rounds: int
    question: str
    created_at: datetime
    finished_at: datetime | None = None
    stop_reason: str | None = None
    failure: CallFailure | None = None
    rounds_to_pass: int | None = None
    avg_quality_final: float | None = None
    batch_id: str | None = None
    arm: str = "loop"
    # LTI AGS: Pending, PendingManual (a teacher's review awaited), FullyGraded, Failed, NotReady
    grading_progress: str = "Pending"

    @property
    def ended(self) -> bool:
        """True once the run has its outcome (its status is no longer queued or running)."""
        return self.status in RUN_ENDED


class Verdict(_Resource):
    """One judge's verdict on one version, or its abstention with the reason."""

    judge: str
    score: int | None = None
    confidence: int | None = None
    rationale: str | None = None
    abstained: bool = False
    abstain_reason: str | None = None
    failure: CallFailure | None = None
    model: str = ""
    prompt_version: str = ""


class Revision(_Resource):
    """What the model under test made of a round's feedback, with its think-aloud."""

    question: str | None = None
    solution: str | None = None
    thinking: str = ""
    error: str | None = None


class EscalationStep(_Resource):
    """One step of a round's escalation below its panel's calibrated threshold (the round.escalated
    event): the run's panel (stage 0), a stronger panel, or (last) a person."""

    stage: int
    panel: str
    quality: float | None = None
    threshold: float | None = None
    decision: str
    reason: str = ""
    usage: dict[str, Any] = Field(default_factory=dict)  # what the stage's judge calls cost


class Round(_Resource):
    """One judged version: its verdicts, scores, the verifier's evidence and the revision it led to."""

    round: int
    question: str
    solution: str
    quality: float | None = None
    pass_rate: float | None = None
    agreement: float | None = None
    confidence: float | None = None
    n_voting: int = 0
    n_passing: int = 0
    decision: str = ""
    verification: list[str] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    escalations: list[EscalationStep] = Field(default_factory=list)  # empty: not escalated
    feedback: list[str] = Field(default_factory=list)
    revision: Revision | None = None


class Version(_Resource):
    """One judged version of the problem."""

    round: int
    question: str
    solution: str
    quality: float | None = None


class RunTrace(Run):
    """A run's full trace: every round, the final and best versions, metrics and usage."""

    problem: Problem
    rounds: list[Round] = Field(default_factory=list)
    final: Version | None = None
    best: Version | None = None
    best_round: int | None = None
    metrics: dict[str, Any] | None = None
    usage: dict[str, Any] = Field(default_factory=dict)


class Delivery(_Resource):
    """One webhook delivery and how its attempts went."""

    id: str
    event: str
    url: str
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    last_status_code: int | None = None
    last_error: str | None = None
    created_at: datetime
    delivered_at: datetime | None = None


class RowIssue(_Resource):
    """An uploaded row (by its first line) and what is wrong with it."""

    line: int
    message: str


class Dataset(_Resource):
    """A registered problem set; an upload's answer also lists folded duplicates and warnings."""

    id: str
    name: str
    format: str
    n_problems: int
    created_at: datetime
    duplicates: list[RowIssue] = Field(default_factory=list)
    warnings: list[RowIssue] = Field(default_factory=list)


class WaitingItems(_Resource):
    """Pending items a process was handed and left alone (its registry lacks their model), and why."""

    reason: str
    items: int


class BatchProgress(_Resource):
    """A batch's items by state, what was spent, and an ETA."""

    status: str
    stop_reason: str | None = None
    items: dict[str, int] = Field(default_factory=dict)
    total: int
    finished: int
    eta_s: float | None = None
    waiting: list[WaitingItems] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class BatchComparison(_Resource):
    """Two sides (a batch's model and arm each) paired on the problems both scored."""

    a: str
    b: str
    problems: int
    pass_rate_a: float | None = None
    pass_rate_b: float | None = None
    a_only: int = 0
    b_only: int = 0
    mcnemar_p: float | None = None
    delta_avg_quality: float | None = None
    delta_ci95: list[float] | None = None
    delta_p: float | None = None
    pairs: list[list[float]] = Field(default_factory=list)


class Batch(_Resource):
    """A batch: a dataset × models under test × repeats, and how far it got."""

    id: str
    dataset_id: str
    models: list[str]
    judge_model: str
    policy: str
    max_rounds: int
    repeats: int
    control_arm: bool
    created_at: datetime
    finished_at: datetime | None = None
    progress: BatchProgress

    @property
    def ended(self) -> bool:
        """True once the batch is completed, cancelled or stopped by its budget."""
        return self.progress.status in {"completed", "cancelled", "budget_exhausted"}


class BatchItem(_Resource):
    """One item of a batch: a problem under one model, arm and repeat; its run and outcome."""

    id: int
    run_id: str | None = None
    problem_id: str
    dataset_item_id: str | None = None  # the problem's id in its dataset, e.g. fp-01
    model: str
    arm: str
    repeat: int
    status: str
    outcome: str | None = None
    error: str | None = None
    rounds: int = 0
    final_quality: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class WebhookEndpoint(_Resource):
    """A registered webhook receiver; ``secret`` is present only in the answer that created it."""

    id: str
    url: str
    description: str = ""
    created_at: datetime
    secret: str | None = None
    previous_until: datetime | None = None  # after a rotation: the old secret signs beside it until then


class Project(_Resource):
    """A project: its keys see its runs, datasets and batches, and nothing of another project's."""

    id: str
    name: str
    created_at: datetime
    daily_tokens: int | None = None  # its own daily caps; None: the server's global setting
    daily_cost_usd: float | None = None


class Key(_Resource):
    """An API key of a project; ``secret`` is present only in the answer that created it."""

    id: str
    project_id: str
    name: str
    prefix: str
    scopes: list[str]
    created_at: datetime
    expires_at: datetime | None = None
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
    secret: str | None = None


class AuditEntry(_Resource):
    """One change in the audit log: who (``actor``, ``key_id``) did what to which thing, and when."""

    id: str
    created_at: datetime
    project_id: str
    key_id: str | None = None
    actor: str
    action: str
    target_type: str
    target_id: str
    detail: dict[str, Any] | None = None


class ModelInfo(_Resource):
    """A usable model name: the offline panel, or a configured endpoint with how JSON is asked for."""

    name: str
    offline: bool
    model: str | None = None
    endpoint: str | None = None
    provider: str | None = None
    mode: str | None = None
    learned: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    capabilities: dict[str, Any] | None = None


# Events of a run's stream -------------------------------------------------------------------------


class Event(_Resource):
    """An event of a run's stream; ``seq`` is its place in the run's transcript (its SSE id)."""

    type: str
    seq: int = 0


class RunStarted(Event):
    """The run began executing."""

    type: Literal["run.started"]


class RunResumed(Event):
    """The run continues after a restart, from its checkpoint (on this executor)."""

    type: Literal["run.resumed"]
    executor: str | None = None


class RoundStarted(Event):
    """A version is about to be judged."""

    type: Literal["round.started"]
    round: int
    problem: Problem


class JudgeVerdict(Event):
    """One judge finished (``abstained`` when no usable verdict came back)."""

    type: Literal["judge.verdict"]
    round: int
    judge: str
    score: int | None = None
    confidence: int | None = None
    rationale: str | None = None
    abstained: bool = False
    abstain_reason: str | None = None


class RoundScored(Event):
    """The round's figures and the decision taken on them."""

    type: Literal["round.scored"]
    round: int
    quality: float | None = None
    pass_rate: float | None = None
    agreement: float | None = None
    confidence: float | None = None
    decision: str
    verification: list[str] = Field(default_factory=list)


class RoundEscalated(Event):
    """One step of an acceptance's escalation: the run's panel (stage 0) fell below its calibrated
    threshold, a stronger panel judged the version, or (last) a person decides."""

    type: Literal["round.escalated"]
    round: int
    stage: int
    panel: str
    quality: float | None = None
    threshold: float | None = None
    decision: str
    reason: str = ""
    usage: dict[str, Any] = Field(default_factory=dict)  # what the stage's judge calls cost


class ReviserThinking(Event):
    """A piece of the reviser's think-aloud, as it was produced."""

    type: Literal["reviser.thinking"]
    round: int
    delta: str


class RevisionProposed(Event):
    """The reviser's new version, or why there is none."""

    type: Literal["revision.proposed"]
    round: int
    problem: Problem | None = None
    error: str | None = None


class RunFinished(Event):
    """The run ended: its status and metrics. The last event of every stream."""

    type: Literal["run.finished"]
    status: RunStatus
    stop_reason: str = ""
    rounds: int = 0
    final_quality: float | None = None
    rounds_to_pass: int | None = None
    avg_quality_final: float | None = None


class RunFailed(Event):
    """The run ended without a verdict: cancelled, or failed inside thinkloop. A last event too."""

    type: Literal["run.failed"]
    status: RunStatus
    reason: str = ""


class OtherEvent(Event):
    """An event type this client does not know yet (a newer server): its fields as sent."""


RunEvent = Annotated[
    RunStarted
    | RunResumed
    | RoundStarted
    | JudgeVerdict
    | RoundScored
    | RoundEscalated
    | ReviserThinking
    | RevisionProposed
    | RunFinished
    | RunFailed,
    Field(discriminator="type"),
]
_KNOWN = TypeAdapter(RunEvent)
_TYPES = {
    "run.started",
    "run.resumed",
    "round.started",
    "judge.verdict",
    "round.scored",
    "round.escalated",
    "reviser.thinking",
    "revision.proposed",
    "run.finished",
    "run.failed",
}
LAST_EVENTS = frozenset({"run.finished", "run.failed"})


def parse_event(data: dict[str, Any], seq: int) -> Event:
    """A stream's event as its typed model (``OtherEvent`` for a type this client does not know)."""
    if data.get("type") in _TYPES:
        event: Event = _KNOWN.validate_python({**data, "seq": seq})
        return event
    return OtherEvent.model_validate({**data, "seq": seq})


class ReviewDecision(_Resource):
    """A teacher's decision on a review item (a later one may replace it; both are kept)."""

    id: str
    review_id: str
    decision: Literal["sound", "flawed"]
    flaws: list[dict[str, Any]] = Field(default_factory=list, description="type and evidence of each")
    corrected: Problem | None = None
    note: str | None = None
    reviewer: str
    replaces: str | None = None
    created_at: datetime


class Review(_Resource):
    """A run's version in its project's review queue: why it is there, and its state."""

    id: str
    run_id: str
    status: Literal["pending", "decided"]
    reason: Literal["needs_review", "audit", "requested"]
    cause: str
    round: int
    question: str
    solution: str
    run_status: str
    grading_progress: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    draw: dict[str, Any] | None = None
    requested_by: str | None = None
    decision: ReviewDecision | None = None
    created_at: datetime
    decided_at: datetime | None = None


class ReviewDetail(Review):
    """A review item with each judge's words on the version, the warrant, the think-aloud and
    every decision so far."""

    verdicts: list[dict[str, Any]] = Field(default_factory=list)
    warrant: dict[str, Any] | None = None
    stop_reason: str | None = None
    thinking: list[dict[str, Any]] = Field(default_factory=list)
    history: list[ReviewDecision] = Field(default_factory=list)
