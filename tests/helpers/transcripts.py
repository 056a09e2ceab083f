"""A run's transcript beside its rows: what a test that kills or cuts a run mid-way compares."""

from __future__ import annotations

from collections import Counter

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, func, select

from app.db import create_engine, session_factory
from app.models import JudgementRow, RevisionRow, RoundRow, TranscriptEvent

# Each kind of event that describes a stored row, and the rows it describes (one event each).
DESCRIBED = (
    ("round.started", RoundRow),
    ("judge.verdict", JudgementRow),
    ("round.scored", RoundRow),
    ("revision.proposed", RevisionRow),
)


async def transcript_gaps(database_url: str, run_ids: list[str]) -> dict[str, list[str]]:
    """What is wrong with each run's transcript beside its rows: seq numbers that are not 1..n, and
    event counts that differ from the stored rounds, verdicts and revisions (empty: nothing)."""
    engine = create_engine(database_url)
    found: dict[str, list[str]] = {}
    try:
        async with session_factory(engine)() as session:
            for run_id in run_ids:
                found[run_id] = await _gaps(session, run_id)
    finally:
        await engine.dispose()
    return {run_id: gaps for run_id, gaps in found.items() if gaps}


async def _gaps(session: AsyncSession, run_id: str) -> list[str]:
    query = (
        select(col(TranscriptEvent.seq), col(TranscriptEvent.type))
        .where(col(TranscriptEvent.run_id) == run_id)
        .order_by(col(TranscriptEvent.seq))
    )
    events = (await session.execute(query)).all()
    gaps = [] if [seq for seq, _ in events] == list(range(1, len(events) + 1)) else ["seq not contiguous"]
    kinds = Counter(kind for _, kind in events)
    for kind, model in DESCRIBED:
        count = select(func.count()).select_from(model).where(model.run_id == run_id)
        stored = int((await session.execute(count)).scalar_one())
        if kinds[kind] != stored:
            gaps.append(f"{kinds[kind]} {kind} events for {stored} rows")
    return gaps


async def resumed(database_url: str, run_ids: list[str]) -> int:
    """How many of the runs were resumed (have a ``run.resumed`` event)."""
    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            query = select(func.count(func.distinct(col(TranscriptEvent.run_id)))).where(
                col(TranscriptEvent.run_id).in_(run_ids), col(TranscriptEvent.type) == "run.resumed"
            )
            return int((await session.execute(query)).scalar_one())
    finally:
        await engine.dispose()
