"""Keyset pagination, newest first, over any table with ``created_at`` and a string ``id``."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy import Select, and_, or_
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import BadRequest
from app.text import unstorable_reason

# Every cursor we write names a row's creation time, so it lies between these; a time outside them
# was made up, and near year 1 or 9999 converting it to UTC (or any arithmetic) overflows.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
_RETRY = "use next_cursor from a previous page"


class Keyed(Protocol):
    """A row with a creation time and an id."""

    id: str
    created_at: datetime


RowT = TypeVar("RowT", bound=Keyed)
QueryT = TypeVar("QueryT", bound=Select[Any])


def encode_cursor(row: Keyed) -> str:
    """An opaque cursor after ``row`` in (created_at, id) descending order."""
    raw = json.dumps([row.created_at.isoformat(), row.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The position a cursor names, in UTC; BadRequest saying what is wrong if it is not one of ours."""
    try:
        created, row_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        when = datetime.fromisoformat(created)
    except (ValueError, TypeError, RecursionError) as exc:
        raise BadRequest(f"The cursor is not valid; {_RETRY}.") from exc
    if not isinstance(row_id, str) or unstorable_reason(row_id) is not None:
        raise BadRequest(f"The cursor is not valid (its id is not one of ours); {_RETRY}.")
    return _instant(when), row_id


def _instant(when: datetime) -> datetime:
    """The cursor's time in UTC; BadRequest when it has no timezone or lies outside the rows' times."""
    if when.tzinfo is None or when.utcoffset() is None:
        raise BadRequest(f"The cursor's time has no timezone, so it names no instant; {_RETRY}.")
    try:
        instant = when.astimezone(UTC)
    except OverflowError as exc:  # e.g. 0001-01-01T00:00:00+05:00 is before datetime.min in UTC
        raise _out_of_range(when) from exc
    if not EARLIEST <= instant < LATEST:
        raise _out_of_range(when)
    return instant


def iso_text(value: object) -> object:
    """A time in a request body is ISO 8601 text (a pydantic ``BeforeValidator`` for the one field
    a strict body leaves lax: JSON has no time type): a number would otherwise be read as a Unix
    time, a boolean as 0 or 1."""
    if not isinstance(value, str | datetime):
        raise ValueError("a time is ISO 8601 text with its timezone, e.g. 2027-06-30T00:00:00Z")
    return value


def in_range(when: datetime) -> datetime:
    """``when`` in UTC if it lies between EARLIEST and LATEST; ValueError otherwise (a pydantic
    ``AfterValidator`` for time filters: year 1 or 9999 in another timezone overflows in the database
    driver, a 500, where it should be a 422)."""
    try:
        instant = when.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(f"the time must lie between {EARLIEST.year} and {LATEST.year}") from exc
    if not EARLIEST <= instant < LATEST:
        raise ValueError(f"the time must lie between {EARLIEST.year} and {LATEST.year}")
    return instant


# The largest value our integer columns hold on every database (PostgreSQL's INTEGER is 32-bit,
# SQLite's 64-bit): a larger number from a client failed in the driver or the database, a 500.
MAX_INT32 = 2**31 - 1


def sequence_number(text: str, what: str, advice: str = "") -> int:
    """``text`` as a number of ours (a position, an event id): ASCII digits up to MAX_INT32;
    BadRequest naming ``what`` otherwise (``str.isdigit`` alone accepts "²", which ``int`` refuses)."""
    # The length test first: int() refuses more than 4,300 digits with a ValueError of its own.
    if text.isascii() and text.isdigit() and len(text) <= 10 and int(text) <= MAX_INT32:
        return int(text)
    raise BadRequest(
        f"The {what} {text[:40]!r} is not valid: it must be a whole number from 0 to {MAX_INT32}{advice}."
    )


def created_between(
    query: QueryT, table: type[Keyed], after: datetime | None, before: datetime | None
) -> QueryT:
    """``query`` kept to rows created in [after, before)."""
    created_at: Any = table.created_at  # the mapped column
    if after is not None:
        query = query.where(created_at >= after)
    if before is not None:
        query = query.where(created_at < before)
    return query


def _out_of_range(when: datetime) -> BadRequest:
    return BadRequest(
        f"The cursor's time {when.isoformat()} is out of range (rows are created between "
        f"{EARLIEST.year} and {LATEST.year}); {_RETRY}."
    )


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
