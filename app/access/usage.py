"""The usage ledgers: what each project's, and each API key's, LLM calls spent per UTC day, for
the daily caps. A run is charged to its key (a batch item's run to the key that created its batch);
a run with no key (the CLI's) to its project only.

A run's rows (judgements, revisions, its rounds' solver calls) go when the run is deleted; the
ledger stays, so deleting runs never gives spend back. Each call's usage is added in the same
transaction that records the call, and only when it is recorded (a round stored again is not
charged again), so the ledger and the stored calls agree until something is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, func, select

from agents.llm.calls import Usage
from app.access import holds
from app.db import dialect_insert
from app.models import Batch, DailyUsage, KeyDailyUsage, Run, utcnow
from graphs.state import Round


def of_round(record: Round) -> list[Usage]:
    """A round's calls: its judges', its solver's and the stronger panels' it escalated to."""
    usages = [outcome.usage for outcome in record.outcomes]
    if record.solver is not None:
        usages.append(record.solver.usage)
    return usages + escalation_usage(record.escalations)


def escalation_usage(steps: Iterable[Mapping[str, Any]] | None) -> list[Usage]:
    """What the stronger panels of a round's escalation (its stored steps) spent."""
    return [Usage.model_validate(step["usage"]) for step in steps or () if step.get("usage")]


# Whom a run's calls are charged to: its project, and its key (or its batch's key), if any.
Owner = tuple[str, str | None]


def owner_of(run: Run) -> Owner | None:
    """A run's ``Owner`` as its row says, without a query; None for a batch item's run, charged to
    the key that created its batch (which the run's row does not hold)."""
    return None if run.batch_id is not None else (run.project_id, run.api_key_id)


async def charge(
    session: AsyncSession,
    run_id: str,
    usages: Iterable[Usage],
    owner: Owner | None = None,
    *,
    held: bool = True,
) -> None:
    """Add these calls' tokens and cost to today's (UTC) row of the run's project and of its key,
    made if new; ``owner``, when the caller has it (``owner_of``), saves looking it up.

    One upsert per ledger: concurrent writers of one project add to the same row without losing an
    update; the run's hold (its reservations) is settled by as much. Calls that cost nothing (the
    offline panel) write nothing.
    """
    spent = list(usages)
    values = _values(spent)
    if not values:
        return
    found = owner if owner is not None else await find_owner(session, run_id)
    if found is not None:
        await charge_owner(session, found[0], found[1], spent)
    # What the run had reserved for these calls (``app.access.reserve``) is spent now (a temporary
    # store's run, ``held`` false, reserves nothing there: no lookup).
    if held:
        await holds.settle(
            session, run_id, values["input_tokens"] + values["output_tokens"], values["cost_usd"]
        )


async def find_owner(session: AsyncSession, run_id: str) -> Owner | None:
    """Whom the run's calls are charged to: its project, and its key or its batch's key."""
    owners = (
        select(col(Run.project_id), func.coalesce(col(Run.api_key_id), col(Batch.api_key_id)))
        .outerjoin(Batch, col(Batch.id) == col(Run.batch_id))
        .where(col(Run.id) == run_id)
    )
    found = (await session.execute(owners)).first()
    return (found[0], found[1]) if found is not None else None


async def charge_owner(
    session: AsyncSession, project_id: str, api_key_id: str | None, usages: Iterable[Usage]
) -> None:
    """Add these calls to today's (UTC) row of ``project_id`` and, if given, of ``api_key_id``: for
    model work that is no run (the judges' validity bench), charged as a run's calls are."""
    values = _values(list(usages))
    if not values:
        return
    await _add(session, DailyUsage, {"project_id": project_id}, values)
    if api_key_id is not None:
        await _add(session, KeyDailyUsage, {"api_key_id": api_key_id}, values)


def _values(spent: list[Usage]) -> dict[str, Any]:
    """The ledger columns these calls add to; empty when they cost nothing (the offline panel)."""
    input_tokens = sum(u.input_tokens for u in spent)
    output_tokens = sum(u.output_tokens for u in spent)
    cost = sum(u.cost_usd or 0.0 for u in spent)
    if not (input_tokens or output_tokens or cost):
        return {}
    return {"input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": cost}


async def _add(
    session: AsyncSession,
    ledger: type[DailyUsage | KeyDailyUsage],
    owner: dict[str, str],
    values: dict[str, Any],
) -> None:
    insert = dialect_insert(session)
    statement = insert(ledger).values(**owner, day=utcnow().date(), **values)
    added = {name: getattr(ledger, name) + getattr(statement.excluded, name) for name in values}
    keys = [*owner, "day"]
    await session.execute(statement.on_conflict_do_update(index_elements=keys, set_=added))


async def spent_on(session: AsyncSession, project_id: str, day: date) -> tuple[int, float]:
    """Tokens (in and out) and cost the project's calls spent on ``day`` (UTC)."""
    query = select(DailyUsage).where(col(DailyUsage.project_id) == project_id, col(DailyUsage.day) == day)
    return _totals((await session.execute(query)).scalars().first())


async def key_spent_on(session: AsyncSession, key_id: str, day: date) -> tuple[int, float]:
    """Tokens (in and out) and cost the key's runs spent on ``day`` (UTC)."""
    query = select(KeyDailyUsage).where(
        col(KeyDailyUsage.api_key_id) == key_id, col(KeyDailyUsage.day) == day
    )
    return _totals((await session.execute(query)).scalars().first())


def _totals(row: DailyUsage | KeyDailyUsage | None) -> tuple[int, float]:
    if row is None:
        return 0, 0.0
    return row.input_tokens + row.output_tokens, row.cost_usd
