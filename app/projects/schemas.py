"""HTTP schemas of the admin API: projects and their keys."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    model_validator,
)

from app.pagination import in_range, iso_text
from app.projects.names import project_name
from app.text import storable_if_text

Scope = Literal["read", "write", "validate", "review", "admin", "operator"]
# Text we store: NUL and lone surrogates refused by name on every database (before the length
# check, which would refuse a surrogate only as undecodable data).
Name = Annotated[str, BeforeValidator(storable_if_text)]

_EXAMPLE_PROJECT: dict[str, Any] = {
    "id": "884c7932be6a48c1aab6f455d2bc364e",
    "name": "school-north",
    "created_at": "2026-11-23T06:42:25Z",
    "daily_tokens": 2000000,
    "daily_cost_usd": None,
    "require_warrant": 0.1,
    "require_specificity": 0.7,
    "require_warrant_source": "reviews",
    "require_warrant_min_flawed": 100,
    "audit_rate": 0.05,
    "audit_seed": "5e1f0c3a9b7d4e2f8a6c1b0d9e7f3a2c",
}
_EXAMPLE_KEY: dict[str, Any] = {
    "id": "c6144a29bfff41528da94b6db09f2730",
    "project_id": "884c7932be6a48c1aab6f455d2bc364e",
    "name": "north-tutor-app",
    "prefix": "tlk_a4zC2qaM",
    "scopes": ["read", "write"],
    "created_at": "2026-11-23T06:42:25Z",
    "expires_at": "2027-06-30T00:00:00Z",
    "last_used_at": "2026-11-23T06:42:41Z",
    "revoked_at": "2026-12-01T08:00:00Z",
}
_EXAMPLE_ENTRY: dict[str, Any] = {
    "id": "0b1c2d3e4f5a4b6c8d7e9f0a1b2c3d4e",
    "created_at": "2026-11-23T06:42:41Z",
    "project_id": "884c7932be6a48c1aab6f455d2bc364e",
    "key_id": "c6144a29bfff41528da94b6db09f2730",
    "actor": "north-tutor-app (tlk_a4zC2qaM…)",
    "action": "deleted",
    "target_type": "run",
    "target_id": "5dd6f164dde6407fb7dd519ec9a32a8a",
    "detail": {"items": 48},
}


MAX_DAILY_TOKENS = 10**15  # within a 64-bit column on every database, and far beyond any day
DailyTokens = Annotated[
    int | None,
    Field(
        ge=0,
        le=MAX_DAILY_TOKENS,
        description="Tokens the project's runs may spend per UTC day; null: the global setting "
        "(THINKLOOP_PROJECT_DAILY_TOKENS)",
        examples=[2000000],
    ),
]
DailyCost = Annotated[
    float | None,
    Field(
        ge=0,
        allow_inf_nan=False,
        description="USD the project's runs may spend per UTC day; null: the global setting "
        "(THINKLOOP_PROJECT_DAILY_COST_USD)",
        examples=[25.0],
    ),
]
RequireWarrant = Annotated[
    float | None,
    Field(
        gt=0,
        le=1,
        allow_inf_nan=False,
        description="The largest false-accept upper bound (Wilson 95 %) the validity record a panel's "
        "runs cite may have for the project's acceptances to stand (an acceptance without one ends "
        "needs_review, 'panel not certified'); null: the global setting (THINKLOOP_REQUIRE_WARRANT)",
        examples=[0.1],
    ),
]
RequireSpecificity = Annotated[
    float | None,
    Field(
        gt=0,
        le=1,
        allow_inf_nan=False,
        description="The smallest lower bound (Wilson 95 %) of sound versions passed a panel's validity "
        "record must show beside require_warrant (a panel that refuses everything has no false "
        "accepts); null: the global setting (THINKLOOP_REQUIRE_WARRANT's second bound, else "
        "THINKLOOP_SPECIFICITY_FLOOR)",
        examples=[0.7],
    ),
]

RequireWarrantSource = Annotated[
    Literal["shipped", "benchmark", "own", "reviews", "not-shipped"] | None,
    Field(
        description="The kind of labelled set a warrant must be measured on: reviews (this project's "
        "own review set, its teachers' decisions: `thinkloop judges validate --review-set`), benchmark "
        "(a public benchmark imported), own (the user's own set), shipped, or not-shipped (any but the "
        "set thinkloop ships). A record meets it only through a source of that kind whose own "
        "false-accept bound is within the required one; otherwise an acceptance ends needs_review; "
        "null: the global setting (THINKLOOP_REQUIRE_WARRANT_SOURCE), else any labelled set",
        examples=["reviews"],
    ),
]
RequireWarrantMinFlawed = Annotated[
    int | None,
    Field(
        ge=1,
        le=1_000_000,
        description="The fewest flawed versions the source a warrant is measured on must hold (of the "
        "kind require_warrant_source names, or of any kind); null: the global setting "
        "(THINKLOOP_REQUIRE_WARRANT_MIN_FLAWED), else any number",
        examples=[100],
    ),
]
AuditRate = Annotated[
    float | None,
    Field(
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="The share of accepted and screened runs drawn (seeded by audit_seed, recorded on the "
        "item) for a teacher's audit in the review queue; null or 0: none",
        examples=[0.05],
    ),
]


GuaranteeAlpha = Annotated[
    float | None,
    Field(
        gt=0,
        lt=1,
        description="Acceptance with a guarantee: the false accepts allowed among the versions a panel "
        "accepts itself (with guarantee_delta; null: no target). Below the calibrated threshold an "
        "acceptance escalates (docs/guarantee.md)",
        examples=[0.05],
    ),
]
GuaranteeDelta = Annotated[
    float | None,
    Field(
        gt=0,
        lt=1,
        description="Acceptance with a guarantee: the chance allowed that the bound does not hold "
        "(with guarantee_alpha; null: no target)",
        examples=[0.1],
    ),
]


class ProjectCreate(BaseModel):
    """A new project, with its own daily caps if it needs them."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[Name, AfterValidator(project_name)] = Field(
        min_length=1,
        max_length=200,
        description="Unique name, NFKC-normalised; refused with invisible characters (zero-width, "
        "bidirectional controls) or letters of mixed scripts (look-alikes of another name)",
        examples=["school-north"],
    )
    daily_tokens: DailyTokens = None
    daily_cost_usd: DailyCost = None
    require_warrant: RequireWarrant = None
    require_specificity: RequireSpecificity = None
    require_warrant_source: RequireWarrantSource = None
    require_warrant_min_flawed: RequireWarrantMinFlawed = None
    audit_rate: AuditRate = None
    guarantee_alpha: GuaranteeAlpha = None
    guarantee_delta: GuaranteeDelta = None

    @model_validator(mode="after")
    def _a_whole_target(self) -> ProjectCreate:
        if (self.guarantee_alpha is None) != (self.guarantee_delta is None):
            raise ValueError(
                "a guarantee target is guarantee_alpha and guarantee_delta: send both or neither"
            )
        return self


class ProjectUpdate(BaseModel):
    """A change to a project's daily caps or required warrant: only the fields sent change; null
    sets one back to the global setting."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,  # false is no $0 cap, "7" no 7: a request says what it means
        json_schema_extra={
            "examples": [{"daily_tokens": 500000, "daily_cost_usd": None, "require_warrant": 0.1}]
        },
    )

    daily_tokens: DailyTokens = None
    daily_cost_usd: DailyCost = None
    require_warrant: RequireWarrant = None
    require_specificity: RequireSpecificity = None
    require_warrant_source: RequireWarrantSource = None
    require_warrant_min_flawed: RequireWarrantMinFlawed = None
    audit_rate: AuditRate = None
    guarantee_alpha: GuaranteeAlpha = None
    guarantee_delta: GuaranteeDelta = None


class ProjectPublic(BaseModel):
    """A project (tenant): its keys see its runs, datasets and batches only."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_PROJECT]})

    id: str = Field(description="Project id")
    name: str = Field(description="Unique name")
    created_at: datetime = Field(description="When it was created (UTC)")
    daily_tokens: int | None = Field(
        description="Its own daily token cap; null: the global setting", examples=[2000000]
    )
    daily_cost_usd: float | None = Field(
        description="Its own daily cost cap in USD; null: the global setting", examples=[25.0]
    )
    require_warrant: float | None = Field(
        default=None,
        description="Its own required warrant (largest false-accept upper bound); null: the global setting",
        examples=[0.1],
    )
    require_specificity: float | None = Field(
        default=None,
        description="Its own smallest lower bound of sound versions passed a warrant needs; null: the "
        "global setting",
        examples=[0.7],
    )
    require_warrant_source: str | None = Field(
        default=None,
        description="The kind of labelled set its warrants must be measured on (reviews: its own review "
        "set; not-shipped: any but the shipped set); null: the global setting",
        examples=["reviews"],
    )
    require_warrant_min_flawed: int | None = Field(
        default=None,
        description="The fewest flawed versions that source must hold; null: the global setting",
        examples=[100],
    )
    audit_rate: float | None = Field(
        default=None,
        description="The share of accepted and screened runs drawn for a teacher's audit",
        examples=[0.05],
    )
    guarantee_alpha: float | None = Field(
        default=None,
        description="Its guarantee target's false accepts allowed (null: no target; docs/guarantee.md)",
        examples=[0.05],
    )
    guarantee_delta: float | None = Field(
        default=None,
        description="Its guarantee target's chance allowed that the bound does not hold (null: no target)",
        examples=[0.1],
    )
    audit_seed: str = Field(
        default="",
        description="The seed of its audit draw: a run is drawn when the first 8 bytes of "
        "SHA-256('<seed>:<run id>'), read as an integer over 2**64, fall below audit_rate",
        examples=["5e1f0c3a9b7d4e2f8a6c1b0d9e7f3a2c"],
    )


class ProjectList(BaseModel):
    """GET /v1/projects."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"items": [_EXAMPLE_PROJECT]}]})

    items: list[ProjectPublic] = Field(description="Every project, oldest first")


class KeyCreate(BaseModel):
    """A new API key of a project."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name = Field(
        min_length=1, max_length=200, description="Who or what uses it", examples=["tutor-app"]
    )
    scopes: list[Scope] = Field(
        default=["read", "write"],
        min_length=1,
        description="read, write, validate (save and pin this project's validity records), admin "
        "(this project's keys and settings) and/or operator (every project; only an operator key "
        "grants it)",
        examples=[["read"]],
    )
    expires_at: (
        Annotated[AwareDatetime, Strict(False), BeforeValidator(iso_text), AfterValidator(in_range)] | None
    ) = Field(
        default=None,
        description="When it stops working (with a timezone; default: never)",
        examples=["2027-06-30T00:00:00Z"],
    )


class KeyPublic(BaseModel):
    """An API key as listed: never its secret."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_KEY]})

    id: str = Field(description="Key id")
    project_id: str = Field(description="The project it belongs to")
    name: str = Field(description="Who or what uses it")
    prefix: str = Field(description="The secret's first characters, to recognise it")
    scopes: list[str] = Field(description="read, write, validate, admin and/or operator")
    created_at: datetime = Field(description="When it was created (UTC)")
    expires_at: datetime | None = Field(description="When it stops working, if ever")
    last_used_at: datetime | None = Field(description="Its last use (recorded at most once a minute)")
    revoked_at: datetime | None = Field(
        description="When it was revoked, if it was", examples=["2026-12-01T08:00:00Z"]
    )


class KeyCreated(KeyPublic):
    """A key just created: the only response that ever holds its secret."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [_EXAMPLE_KEY | {"revoked_at": None, "secret": "tlk_a4zC2qaM-oRjX…"}]}
    )

    secret: str = Field(description="The key itself: shown once, stored only as a hash")


class KeyList(BaseModel):
    """GET /v1/projects/{id}/keys."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"items": [_EXAMPLE_KEY]}]})

    items: list[KeyPublic] = Field(
        description="The project's keys, oldest first, revoked and expired included"
    )


class AuditEntry(BaseModel):
    """Who did what to which resource, and when."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_ENTRY]})

    id: str = Field(description="Entry id")
    created_at: datetime = Field(description="When (UTC)")
    project_id: str = Field(description="The project the resource belongs to")
    key_id: str | None = Field(description="The API key that did it; null for the CLI or the service")
    actor: str = Field(description="The key's name and prefix, 'cli', or 'retention'")
    action: str = Field(description="created, cancelled, paused, resumed, retried, revoked or deleted")
    target_type: str = Field(description="run, batch, dataset, project or key")
    target_id: str = Field(description="The resource's id")
    detail: dict[str, Any] | None = Field(description="What else is worth knowing (e.g. items of a batch)")


class AuditPage(BaseModel):
    """GET /v1/audit: entries, newest first."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "items": [_EXAMPLE_ENTRY],
                    "next_cursor": "WyIyMDI2LTExLTIzVDA2OjQyOjQxKzAwOjAwIiwgIjBiMWMiXQ",
                }
            ]
        }
    )

    items: list[AuditEntry] = Field(description="Entries, newest first")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end")


class WebhookSecret(BaseModel):
    """The project's webhook signing secret: it signs every run's own ``webhook_url`` (unless the
    instance sets THINKLOOP_WEBHOOK_SECRET); registered endpoints have their own."""

    project_id: str = Field(description="The project's id", examples=[_EXAMPLE_PROJECT["id"]])
    secret: str = Field(
        description="The Standard Webhooks signing secret: whsec_ and the base64 of the HMAC-SHA256 "
        "key (pass it as it is to any Standard Webhooks library, or to thinkloop_client.webhooks.verify)",
        examples=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    )
    in_use: bool = Field(
        description="Whether it signs runs' webhooks here: false when the instance sets "
        "THINKLOOP_WEBHOOK_SECRET, which then signs them instead",
        examples=[True],
    )
    previous_until: datetime | None = Field(
        default=None,
        description="After a rotation: until when the replaced secret still signs beside this one (a "
        "second webhook-signature value); null when it no longer does",
        examples=["2026-11-24T09:00:00Z"],
    )
