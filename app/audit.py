"""The audit log: who created, cancelled, steered, revoked or deleted what. An entry is added to the
session of the change it records, so both are committed together or not at all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.models import ApiKey, AuditEvent
from app.pagination import page

CLI = "cli"  # the actor of what a command line did (it signs in with no key)


def record(
    session: AsyncSession,
    key: ApiKey | None,
    action: str,
    target_type: str,
    target_id: str,
    project_id: str,
    detail: dict[str, Any] | None = None,
    actor: str = CLI,
) -> AuditEvent:
    """Add an entry: ``key`` did ``action`` to the ``target_type`` ``target_id`` of a project."""
    event = AuditEvent(
        project_id=project_id,
        key_id=key.id if key else None,
        actor=f"{key.name} ({key.prefix}…)" if key else actor,
        action=action,
        target_type=target_type,
        target_id=target_id,
        detail=detail,
    )
    session.add(event)
    return event


async def entries(
    session: AsyncSession,
    *,
    project_id: str | None,
    action: str | None,
    target_id: str | None,
    limit: int,
    cursor: str | None,
) -> tuple[Sequence[AuditEvent], str | None]:
    """A page of entries, newest first, filtered by project, action and target."""
    query = select(AuditEvent)
    if project_id is not None:
        query = query.where(col(AuditEvent.project_id) == project_id)
    if action is not None:
        query = query.where(col(AuditEvent.action) == action)
    if target_id is not None:
        query = query.where(col(AuditEvent.target_id) == target_id)
    return await page(session, query, AuditEvent, limit, cursor)
