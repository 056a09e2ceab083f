"""HTTP schemas of the admin API: projects and their keys."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field

from app.pagination import in_range
from app.text import storable_if_text

Scope = Literal["read", "write", "admin"]
# Text we store: NUL and lone surrogates refused by name on every database (before the length
# check, which would refuse a surrogate only as undecodable data).
Name = Annotated[str, BeforeValidator(storable_if_text)]


class ProjectCreate(BaseModel):
    """A new project."""

    model_config = ConfigDict(extra="forbid")

    name: Name = Field(min_length=1, max_length=200, description="Unique name", examples=["school-north"])


class ProjectPublic(BaseModel):
    """A project (tenant): its keys see its runs, datasets and batches only."""

    id: str = Field(description="Project id")
    name: str = Field(description="Unique name")
    created_at: datetime = Field(description="When it was created (UTC)")


class ProjectList(BaseModel):
    """GET /v1/projects."""

    items: list[ProjectPublic] = Field(description="Every project, oldest first")


class KeyCreate(BaseModel):
    """A new API key of a project."""

    model_config = ConfigDict(extra="forbid")

    name: Name = Field(
        min_length=1, max_length=200, description="Who or what uses it", examples=["tutor-app"]
    )
    scopes: list[Scope] = Field(
        default=["read", "write"], min_length=1, description="read, write and/or admin", examples=[["read"]]
    )
    expires_at: Annotated[AwareDatetime, AfterValidator(in_range)] | None = Field(
        default=None, description="When it stops working (with a timezone; default: never)"
    )


class KeyPublic(BaseModel):
    """An API key as listed: never its secret."""

    id: str = Field(description="Key id")
    project_id: str = Field(description="The project it belongs to")
    name: str = Field(description="Who or what uses it")
    prefix: str = Field(description="The secret's first characters, to recognise it")
    scopes: list[str] = Field(description="read, write and/or admin")
    created_at: datetime = Field(description="When it was created (UTC)")
    expires_at: datetime | None = Field(description="When it stops working, if ever")
    last_used_at: datetime | None = Field(description="Its last use (recorded at most once a minute)")
    revoked_at: datetime | None = Field(description="When it was revoked, if it was")


class KeyCreated(KeyPublic):
    """A key just created: the only response that ever holds its secret."""

    secret: str = Field(description="The key itself: shown once, stored only as a hash")


class KeyList(BaseModel):
    """GET /v1/projects/{id}/keys."""

    items: list[KeyPublic] = Field(
        description="The project's keys, oldest first, revoked and expired included"
    )


class AuditEntry(BaseModel):
    """Who did what to which resource, and when."""

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

    items: list[AuditEntry] = Field(description="Entries, newest first")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end")
