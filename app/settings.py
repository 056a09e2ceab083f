"""Service and CLI settings from the environment (prefix THINKLOOP_) and an optional .env file."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agents.identity import DEFAULT_SPECIFICITY_FLOOR, Requirement, accepted_kinds, parse_requirement


class Settings(BaseSettings):
    """Every knob; ``THINKLOOP_MODELS__<NAME>__BASE_URL=...`` adds or overrides a model entry."""

    model_config = SettingsConfigDict(
        env_prefix="THINKLOOP_", env_nested_delimiter="__", env_file=".env", extra="ignore"
    )

    models_file: Path | None = Field(default=None, description="TOML file with [models.<name>] tables")
    models: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Model entries from env")
    model: str = Field(default="rubric", description="Default model under test")
    judge_model: str = Field(default="rubric", description="Default judge model")
    policy: str = Field(default="default", description="Default scoring policy")
    require_warrant: float | str | None = Field(
        default=None,
        description="What the validity record a panel's runs cite must show for its acceptances to stand: "
        "the largest false-accept upper bound (Wilson 95 %), e.g. 0.10, optionally with the smallest "
        "lower bound of sound versions passed, e.g. 0.10,0.70 (without one: specificity_floor). An "
        "acceptance by a panel without such a record ends needs_review ('panel not certified'). "
        "Unset: acceptances stand, with or without a warrant",
    )
    escalate_to: list[str] = Field(
        default_factory=list,
        description="Stronger judge models, in order, that an acceptance below its panel's calibrated "
        "threshold goes to when the run has a guarantee target (each needs its own calibration); "
        "after the last, a person (needs_review)",
    )
    require_warrant_source: str | None = Field(
        default=None,
        description="The kind of labelled set a required warrant must be measured on: shipped, "
        "benchmark, own, reviews, or not-shipped (any but the set thinkloop ships). A record meets it "
        "only through a source of that kind (with at least require_warrant_min_flawed flawed versions) "
        "whose own false-accept bound is within require_warrant; otherwise an acceptance ends "
        "needs_review, the cause named. Unset: any source",
    )
    require_warrant_min_flawed: int | None = Field(
        default=None,
        ge=1,
        description="The fewest flawed versions the source a required warrant is measured on must hold "
        "(of the kind require_warrant_source names, or of any kind). Unset: any number",
    )
    specificity_floor: float = Field(
        default=DEFAULT_SPECIFICITY_FLOOR,
        gt=0,
        le=1,
        description="The smallest specificity (share of sound versions passed) a bench must measure for "
        "`judges validate --save` to store a validity record, and the smallest lower bound of it a "
        "required warrant needs when require_warrant names none",
    )
    log_level: str = Field(default="WARNING")
    log_json: bool = Field(default=False)

    database_url: str = Field(
        default="sqlite+aiosqlite:///thinkloop.db", description="SQLite file or PostgreSQL"
    )
    host: str = Field(default="127.0.0.1")
    port: int = Field(default=8000)
    cors_origins: list[str] = Field(default_factory=list, description="Allowed browser origins")
    max_body_bytes: int = Field(default=64 * 1024, description="Larger request bodies get 413")
    http_header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="`serve` closes a connection whose request headers have not all arrived this long "
        "after it opened (or after the request's first byte, on a kept-alive connection)",
    )
    http_body_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="`serve` closes a connection whose request body has not all arrived "
        "this long after its headers",
    )
    http_keep_alive_s: float = Field(
        default=5.0, gt=0, description="`serve` closes an idle kept-alive connection after this long"
    )
    http_max_connections: int = Field(
        default=1000,
        ge=0,
        description="`serve` answers 503 to requests beyond this many open connections or requests in "
        "flight (uvicorn's limit_concurrency); 0: no cap",
    )
    http_backlog: int = Field(
        default=2048, ge=1, description="Connections the operating system queues before `serve` accepts them"
    )
    wait_timeout_s: float = Field(default=60.0, description="Upper bound for POST /v1/runs?wait=true")
    sse_heartbeat_s: float = Field(default=15.0, description="Seconds between SSE heartbeats")
    sse_poll_s: float = Field(
        default=1.0, gt=0, description="How often a batch's progress stream reads its counts"
    )
    sse_reread_s: float = Field(
        default=15.0,
        gt=0,
        description="A run's stream re-reads the database this often as a safety net: for an announcement "
        "lost while the listener reconnects, or on SQLite for a run another process executes",
    )
    webhook_secret: SecretStr | None = Field(
        default=None,
        description="HMAC-SHA256 key for runs' own webhook_url; unset: each project's own signing secret "
        "(registered endpoints always use their own)",
    )
    webhook_previous_secret: SecretStr | None = Field(
        default=None,
        description="While THINKLOOP_WEBHOOK_SECRET is being rotated: the secret it replaced, which signs "
        "beside it until removed",
    )
    webhook_rotation_s: float = Field(
        default=24 * 3600.0,
        ge=0,
        description="After a project's or an endpoint's secret is rotated, the old one signs beside the "
        "new one this long",
    )
    webhook_allow_hosts: list[str] = Field(
        default_factory=list, description="Hosts (name, *.domain or CIDR) webhooks may reach besides loopback"
    )
    webhook_attempts: int = Field(
        default=11, ge=1, le=50, description="POSTs per delivery before it is failed (the defaults: ~25 h)"
    )
    webhook_backoff_s: float = Field(default=5.0, ge=0, description="The first retry's delay")
    webhook_backoff_factor: float = Field(
        default=4.0, ge=1, description="Each retry's delay is this times the last"
    )
    webhook_backoff_max_s: float = Field(
        default=6 * 3600.0, ge=0, description="The longest delay between retries"
    )
    webhook_backoff_jitter: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="Each delay is moved by up to this fraction, at random, either way",
    )
    webhook_timeout_s: float = Field(default=10.0)
    webhook_poll_s: float = Field(
        default=5.0, description="How often a process looks for due webhook deliveries in the outbox"
    )

    run_lease_s: float = Field(
        default=10.0,
        gt=0,
        description="A run's claim lapses this long after its last renewal (a batch item is held by its "
        "run's lease)",
    )
    run_heartbeat_s: float = Field(
        default=3.0,
        gt=0,
        description="How often the leases of executing runs are renewed (at least three times a lease)",
    )
    checkpoint_connections: int = Field(
        default=16,
        ge=2,
        description="PostgreSQL connections one API process's checkpointer may open: each run waits for "
        "its step's checkpoint before its next model calls, so about one per run stepping at once",
    )
    run_sweep_s: float = Field(
        default=3.0,
        gt=0,
        description="How often a process looks for runs to take over (queued, or lease lapsed) and, on "
        "Redis, for batch items to send again",
    )

    retention_days: float | None = Field(
        default=None,
        gt=0,
        description="Runs submitted over the API are deleted (with every trace) this many days after "
        "they were created, once ended; batches are kept until deleted. Default: kept",
    )
    retention_sweep_s: float = Field(default=3600.0, gt=0, description="How often old runs are purged")

    key_requests_per_minute: int = Field(
        default=0, ge=0, description="Requests one API key may make per minute (429 beyond); 0: no limit"
    )
    project_requests_per_minute: int = Field(
        default=0, ge=0, description="Requests all keys of one project may make per minute; 0: no limit"
    )
    signin_failures_per_minute: int = Field(
        default=20,
        ge=0,
        description="Failed sign-ins (unknown, revoked or expired keys) one client address may make per "
        "minute before every sign-in from it is refused with 429 for the rest of the window; 0: no brake",
    )
    project_daily_tokens: int | None = Field(
        default=None, gt=0, description="Tokens a project's runs may spend per UTC day; new runs get 429"
    )
    project_daily_cost_usd: float | None = Field(
        default=None, gt=0, description="USD a project's runs may spend per UTC day; new runs get 429"
    )
    key_daily_tokens: int | None = Field(
        default=None, gt=0, description="Tokens one API key's runs may spend per UTC day; new runs get 429"
    )
    key_daily_cost_usd: float | None = Field(
        default=None, gt=0, description="USD one API key's runs may spend per UTC day; new runs get 429"
    )

    broker_url: str | None = Field(default=None, description="redis://... to run batches on workers")
    batch_concurrency: int = Field(
        default=8, ge=1, description="Batch items (and a worker's runs) calling models at once per process"
    )
    batch_prefetch: int = Field(
        default=2,
        ge=0,
        description="Batch items a process claims and starts ahead, while its lanes are busy",
    )
    batch_outage_s: float = Field(default=300.0, description="Items wait this long for the database")
    batch_grace_s: float = Field(default=30.0, description="Shutdown: in-flight items may finish")
    resume_batches: bool = Field(
        default=True,
        description="Embedded broker: at start, send the unfinished items of every active batch again "
        "(off: the process runs only batches created or resumed through it; `thinkloop view`)",
    )
    limits_url: str | None = Field(
        default=None, description="redis://... for provider limits shared by all processes (default: broker)"
    )
    redelivery_s: float = Field(default=60.0, description="Redis: unacknowledged items go to another worker")

    @field_validator("require_warrant")
    @classmethod
    def _requirement(cls, value: float | str | None) -> float | str | None:
        """Refuse at start-up a required warrant that is not one or two bounds in (0, 1]."""
        parse_requirement(value)
        return value

    @field_validator("require_warrant_source")
    @classmethod
    def _required_source(cls, value: str | None) -> str | None:
        """Refuse at start-up a required source that is no source kind (nor not-shipped)."""
        if value is not None and value.strip():
            accepted_kinds(value.strip())
            return value.strip()
        return None

    def warrant_requirement(self) -> Requirement | None:
        """What a warrant must show (require_warrant, its floor filled in, with the source and the
        minimum of flawed versions it must be measured on); None: nothing required."""
        bounds = parse_requirement(self.require_warrant, self.specificity_floor)
        source, fewest = self.require_warrant_source, self.require_warrant_min_flawed
        if source is None and fewest is None:
            return bounds
        base = bounds or Requirement(1.0, self.specificity_floor)
        return dataclasses.replace(base, source=source, min_flawed=fewest)

    def shared_limits_url(self) -> str | None:
        """Where provider limits are shared: THINKLOOP_LIMITS_URL, else a Redis broker, else in memory."""
        if self.limits_url:
            return self.limits_url
        return self.broker_url if self.broker_url and self.broker_url.startswith("redis") else None

    def batch_items_held(self) -> int:
        """Batch items a process holds at once: one per lane, and those claimed ahead of a lane."""
        return self.batch_concurrency + self.batch_prefetch


def get_settings() -> Settings:
    """Read the settings now (never cached at import time)."""
    return Settings()
