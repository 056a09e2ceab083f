"""Reserving spend against the daily caps (``app.access.reserve``, ``holds``, ``budget``): one
conditional update per reservation, settled by charges, released at the end; and a budget that
reserves each step before its calls, and stops at the cap. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import col, select

from agents.llm.calls import Usage
from agents.schemas import Problem
from app.access import reserve as reservations
from app.access.budget import Budget
from app.access.reserve import Amount
from app.access.usage import charge
from app.db import create_engine, session_factory, short_session
from app.errors import QuotaExceeded
from app.models import DEFAULT_PROJECT, DailyUsage, KeyDailyUsage, SpendHold, utcnow
from app.settings import Settings

pytestmark = pytest.mark.both_databases

OWNER = (DEFAULT_PROJECT, "key-1")
STEP = Amount(100, 0.5)


def _settings(database_url: str, **caps: Any) -> Settings:
    return Settings(_env_file=None, database_url=database_url, **caps)


@pytest.fixture
async def sessions(database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(database_url)
    try:
        yield session_factory(engine)
    finally:
        await engine.dispose()


async def _ledgers(sessions: async_sessionmaker[AsyncSession]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(spent tokens, reserved tokens, reserved cost) of the project's and the key's rows today."""
    async with short_session(sessions) as session:
        project = await session.get(DailyUsage, (DEFAULT_PROJECT, utcnow().date()))
        key = await session.get(KeyDailyUsage, ("key-1", utcnow().date()))
    assert project is not None and key is not None
    return tuple(
        (row.input_tokens + row.output_tokens, row.reserved_tokens, round(row.reserved_cost_usd, 6))
        for row in (project, key)
    )  # type: ignore[return-value]


async def _reserve(sessions: async_sessionmaker[AsyncSession], settings: Settings, holder: str) -> bool:
    try:
        async with short_session(sessions) as session:
            await reservations.reserve(session, settings, holder, OWNER, STEP)
    except QuotaExceeded:
        return False
    return True


async def test_a_reservation_is_granted_while_spent_plus_reserved_is_under_the_cap(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    settings = _settings(database_url, project_daily_tokens=250)
    granted = [await _reserve(sessions, settings, f"run-{n}") for n in range(4)]
    assert granted == [True, True, True, False]  # 0, 100, 200 are under 250; 300 is not
    assert await _ledgers(sessions) == ((0, 300, 1.5), (0, 300, 1.5))  # the key's row holds them too
    with pytest.raises(QuotaExceeded) as refused:
        async with short_session(sessions) as session:
            await reservations.reserve(session, settings, "run-9", OWNER, STEP)
    assert refused.value.extra == {
        "spent": {"tokens": 0, "cost_usd": 0.0},
        "reserved": {"tokens": 300, "cost_usd": 1.5},
    }
    assert "reserved by work under way" in refused.value.detail


async def test_a_keys_cap_refuses_and_the_projects_reservation_is_rolled_back(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    settings = _settings(database_url, project_daily_tokens=10**6, key_daily_tokens=150)
    assert [await _reserve(sessions, settings, f"run-{n}") for n in range(3)] == [True, True, False]
    # the refused one's project reservation went with its transaction
    assert await _ledgers(sessions) == ((0, 200, 1.0), (0, 200, 1.0))


async def test_charges_settle_the_hold_and_the_end_releases_the_rest(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    settings = _settings(database_url, project_daily_cost_usd=10.0)
    assert await _reserve(sessions, settings, "run-1")
    async with short_session(sessions) as session:  # one call of the run is recorded: 30 tokens
        await charge(session, "run-1", [Usage(input_tokens=20, output_tokens=10, cost_usd=0.2)], OWNER)
    assert await _ledgers(sessions) == ((30, 70, 0.3), (30, 70, 0.3))
    async with short_session(sessions) as session:  # more than it held: the rest is plain spend
        await charge(session, "run-1", [Usage(input_tokens=90, output_tokens=0, cost_usd=0.1)], OWNER)
    assert await _ledgers(sessions) == ((120, 0, 0.2), (120, 0, 0.2))
    async with short_session(sessions) as session:
        assert await reservations.release(session, "run-1") == Amount(0, pytest.approx(0.2))  # type: ignore[arg-type]
        assert (await session.execute(select(SpendHold))).first() is None
    assert await _ledgers(sessions) == ((120, 0, 0.0), (120, 0, 0.0))


async def test_a_release_gives_back_only_the_holders_own(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    settings = _settings(database_url, project_daily_tokens=1000)
    assert await _reserve(sessions, settings, "run-1") and await _reserve(sessions, settings, "run-2")
    async with short_session(sessions) as session:
        await reservations.release(session, "run-1")
        await reservations.release(session, "run-1")  # twice: nothing more
    assert await _ledgers(sessions) == ((0, 100, 0.5), (0, 100, 0.5))
    async with short_session(sessions) as session:
        holders = (await session.execute(select(col(SpendHold.holder)))).scalars().all()
    assert holders == ["run-2"]


async def test_concurrent_reservations_race_and_only_what_fits_is_granted(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    """Forty reservations at once, each in its own transaction, for a cap that only the first
    three fit under: exactly three are granted, with no day's row yet at the start (made by the
    first, concurrently)."""
    settings = _settings(database_url, project_daily_tokens=250)
    granted = await asyncio.gather(*(_reserve(sessions, settings, f"run-{n}") for n in range(40)))
    assert sum(granted) == 3
    assert await _ledgers(sessions) == ((0, 300, 1.5), (0, 300, 1.5))


async def test_no_cap_reserves_nothing(sessions: async_sessionmaker[AsyncSession], database_url: str) -> None:
    async with short_session(sessions) as session:
        assert not await reservations.reserve(session, _settings(database_url), "run-1", OWNER, STEP)
        assert (await session.execute(select(SpendHold))).first() is None


async def test_a_budget_reserves_each_step_once_and_stops_at_the_cap(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    """Calls of a reserved step are never refused; a new step reserves what the holder lacks of its
    estimate; once a step is refused, so is every later one, before its call."""
    settings = _settings(database_url, project_daily_tokens=150)
    budget = Budget(sessions, settings, "run-1", OWNER, lambda _: STEP)
    one, two = Problem(question="a?", solution="a"), Problem(question="b?", solution="b")
    for _ in range(3):  # three calls of round 1: one reservation
        async with budget.calling(one, 1) as billed:
            billed(Usage(input_tokens=10, output_tokens=10))
    assert (budget.granted_tokens, await _ledgers(sessions)) == (100, ((0, 100, 0.5), (0, 100, 0.5)))
    async with budget.calling(two, 2) as billed:  # round 2: 40 of round 1's are left, 60 more: 0 + 100 < 150
        billed(Usage(input_tokens=10))
    assert budget.granted_tokens == 160
    async with short_session(sessions) as session:  # the writer records round 1's calls
        await charge(session, "run-1", [Usage(input_tokens=30, output_tokens=30)], OWNER)
    assert await _ledgers(sessions) == ((60, 100, 0.5), (60, 100, 0.5))
    with pytest.raises(QuotaExceeded):  # round 3 lacks 10: 60 spent + 100 held is past 150
        async with budget.calling(two, 3):
            raise AssertionError("a refused step makes no call")
    with pytest.raises(QuotaExceeded):
        async with budget.calling(one, 4):
            raise AssertionError("nor does any later one")
    async with budget.calling(two, 2) as billed:  # a call of a step reserved before still goes
        billed(Usage(output_tokens=5))


async def test_a_budget_resumes_with_what_its_holder_holds(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    """A run reserved at admission (or by an attempt whose process died) starts with that hold: its
    first step reserves nothing more."""
    settings = _settings(database_url, project_daily_tokens=150)
    assert await _reserve(sessions, settings, "run-1")
    budget = await Budget.of(sessions, settings, "run-1", OWNER, lambda _: STEP)
    async with budget.calling(Problem(question="a?", solution="a"), 1) as billed:
        billed(Usage(input_tokens=1))
    assert budget.granted_tokens == 100
    assert await _ledgers(sessions) == ((0, 100, 0.5), (0, 100, 0.5))
