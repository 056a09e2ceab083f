"""Projects and their API keys: a key is created once and shown once, stored as SHA-256, scoped
read, write, validate, review, admin and/or operator, and belongs to one project; it may expire,
and its last use is kept."""

from __future__ import annotations

import math
import secrets
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, or_, select

from app.access.signin import hash_key
from app.models import DEFAULT_PROJECT, ApiKey, Project, utcnow
from app.projects.names import project_name

# read: see the project's runs, datasets and batches; write: create and steer them;
# admin: manage the project's own keys and settings (never another project's);
# validate: save the project's validity records (a bench's figures; with write, which runs the
# bench) and pin the one its runs cite (admin holds it too);
# review: read and decide the project's review queue (a teacher's key), and nothing else;
# operator: the instance's — make projects, set their daily caps, manage every project's keys,
# check models for every project, publish a validity record for every project. Neither admin nor
# operator reads or writes runs by itself.
OPERATOR = "operator"
VALIDATE = "validate"
REVIEW = "review"
SCOPES = ("read", "write", VALIDATE, REVIEW, "admin", OPERATOR)
KEY_PREFIX = "tlk_"


class ProjectError(ValueError):
    """A project that cannot be made or found (a taken name, an unknown id)."""


@dataclass(frozen=True)
class NewKey:
    """A freshly created key: ``secret`` is never stored and cannot be shown again."""

    id: str
    name: str
    secret: str
    scopes: list[str]
    project_id: str
    expires_at: datetime | None


def _check_caps(daily_tokens: int | None, daily_cost_usd: float | None) -> None:
    """A cap is a finite amount from 0 up: NaN would compare false with every spend and switch the
    cap off unseen (and be stored differently by SQLite and PostgreSQL)."""
    for cap in (daily_tokens, daily_cost_usd):
        if cap is not None and (not math.isfinite(cap) or cap < 0):
            raise ProjectError(f"a daily cap is a finite amount from 0 up, not {cap}")


async def create_project(
    session: AsyncSession, name: str, daily_tokens: int | None = None, daily_cost_usd: float | None = None
) -> Project:
    """A new project, with its own daily caps if given (None: the global setting); ProjectError if
    the name is taken (after NFKC), or holds invisible characters or mixed scripts (``names``)."""
    try:
        name = project_name(name)
    except ValueError as exc:
        raise ProjectError(str(exc)) from exc
    _check_caps(daily_tokens, daily_cost_usd)
    project = Project(name=name, daily_tokens=daily_tokens, daily_cost_usd=daily_cost_usd)
    try:
        async with session.begin_nested():
            session.add(project)
    except IntegrityError as exc:
        raise ProjectError(f"there is already a project named {name!r}") from exc
    return project


async def find_project(session: AsyncSession, id_or_name: str) -> Project:
    """A project by id or name (as typed, or NFKC-normalised as names are stored); ProjectError if
    there is none."""
    names = {id_or_name, unicodedata.normalize("NFKC", id_or_name).strip()}
    query = select(Project).where(or_(col(Project.id) == id_or_name, col(Project.name).in_(names)))
    project = (await session.execute(query)).scalars().first()
    if project is None:
        raise ProjectError(f"there is no project {id_or_name!r}")
    return project


async def list_projects(session: AsyncSession) -> Sequence[Project]:
    """Every project, oldest first."""
    return (await session.execute(select(Project).order_by(col(Project.created_at)))).scalars().all()


async def create_key(
    session: AsyncSession,
    name: str,
    scopes: list[str],
    project_id: str = DEFAULT_PROJECT,
    expires_at: datetime | None = None,
) -> NewKey:
    """Create and store a key of a project; returns the only copy of its secret."""
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        raise ValueError(f"scopes must be among {', '.join(SCOPES)}; got {', '.join(unknown) or 'none'}")
    if expires_at is not None and expires_at <= utcnow():
        raise ValueError("the expiry must lie in the future")
    if await session.get(Project, project_id) is None:
        raise ProjectError(f"there is no project {project_id!r}")
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(
        project_id=project_id,
        name=name,
        prefix=secret[:12],
        key_hash=hash_key(secret),
        scopes=sorted(set(scopes)),
        expires_at=expires_at,
    )
    session.add(row)
    await session.flush()
    return NewKey(row.id, name, secret, row.scopes, project_id, expires_at)


async def list_keys(session: AsyncSession, project_id: str | None = None) -> Sequence[ApiKey]:
    """Keys (of one project, or all), oldest first; revoked and expired ones included."""
    query = select(ApiKey).order_by(col(ApiKey.created_at))
    if project_id is not None:
        query = query.where(col(ApiKey.project_id) == project_id)
    return (await session.execute(query)).scalars().all()


async def revoke_key(session: AsyncSession, key_id_or_prefix: str) -> ApiKey | None:
    """Revoke a key by id or prefix; None when there is no such key."""
    query = select(ApiKey).where(
        (col(ApiKey.id) == key_id_or_prefix) | (col(ApiKey.prefix) == key_id_or_prefix)
    )
    row = (await session.execute(query)).scalars().first()
    if row is not None and row.revoked_at is None:
        row.revoked_at = utcnow()
    return row
