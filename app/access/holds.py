"""What each piece of model work holds of the daily ledgers' reservations (``SpendHold`` rows), and
how a hold is settled (turned into spend as its calls are charged) and released (given back).

The ledgers' ``reserved_*`` columns are the sum of the holds of their day: every change here changes
a hold and its day's ledger rows by the same amount, in the caller's transaction. Nothing here
imports ``usage``, which settles through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from sqlalchemy import case, delete, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.models import DailyUsage, KeyDailyUsage, SpendHold


async def holds_of(session: AsyncSession, holder: str) -> Sequence[SpendHold]:
    """The holder's holds, oldest day first, locked (PostgreSQL) until the transaction ends."""
    query = select(SpendHold).where(col(SpendHold.holder) == holder).order_by(col(SpendHold.day))
    return (await session.execute(query.with_for_update())).scalars().all()


async def settle(session: AsyncSession, holder: str, tokens: int, cost: float) -> None:
    """``tokens`` and ``cost`` of the holder's calls were just charged as spend: take as much off its
    holds (and their ledgers' reservations), so nothing is counted twice. What a hold lacks (its
    calls spent more than it held) is simply spend."""
    for hold in await holds_of(session, holder):
        take_tokens, take_cost = min(tokens, hold.tokens), min(cost, hold.cost_usd)
        if take_tokens or take_cost:
            await _shift(session, hold, -take_tokens, -take_cost)
            tokens, cost = tokens - take_tokens, cost - take_cost


async def release(session: AsyncSession, holder: str) -> tuple[int, float]:
    """Give back everything the holder still holds; what it gave (tokens, cost)."""
    given = 0, 0.0
    for hold in await holds_of(session, holder):
        await _unreserve(session, hold, hold.tokens, hold.cost_usd)
        given = given[0] + hold.tokens, given[1] + hold.cost_usd
    await session.execute(delete(SpendHold).where(col(SpendHold.holder) == holder))
    return given


async def add(
    session: AsyncSession, holder: str, owner: tuple[str, str | None], day: date, tokens: int, cost: float
) -> None:
    """Record that the holder now holds ``tokens`` and ``cost`` more of ``day``'s reservations (the
    ledgers were reserved already, by ``reserve``)."""
    hold = await session.get(SpendHold, (holder, day), with_for_update=True)
    if hold is None:
        project_id, key_id = owner
        session.add(
            SpendHold(
                holder=holder, day=day, project_id=project_id, api_key_id=key_id, tokens=tokens, cost_usd=cost
            )
        )
        await session.flush()
        return
    hold.tokens += tokens
    hold.cost_usd += cost
    await session.flush()


async def _shift(session: AsyncSession, hold: SpendHold, tokens: int, cost: float) -> None:
    hold.tokens += tokens
    hold.cost_usd += cost
    await session.flush()
    await _unreserve(session, hold, -tokens, -cost)


async def _unreserve(session: AsyncSession, hold: SpendHold, tokens: int, cost: float) -> None:
    """Take ``tokens`` and ``cost`` off the reservations of the hold's day (never below 0)."""
    for ledger, where in (
        (DailyUsage, col(DailyUsage.project_id) == hold.project_id),
        (KeyDailyUsage, col(KeyDailyUsage.api_key_id) == hold.api_key_id),
    ):
        if ledger is KeyDailyUsage and hold.api_key_id is None:
            continue
        values: dict[str, Any] = {
            "reserved_tokens": _floored(ledger.reserved_tokens, tokens),
            "reserved_cost_usd": _floored(ledger.reserved_cost_usd, cost),
        }
        day = col(ledger.day) == hold.day
        await session.execute(update(ledger).where(where, day).values(**values))


def _floored(column: Any, amount: float) -> Any:
    return case((column - amount < 0, 0), else_=column - amount)
