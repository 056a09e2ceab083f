"""Database tables. Timestamps are timezone-aware UTC; JSON columns hold what has no fixed shape."""

from __future__ import annotations

import base64
import secrets
import uuid
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel
from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Dialect,
    Float,
    Index,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

from agents.outcome import Outcome


class RunStatus(StrEnum):
    """Where a run is: queued, running, then its outcome (``agents.outcome.Outcome``) for good.

    A batch item is executed as a run, so it is where its run is, in the same words: one
    vocabulary, one terminal set. An item is queued until claimed (its run is created then),
    running while its run executes, and then its run's outcome; an item never started (its batch
    was cancelled or ran out of budget) is cancelled.
    """

    QUEUED = "queued"
    RUNNING = "running"
    ACCEPTED = Outcome.ACCEPTED.value
    SCREENED = Outcome.SCREENED.value  # the offline panel found no flaw: not a judgement of soundness
    EXHAUSTED = Outcome.EXHAUSTED.value
    NEEDS_REVIEW = Outcome.NEEDS_REVIEW.value
    ERROR = Outcome.ERROR.value
    CANCELLED = Outcome.CANCELLED.value


RUN_UNFINISHED: frozenset[str] = frozenset({RunStatus.QUEUED, RunStatus.RUNNING})
RUN_TERMINAL: frozenset[str] = frozenset(Outcome)  # the outcomes: every status but queued and running


class BatchStatus(StrEnum):
    """Where a batch is; a paused batch starts no item until resumed."""

    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    BUDGET_EXHAUSTED = "budget_exhausted"


BATCH_ACTIVE: frozenset[str] = frozenset({BatchStatus.QUEUED, BatchStatus.RUNNING})  # items may start
BATCH_TERMINAL: frozenset[str] = frozenset(
    {BatchStatus.COMPLETED, BatchStatus.CANCELLED, BatchStatus.BUDGET_EXHAUSTED}
)


def utcnow() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(UTC)


def new_id() -> str:
    """A random identifier."""
    return uuid.uuid4().hex


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC in Python on every database (SQLite itself keeps no offset)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Refuse naive datetimes; store UTC (without offset on SQLite)."""
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored; use an aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Always hand back an aware UTC datetime."""
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _ts(nullable: bool = False) -> Any:
    return Field(
        default_factory=utcnow if not nullable else None,
        sa_column=Column(UTCDateTime(), nullable=nullable),
    )


# The project every key, run, dataset and batch of a database belongs to until others are created
# (made by the migration that introduced projects; the CLI's datasets and batches live in it).
DEFAULT_PROJECT = "default"


class Project(SQLModel, table=True):
    """A tenant: its keys see its runs, datasets and batches, and nothing of any other project's."""

    __tablename__ = "projects"

    id: str = Field(default_factory=new_id, primary_key=True)
    name: str = Field(unique=True, max_length=200)
    created_at: datetime = _ts()
    # The project's own daily caps; None: the global setting (THINKLOOP_PROJECT_DAILY_*).
    daily_tokens: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    daily_cost_usd: float | None = None
    # The largest false-accept upper bound a warrant may have for an acceptance to stand; None: the
    # global setting (THINKLOOP_REQUIRE_WARRANT), which is unset by default.
    require_warrant: float | None = None
    # The smallest lower bound of sound versions passed a warrant needs beside it; None: the setting's
    # (THINKLOOP_REQUIRE_WARRANT's second bound, else THINKLOOP_SPECIFICITY_FLOOR).
    require_specificity: float | None = None
    # Signs a run's own webhook_url when THINKLOOP_WEBHOOK_SECRET is unset (shown and rotated by the
    # project's admin through /v1/projects/{id}/webhook-secret): no delivery goes out unsigned.
    webhook_secret: str | None = Field(default_factory=lambda: new_webhook_secret(), max_length=100)
    # The secret a rotation replaced: it still signs beside the new one until the time given.
    webhook_secret_previous: str | None = Field(default=None, max_length=100)
    webhook_secret_previous_until: datetime | None = _ts(nullable=True)
    # The share of accepted and screened runs drawn for a teacher's audit (None or 0: none), and the
    # seed of the draw: a run is drawn when audit_draw(seed, run id) < rate, so an auditor who knows
    # the seed can redo every draw (app.reviews.queue).
    audit_rate: float | None = None
    audit_seed: str = Field(default_factory=lambda: secrets.token_hex(16), max_length=64)
    # The kind of labelled set a warrant must be measured on ("reviews": this project's teachers'
    # decisions); None: any.
    require_warrant_source: str | None = Field(default=None, max_length=16)
    # Acceptance with a guarantee (graphs.analysis.guarantee): false accepts ≤ alpha with confidence
    # 1 − delta; an acceptance below the panel's calibrated threshold escalates. None: no target.
    guarantee_alpha: float | None = None
    guarantee_delta: float | None = None
    # The fewest flawed versions a warrant's source of that kind must hold; None: the setting's
    # (THINKLOOP_REQUIRE_WARRANT_MIN_FLAWED), unset by default.
    require_warrant_min_flawed: int | None = None


def new_webhook_secret() -> str:
    """A fresh signing secret in Standard Webhooks' form: ``whsec_`` and the base64 of 24 random
    bytes (the HMAC key; the specification asks for 24 to 64)."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode("ascii")


def _project() -> Any:
    return Field(default=DEFAULT_PROJECT, foreign_key="projects.id", index=True)


class ProblemRow(SQLModel, table=True):
    """A submitted problem, deduplicated by a hash of its content. It holds no metadata: that
    belongs to whoever submitted it (the run, or the dataset row), and one problem is shared by
    every project that submits the same text."""

    __tablename__ = "problems"

    id: str = Field(default_factory=new_id, primary_key=True)
    content_hash: str = Field(index=True, unique=True, max_length=64)
    question: str = Field(sa_column=Column(Text, nullable=False))
    solution: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = _ts()


class Run(SQLModel, table=True):
    """One refinement run of one problem."""

    __tablename__ = "runs"
    # An Idempotency-Key is the project's (any of its keys replays it): migration 0021.
    __table_args__ = (UniqueConstraint("project_id", "idempotency_key", name="uq_runs_project_idempotency"),)

    id: str = Field(default_factory=new_id, primary_key=True)
    project_id: str = _project()
    problem_id: str = Field(foreign_key="problems.id", index=True)
    meta: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))  # the submitter's metadata
    status: str = Field(index=True, max_length=32)
    model: str = Field(max_length=200)
    judge_model: str = Field(max_length=200)
    policy: str = Field(max_length=32)
    max_rounds: int
    webhook_url: str | None = Field(default=None, max_length=2000)
    idempotency_key: str | None = Field(default=None, max_length=200)
    request_hash: str | None = Field(default=None, max_length=64)
    api_key_id: str | None = Field(default=None, max_length=64)
    stop_reason: str | None = Field(default=None, sa_column=Column(Text))
    failure: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    # What a finished run knows that no row holds (``RunFacts``): its metrics, its warrant, and its
    # call counts. Null until it finishes through the loop (a run that failed outside it has none).
    result: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    created_at: datetime = _ts()
    finished_at: datetime | None = _ts(nullable=True)
    # The process executing the run holds it until lease_until and renews it while it runs; once
    # the lease lapses (the process died), any live process may claim the run and resume it.
    lease_owner: str | None = Field(default=None, max_length=100)
    lease_until: datetime | None = _ts(nullable=True)
    # A batch item's run: which batch, and which arm (the loop, or the zero-shot control).
    batch_id: str | None = Field(default=None, foreign_key="batches.id", index=True)
    arm: str = Field(default="loop", max_length=16)
    # Its teachers' review (app.grading): None (never queued), pending, or decided.
    review: str | None = Field(default=None, max_length=16)
    # Its own guarantee target, over its project's (None: the project's, if any).
    guarantee_alpha: float | None = None
    guarantee_delta: float | None = None


class RunFacts(BaseModel):
    """The typed content of ``runs.result``: what a finished run knows that no row holds. Its
    rounds, verdicts and revisions are rows (``rounds``, ``judgements``, ``revisions``) and its
    events the transcript; each is stored there only."""

    # RunMetrics as a dict; None for an error run: a failure is never a score
    metrics: dict[str, Any] | None = None
    # An accepted run's warrant (app.validity.records.warrant_of); null for any other outcome
    warrant: dict[str, Any] | None = None
    llm_calls: int = 0  # calls answered by an endpoint (the response cache's replies not counted)
    retries: int = 0  # HTTP attempts beyond one per call

    @classmethod
    def of(cls, run: Run) -> RunFacts | None:
        """The facts a finished run stored; None while it runs, or when it failed outside the loop."""
        return cls.model_validate(run.result) if run.result is not None else None


class WebhookEndpoint(SQLModel, table=True):
    """A receiver registered by a project: every run of the project that ends is POSTed to it, signed
    with its own secret."""

    __tablename__ = "webhook_endpoints"

    id: str = Field(default_factory=new_id, primary_key=True)
    project_id: str = Field(foreign_key="projects.id", index=True)
    url: str = Field(sa_column=Column(Text, nullable=False))
    description: str = Field(default="", max_length=200)
    secret: str = Field(max_length=100)  # kept to sign with; shown when created
    # The secret a rotation replaced: it still signs beside the new one until the time given.
    previous_secret: str | None = Field(default=None, max_length=100)
    previous_secret_until: datetime | None = _ts(nullable=True)
    created_at: datetime = _ts()


class WebhookDelivery(SQLModel, table=True):
    """One webhook to send (the transactional outbox): written with the run's end state, sent by
    any process, retried with backoff across restarts, and kept as the run's delivery log."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_status_next", "status", "next_attempt_at"),)

    id: str = Field(default_factory=new_id, primary_key=True)
    run_id: str | None = Field(default=None, foreign_key="runs.id", index=True)  # None: a test event
    endpoint_id: str | None = Field(default=None, foreign_key="webhook_endpoints.id", index=True)
    project_id: str | None = Field(default=None, index=True)  # the run's or the endpoint's project
    event: str = Field(max_length=64)
    url: str = Field(sa_column=Column(Text, nullable=False))
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(max_length=16)  # pending, delivered, failed (attempts exhausted or refused)
    attempts: int = 0
    next_attempt_at: datetime = _ts()
    last_status_code: int | None = None
    last_error: str | None = Field(default=None, sa_column=Column(Text))
    lease_owner: str | None = Field(default=None, max_length=100)
    lease_until: datetime | None = _ts(nullable=True)
    created_at: datetime = _ts()
    delivered_at: datetime | None = _ts(nullable=True)


class RoundRow(SQLModel, table=True):
    """One evaluated version of a run's problem and its composite score."""

    __tablename__ = "rounds"
    __table_args__ = (UniqueConstraint("run_id", "round"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="runs.id", index=True)
    round: int
    question: str = Field(sa_column=Column(Text, nullable=False))
    solution: str = Field(sa_column=Column(Text, nullable=False))
    quality: float | None = None
    pass_rate: float | None = None
    agreement: float | None = None
    confidence: float | None = None
    n_voting: int
    n_passing: int
    n_failed: int = 0
    verification: list[str] | None = Field(default=None, sa_column=Column(JSON))
    # The solver's call (agents.schemas.SolverResult): its answer, or its failure; None when none ran.
    solver: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    decision: str = Field(max_length=32)
    # Each step of the round's escalation (graphs.escalation; None: not escalated).
    escalations: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON))
    created_at: datetime = _ts()


class CallRecordColumns(SQLModel):
    """Who produced an output, with which prompt, at what cost (shared by judgements and revisions):
    the columns of an ``agents.schemas.CallRecord``, filled by ``app.runs.repository.call_record``."""

    model: str = Field(max_length=200)
    # The model id the endpoint reported ("" if it named none; null: it never answered), and the
    # server's system_fingerprint in that reply (null: it sent none, the reply came from the response
    # cache, or it was stored before migration 0025)
    reported_model: str | None = Field(default=None, sa_type=Text, nullable=True)
    system_fingerprint: str | None = Field(default=None, sa_type=Text, nullable=True)
    prompt_version: str = Field(max_length=100)
    input_tokens: int = 0
    # Of input_tokens, those the server reported serving from its prompt cache (docs/prompt-cache.md)
    cached_input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None


class JudgementRow(CallRecordColumns, table=True):
    """One judge's verdict (or abstention) in one round, with everything needed to audit it."""

    __tablename__ = "judgements"
    __table_args__ = (UniqueConstraint("run_id", "round", "judge"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="runs.id", index=True)
    round: int
    judge: str = Field(max_length=32)
    score: int | None = None
    confidence: int | None = None
    rationale: str | None = Field(default=None, sa_column=Column(Text))
    details: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    abstain_reason: str | None = Field(default=None, sa_column=Column(Text))
    failure: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    reasoning: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))
    raw_outputs: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class RevisionRow(CallRecordColumns, table=True):
    """The model under test's revision after a round, with its think-aloud."""

    __tablename__ = "revisions"
    __table_args__ = (UniqueConstraint("run_id", "round"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="runs.id", index=True)
    round: int
    question: str | None = Field(default=None, sa_column=Column(Text))
    solution: str | None = Field(default=None, sa_column=Column(Text))
    thinking: str = Field(default="", sa_column=Column(Text, nullable=False))
    error: str | None = Field(default=None, sa_column=Column(Text))
    failure: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    raw_outputs: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class DailyUsage(SQLModel, table=True):
    """What a project's LLM calls spent on one UTC day: the ledger its daily caps read. Added to in
    the transaction that records each call's usage; deleting runs or batches leaves it as it is."""

    __tablename__ = "daily_usage"

    project_id: str = Field(foreign_key="projects.id", primary_key=True)
    day: date = Field(primary_key=True)
    # A busy project's day can pass 2**31 tokens.
    input_tokens: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    output_tokens: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    cost_usd: float = 0.0
    # Held for model work under way (``app.access.reserve``): the caps read spent plus reserved.
    reserved_tokens: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, server_default="0"))
    reserved_cost_usd: float = Field(default=0.0, sa_column=Column(Float, nullable=False, server_default="0"))


class KeyDailyUsage(SQLModel, table=True):
    """What the runs of one API key spent on one UTC day: the ledger its daily caps read, charged
    with the project's. No foreign key, like ``Run.api_key_id``: the ledger outlives what it names."""

    __tablename__ = "key_daily_usage"

    api_key_id: str = Field(primary_key=True, max_length=64)
    day: date = Field(primary_key=True)
    input_tokens: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    output_tokens: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    cost_usd: float = 0.0
    reserved_tokens: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, server_default="0"))
    reserved_cost_usd: float = Field(default=0.0, sa_column=Column(Float, nullable=False, server_default="0"))


class SpendHold(SQLModel, table=True):
    """What one piece of model work (a run, a bench) holds of a day's reservations, so whoever ends
    it (or resumes it after its process died) knows what to settle and release."""

    __tablename__ = "spend_holds"

    holder: str = Field(primary_key=True, max_length=80)  # a run's id, or "bench:<id>"
    day: date = Field(primary_key=True)
    project_id: str = Field(max_length=64)
    api_key_id: str | None = Field(default=None, max_length=64)
    tokens: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    cost_usd: float = 0.0


class TranscriptEvent(SQLModel, table=True):
    """An append-only event of a run's transcript, numbered per run from 1."""

    __tablename__ = "transcript_events"
    __table_args__ = (UniqueConstraint("run_id", "seq"), UniqueConstraint("run_id", "dedupe_key"))

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="runs.id", index=True)
    seq: int
    type: str = Field(max_length=40)
    dedupe_key: str | None = Field(default=None, max_length=120)
    data: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = _ts()


class ApiKey(SQLModel, table=True):
    """An API key: only its SHA-256 is stored; the prefix identifies it in lists and logs."""

    __tablename__ = "api_keys"

    id: str = Field(default_factory=new_id, primary_key=True)
    project_id: str = _project()
    name: str = Field(max_length=200)
    prefix: str = Field(index=True, max_length=16)
    key_hash: str = Field(unique=True, max_length=64)
    scopes: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    created_at: datetime = _ts()
    expires_at: datetime | None = _ts(nullable=True)
    last_used_at: datetime | None = _ts(nullable=True)  # renewed at most once a minute
    revoked_at: datetime | None = _ts(nullable=True)


class Dataset(SQLModel, table=True):
    """A registered problem set."""

    __tablename__ = "datasets"

    id: str = Field(default_factory=new_id, primary_key=True)
    project_id: str = _project()
    name: str = Field(max_length=200)
    format: str = Field(max_length=20)
    n_problems: int
    created_at: datetime = _ts()
    # What the upload answered, by line (the first 100 of each): reads answer the same. Null for a
    # dataset uploaded before they were kept.
    duplicates: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON))
    warnings: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON))


class DatasetItem(SQLModel, table=True):
    """A problem's place in a dataset."""

    __tablename__ = "dataset_items"
    __table_args__ = (UniqueConstraint("dataset_id", "problem_id"),)

    id: int | None = Field(default=None, primary_key=True)
    dataset_id: str = Field(foreign_key="datasets.id", index=True)
    problem_id: str = Field(foreign_key="problems.id")
    position: int
    external_id: str | None = Field(default=None, max_length=200)
    meta: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))  # the row's metadata


class Batch(SQLModel, table=True):
    """A dataset × models × repeats evaluation, with an optional zero-shot control arm."""

    __tablename__ = "batches"

    id: str = Field(default_factory=new_id, primary_key=True)
    project_id: str = _project()
    dataset_id: str = Field(foreign_key="datasets.id", index=True)
    models: list[str] = Field(sa_column=Column(JSON, nullable=False))
    judge_model: str = Field(max_length=200)
    policy: str = Field(max_length=32)
    max_rounds: int
    repeats: int
    control_arm: bool = False
    use_cache: bool = True
    budget_tokens: int | None = None
    budget_usd: float | None = None
    api_key_id: str | None = Field(default=None, max_length=64)  # who created it; None: the CLI
    status: str = Field(index=True, max_length=32)
    stop_reason: str | None = Field(default=None, sa_column=Column(Text))
    created_at: datetime = _ts()
    finished_at: datetime | None = _ts(nullable=True)
    # What the batch was run with, recorded when it was created (app/batches/manifest.py)
    manifest: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))


class BatchItem(SQLModel, table=True):
    """One (problem, model, repeat, arm) of a batch: claimed once, done once."""

    __tablename__ = "batch_items"
    __table_args__ = (
        UniqueConstraint("batch_id", "problem_id", "model", "repeat", "arm"),
        # "is anything left?" after every item is one probe; progress counts read only this index
        Index("ix_batch_items_batch_id_status", "batch_id", "status"),
    )

    id: int | None = Field(default=None, primary_key=True)
    batch_id: str = Field(foreign_key="batches.id")
    problem_id: str = Field(foreign_key="problems.id")
    model: str = Field(max_length=200)
    repeat: int
    arm: str = Field(max_length=16)
    status: str = Field(index=True, max_length=16)  # a RunStatus: queued, running, then an outcome
    attempts: int = 0
    # When it was last claimed. Who holds it, and until when, is its run's lease (runs.lease_owner,
    # runs.lease_until): an item is executed under the lease of the run that executes it.
    claimed_at: datetime | None = _ts(nullable=True)
    run_id: str | None = Field(default=None, foreign_key="runs.id")  # its run, from its first claim
    finished_at: datetime | None = _ts(nullable=True)
    error: str | None = Field(default=None, sa_column=Column(Text))
    failure: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    # Its result is a query over its run's rows (app/reporting/item_result.py); only what is the
    # item's own is kept here: the replies its last attempt took from the response cache.
    cache_hits: int = 0
    # Why the last process handed this pending item left it alone (no such model there); null once claimed
    waiting: str | None = Field(default=None, sa_column=Column(Text))
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    @property
    def outcome(self) -> str | None:
        """How the item ended (its status, once terminal); None while queued or running."""
        return self.status if self.status in RUN_TERMINAL else None


class CachedResponse(SQLModel, table=True):
    """A model reply, addressed by a hash of (model, schema, messages): temperature-0 calls reuse it."""

    __tablename__ = "llm_cache"

    key: str = Field(primary_key=True, max_length=64)
    model: str = Field(max_length=200)
    text: str = Field(sa_column=Column(Text, nullable=False))
    # The model id the endpoint reported in the reply ("" if it named none); null for replies stored
    # before it was kept. A cached verdict keeps the reported id its panel's identity needs.
    reported_model: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = _ts()


class CacheUse(SQLModel, table=True):
    """Which batch stored or reused a cached reply: deleting a batch deletes the replies that only
    it used."""

    __tablename__ = "llm_cache_uses"

    key: str = Field(foreign_key="llm_cache.key", primary_key=True, max_length=64)
    batch_id: str = Field(foreign_key="batches.id", primary_key=True, index=True)


class AuditEvent(SQLModel, table=True):
    """Who did what to which resource, written in the same transaction as the change itself."""

    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_events_project_id_created_at", "project_id", "created_at"),)

    id: str = Field(default_factory=new_id, primary_key=True)
    created_at: datetime = _ts()
    project_id: str = Field(max_length=64)  # no foreign key: the log outlives what it names
    key_id: str | None = Field(default=None, max_length=64)  # None: the CLI, or the service itself
    actor: str = Field(max_length=200)  # the key's name and prefix, "cli", or "retention"
    action: str = Field(max_length=32)  # created, cancelled, paused, resumed, retried, deleted, revoked
    target_type: str = Field(max_length=16)  # run, batch, dataset, project, key
    target_id: str = Field(max_length=64)
    detail: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))


class ValidityRecord(SQLModel, table=True):
    """One saved measurement of one exact panel (``agents.identity``) against a labelled set: what a
    warrant cites. Each share is ``{"n", "count", "rate", "low", "high"}`` (Wilson 95 %)."""

    __tablename__ = "validity_records"
    __table_args__ = (Index("ix_validity_records_panel_id_measured_at", "panel_id", "measured_at"),)

    id: str = Field(default_factory=new_id, primary_key=True)
    project_id: str = _project()  # who measured it (the CLI: the default project)
    panel_id: str = Field(max_length=64)
    identity: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))  # the identity's parts
    judge_model: str = Field(max_length=200)
    set_name: str = Field(max_length=200)
    set_hash: str = Field(max_length=64)
    split: str = Field(max_length=16)
    n_flawed: int
    n_sound: int
    false_accept: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    # The false-accept rate's Wilson upper bound, apart: what a required warrant is compared with.
    false_accept_high: float | None = None
    specificity: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    # The specificity's Wilson lower bound, apart: what a required warrant's floor is compared with.
    # None on records saved before it was kept (they meet no requirement).
    specificity_low: float | None = None
    n_twins: int | None = None  # adversarial twins judged (0: a bench without twins; None: not kept)
    detection: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    adversarial_gap: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    # Where the labels came from: shipped (the set thinkloop ships), benchmark (a public benchmark
    # imported), own (the user's own labelled set) or reviews (the project's teachers' decisions).
    source_kind: str = Field(default="own", max_length=16)
    reviewers: int | None = None  # of a review set: how many teachers decided its items
    # Per source of a bench over several sets: each set's name, kind, hash, counts and figures
    # (app.validity.records.sources_of); None on a record saved before they were kept (one source:
    # its own set).
    sources: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    measured_at: datetime = _ts()
    # When an operator published it for every project's runs to cite (None: its own project's only).
    published_at: datetime | None = _ts(nullable=True)
    # The guarantee `judges calibrate` found on its set (graphs.analysis.guarantee.Calibration.as_dict); None:
    # never calibrated.
    calibration: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))


class RepairRecord(SQLModel, table=True):
    """One saved repair measurement (``thinkloop judges repair --save``): how often one reviser's
    loop, judged by one exact panel, repaired the flawed problems of a labelled set. Each share is
    ``{"n", "count", "rate", "low", "high"}`` (Wilson 95 %) of the decided runs."""

    __tablename__ = "repair_records"
    __table_args__ = (Index("ix_repair_records_panel_id_measured_at", "panel_id", "measured_at"),)

    id: str = Field(default_factory=new_id, primary_key=True)
    project_id: str = _project()
    panel_id: str = Field(max_length=64)  # the judging panel's identity (as a validity record's)
    identity: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    judge_model: str = Field(max_length=200)
    reviser: str = Field(max_length=200)  # the model under test that revised
    set_name: str = Field(max_length=200)
    set_hash: str = Field(max_length=64)
    split: str = Field(max_length=16)
    max_rounds: int
    runs: int  # problems run (decided or not)
    decided: int  # runs that ended in the panel's verdict: each rate's n
    repaired: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    accepted_but_wrong: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    gave_up: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    counts: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))  # runs by verdict
    measured_at: datetime = _ts()


class ValidityPin(SQLModel, table=True):
    """A project's choice of the record its runs cite for one panel identity, over the default (the
    record of the most held-out flawed versions): ``thinkloop judges records pin``."""

    __tablename__ = "validity_pins"

    project_id: str = Field(foreign_key="projects.id", primary_key=True)
    panel_id: str = Field(primary_key=True, max_length=64)
    record_id: str = Field(foreign_key="validity_records.id")
    pinned_at: datetime = _ts()


class ReviewItem(SQLModel, table=True):
    """A run in its project's review queue: one version for a teacher to decide, and why it is
    there (``reason``: needs_review, audit or requested; ``cause``: the run's stop reason, "audit
    sample", or the request's note). ``draw`` holds an audit's seeded draw, to be redone."""

    __tablename__ = "review_items"
    __table_args__ = (Index("ix_review_items_project_id_status", "project_id", "status"),)

    id: str = Field(default_factory=new_id, primary_key=True)
    project_id: str = Field(foreign_key="projects.id", index=True)
    run_id: str = Field(foreign_key="runs.id", index=True)
    reason: str = Field(max_length=16)
    cause: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(default="pending", max_length=16)  # pending, then decided
    round: int  # the version decided: the run's final round (0: the problem as submitted)
    question: str = Field(sa_column=Column(Text, nullable=False))
    solution: str = Field(sa_column=Column(Text, nullable=False))
    run_status: str = Field(max_length=32)  # the run's outcome when it entered
    draw: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    requested_by: str | None = Field(default=None, max_length=200)
    decision: str | None = Field(default=None, max_length=16)  # the latest decision: sound or flawed
    created_at: datetime = _ts()
    decided_at: datetime | None = _ts(nullable=True)


class ReviewDecision(SQLModel, table=True):
    """One teacher's decision on a review item; a later one replaces it, and both are kept."""

    __tablename__ = "review_decisions"
    __table_args__ = (UniqueConstraint("item_id", "idempotency_key", name="uq_review_decisions_idempotency"),)

    id: str = Field(default_factory=new_id, primary_key=True)
    item_id: str = Field(foreign_key="review_items.id", index=True)
    project_id: str = Field(foreign_key="projects.id", index=True)
    decision: str = Field(max_length=16)  # sound or flawed
    flaws: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    corrected_question: str | None = Field(default=None, sa_column=Column(Text))
    corrected_solution: str | None = Field(default=None, sa_column=Column(Text))
    note: str | None = Field(default=None, sa_column=Column(Text))
    reviewer: str = Field(max_length=200)
    key_id: str | None = Field(default=None, max_length=64)
    idempotency_key: str | None = Field(default=None, max_length=200)
    request_hash: str | None = Field(default=None, max_length=64)  # of the body sent with that key
    replaces: str | None = Field(default=None, max_length=64)  # the decision it replaced
    created_at: datetime = _ts()
