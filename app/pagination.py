"""Keyset pagination, newest first, over any table with ``created_at`` and a string ``id``."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy import Select, and_, or_
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import BadRequest


class Keyed(Protocol):
    """A row with a creation time and an id."""

    id: str
    created_at: datetime


RowT = TypeVar("RowT", bound=Keyed)


def encode_cursor(row: Keyed) -> str:
    """An opaque cursor after ``row`` in (created_at, id) descending order."""
    raw = json.dumps([row.created_at.isoformat(), row.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The position a cursor names; BadRequest if it is not one of ours."""
    try:
        created, row_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return datetime.fromisoformat(created), str(row_id)
    except (ValueError, TypeError) as exc:
        raise BadRequest("The cursor is not valid; use next_cursor from a previous page.") from exc


async def page(
    session: AsyncSession, query: Select[Any], table: type[RowT], limit: int, cursor: str | None
) -> tuple[Sequence[RowT], str | None]:
    """A page of ``query``'s rows, newest first, and the cursor of the next page."""
    created_at: Any = table.created_at  # the mapped columns
    row_id: Any = table.id
    query = query.order_by(created_at.desc(), row_id.desc()).limit(limit + 1)
    if cursor:
        created, last_id = decode_cursor(cursor)
        query = query.where(or_(created_at < created, and_(created_at == created, row_id < last_id)))
    rows: Sequence[RowT] = (await session.execute(query)).scalars().all()
    return rows[:limit], encode_cursor(rows[limit - 1]) if len(rows) > limit else None
