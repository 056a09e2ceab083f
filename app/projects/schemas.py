"""HTTP schemas of the admin API: projects and their keys."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

Scope = Literal["read", "write", "admin"]


class ProjectCreate(BaseModel):
    """A new project."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, description="Unique name", examples=["school-north"])


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

    name: str = Field(min_length=1, max_length=200, description="Who or what uses it", examples=["tutor-app"])
    scopes: list[Scope] = Field(
        default=["read", "write"], min_length=1, description="read, write and/or admin", examples=[["read"]]
    )
    expires_at: AwareDatetime | None = Field(
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
