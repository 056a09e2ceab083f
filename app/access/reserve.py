"""Reserving spend against the daily caps before model work makes its calls.

A daily cap (tokens or cost, of a project and of an API key) reads its ledger row of the day: what
was spent (charged as calls are recorded) plus what work under way has reserved. New work, and each
new step of work under way (a run's round, a bench's version), first reserves its estimate with one
conditional UPDATE of the row, which succeeds only while spent plus reserved is under the cap. The
row lock (PostgreSQL) or the database's one writer (SQLite) makes the check and the reservation one
step, so concurrent requests cannot all pass a check that only one of them should.

Each reservation is recorded in the work's hold (``app.access.holds``): its calls' charges settle
the hold as they are recorded, and what is left is released when the work ends, however it ends.
So spent plus reserved never passes a cap by more than the one step whose reservation reached it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, NoReturn, cast

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.access import holds
from app.db import dialect_insert
from app.errors import QuotaExceeded
from app.models import DailyUsage, KeyDailyUsage, Project, utcnow
from app.settings import Settings

Owner = tuple[str, str | None]  # the project, and the API key if any


@dataclass(frozen=True)
class Caps:
    """The daily caps that apply to one owner (None: no cap)."""

    project_tokens: int | None = None
    project_cost: float | None = None
    key_tokens: int | None = None
    key_cost: float | None = None

    @property
    def any(self) -> bool:
        caps = (self.project_tokens, self.project_cost, self.key_tokens, self.key_cost)
        return any(cap is not None for cap in caps)


@dataclass(frozen=True)
class Amount:
    """Tokens (in and out) and cost in USD."""

    tokens: int = 0
    cost_usd: float = 0.0

    def __bool__(self) -> bool:
        return self.tokens > 0 or self.cost_usd > 0


NOTHING = Amount()


async def caps_of(session: AsyncSession, settings: Settings, owner: Owner) -> Caps:
    """The caps of ``owner`` now: the project's own, else the global ones; the key's from settings."""
    project = await session.get(Project, owner[0])
    tokens, cost = project_caps(settings, project)
    if owner[1] is None:
        return Caps(tokens, cost)
    return Caps(tokens, cost, settings.key_daily_tokens, settings.key_daily_cost_usd)


async def reserve(
    session: AsyncSession, settings: Settings, holder: str, owner: Owner, amount: Amount
) -> bool:
    """Reserve ``amount`` for ``holder`` on today's ledgers of ``owner``, in the caller's
    transaction; QuotaExceeded (429) when the project or the key is at a cap (spent plus reserved).
    A zero ``amount`` only checks. False when no cap applies (nothing is reserved or held)."""
    caps = await caps_of(session, settings, owner)
    if not caps.any:
        return False
    day = utcnow().date()
    project_id, key_id = owner
    await _take(
        session, DailyUsage, {"project_id": project_id}, day, amount, caps.project_tokens, caps.project_cost
    )
    if key_id is not None:
        key_row = {"api_key_id": key_id}
        await _take(session, KeyDailyUsage, key_row, day, amount, caps.key_tokens, caps.key_cost)
    if amount:
        await holds.add(session, holder, owner, day, amount.tokens, amount.cost_usd)
    return True


async def _take(
    session: AsyncSession,
    ledger: type[DailyUsage | KeyDailyUsage],
    who: dict[str, str],
    day: date,
    amount: Amount,
    cap_tokens: int | None,
    cap_cost: float | None,
) -> None:
    """The conditional UPDATE: add ``amount`` to the row's reservations if spent plus reserved is
    under each cap; QuotaExceeded if it is not. The day's row is made first if missing (a concurrent
    maker's row is kept: the insert does nothing then). A zero ``amount`` only reads: a check that
    writes nothing holds no write lock (SQLite) for the rest of the caller's transaction."""
    if not amount:
        await _check(session, ledger, who, day, cap_tokens, cap_cost)
        return
    zero = {
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "reserved_tokens": 0,
        "reserved_cost_usd": 0.0,
    }
    insert = dialect_insert(session)(ledger).values(**who, day=day, **zero)
    await session.execute(insert.on_conflict_do_nothing(index_elements=[*who, "day"]))
    keys = [getattr(ledger, name) == value for name, value in who.items()]
    conditions: list[Any] = [*keys, col(ledger.day) == day]
    if cap_tokens is not None:
        used = ledger.input_tokens + ledger.output_tokens + ledger.reserved_tokens
        conditions.append(used < cap_tokens)
    if cap_cost is not None:
        conditions.append(ledger.cost_usd + ledger.reserved_cost_usd < cap_cost)
    statement = (
        update(ledger)
        .where(*conditions)
        .values(
            reserved_tokens=ledger.reserved_tokens + amount.tokens,
            reserved_cost_usd=ledger.reserved_cost_usd + amount.cost_usd,
        )
    )
    if not (await session.execute(statement)).rowcount:  # type: ignore[attr-defined]
        await _check(session, ledger, who, day, cap_tokens, cap_cost)


async def _check(
    session: AsyncSession,
    ledger: type[DailyUsage | KeyDailyUsage],
    who: dict[str, str],
    day: date,
    cap_tokens: int | None,
    cap_cost: float | None,
) -> None:
    """QuotaExceeded if the day's row has spent plus reserved at or over a cap."""
    keys = [getattr(ledger, name) == value for name, value in who.items()]
    query = select(ledger).where(*keys, col(ledger.day) == day)
    row = cast(DailyUsage | KeyDailyUsage | None, (await session.execute(query)).scalars().first())
    spent = (row.input_tokens + row.output_tokens, row.cost_usd) if row is not None else (0, 0.0)
    reserved = (row.reserved_tokens, row.reserved_cost_usd) if row is not None else (0, 0.0)
    over_tokens = cap_tokens is not None and spent[0] + reserved[0] >= cap_tokens
    if over_tokens or (cap_cost is not None and spent[1] + reserved[1] >= cap_cost):
        whose = "The project's" if ledger is DailyUsage else "This key's"
        refuse(whose, spent, cap_tokens, cap_cost, reserved=reserved)


async def release(session: AsyncSession, holder: str) -> Amount:
    """Give back what ``holder`` still holds (its work ended), in the caller's transaction."""
    tokens, cost = await holds.release(session, holder)
    return Amount(tokens, cost)


async def held(session: AsyncSession, holder: str) -> Amount:
    """What ``holder`` holds now (reserved, not yet settled by charges)."""
    rows = await holds.holds_of(session, holder)
    return Amount(sum(r.tokens for r in rows), sum(r.cost_usd for r in rows))


def project_caps(settings: Settings, project: Project | None) -> tuple[int | None, float | None]:
    """The project's own daily caps, each falling back to the global setting where unset."""
    tokens = project.daily_tokens if project is not None else None
    cost = project.daily_cost_usd if project is not None else None
    return (
        tokens if tokens is not None else settings.project_daily_tokens,
        cost if cost is not None else settings.project_daily_cost_usd,
    )


def refuse(
    whose: str,
    spent: tuple[int, float],
    tokens_cap: int | None,
    cost_cap: float | None,
    reserved: tuple[int, float] = (0, 0.0),
) -> NoReturn:
    """Raise QuotaExceeded for an owner at a cap (``spent`` plus ``reserved`` reached it)."""
    tokens, cost = spent
    held = (
        f", with {reserved[0]} tokens and ${reserved[1]:.4f} reserved by work under way"
        if any(reserved)
        else ""
    )
    reset = _seconds_to_midnight(utcnow())
    raise QuotaExceeded(
        f"{whose} runs spent {tokens} tokens and ${cost:.4f} today (UTC){held}, at or over the "
        f"daily cap ({tokens_cap if tokens_cap is not None else 'no'} tokens, "
        f"${cost_cap if cost_cap is not None else '-'}); it resets at midnight UTC.",
        headers={"Retry-After": str(reset)},
        spent={"tokens": tokens, "cost_usd": round(cost, 6)},
        reserved={"tokens": reserved[0], "cost_usd": round(reserved[1], 6)},
    )


def _seconds_to_midnight(now: datetime) -> int:
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, math.ceil((tomorrow - now).total_seconds()))
