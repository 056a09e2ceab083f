"""The usage ledger: what each project's LLM calls spent per UTC day, for the daily caps.

A run's rows (judgements, revisions, its rounds' solver calls) go when the run is deleted; the
ledger stays, so deleting runs never gives spend back. Each call's usage is added in the same
transaction that records the call, and only when it is recorded (a round stored again is not
charged again), so the ledger and the stored calls agree until something is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from agents.schemas import RevisionResult, Usage
from app.models import DailyUsage, Run, utcnow
from graphs.state import RoundRecord


async def charge_round(session: AsyncSession, run_id: str, record: RoundRecord) -> None:
    """Add a round's judge calls and its solver's call to the run's project's day."""
    usages = [outcome.usage for outcome in record.outcomes]
    if record.solver is not None:
        usages.append(record.solver.usage)
    await charge(session, run_id, usages)


async def charge_revision(session: AsyncSession, run_id: str, outcome: RevisionResult) -> None:
    """Add a revision's calls to the run's project's day."""
    await charge(session, run_id, [outcome.usage])


async def charge(session: AsyncSession, run_id: str, usages: Iterable[Usage]) -> None:
    """Add these calls' tokens and cost to the run's project's row of today (UTC), made if new.

    One upsert: concurrent writers of one project add to the same row without losing an update.
    Calls that cost nothing (the offline panel) write nothing.
    """
    spent = list(usages)
    input_tokens = sum(u.input_tokens for u in spent)
    output_tokens = sum(u.output_tokens for u in spent)
    cost = sum(u.cost_usd or 0.0 for u in spent)
    if not (input_tokens or output_tokens or cost):
        return
    project = select(col(Run.project_id)).where(col(Run.id) == run_id)
    project_id = (await session.execute(project)).scalar()
    if project_id is None:
        return
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    values = {"input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": cost}
    statement = insert(DailyUsage).values(project_id=project_id, day=utcnow().date(), **values)
    added = {name: getattr(DailyUsage, name) + getattr(statement.excluded, name) for name in values}
    await session.execute(statement.on_conflict_do_update(index_elements=["project_id", "day"], set_=added))


async def spent_on(session: AsyncSession, project_id: str, day: date) -> tuple[int, float]:
    """Tokens (in and out) and cost the project's calls spent on ``day`` (UTC)."""
    query = select(DailyUsage).where(col(DailyUsage.project_id) == project_id, col(DailyUsage.day) == day)
    row = (await session.execute(query)).scalars().first()
    if row is None:
        return 0, 0.0
    return row.input_tokens + row.output_tokens, row.cost_usd
