"""Measured spend of earlier batch items like the ones an estimate is asked about: same problem
(by content hash), model under test, arm, judge model and max_rounds. Read only: the database is
neither migrated nor written, and a database that does not exist yet has no history."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError, OperationalError, ProgrammingError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from app.models import Batch, BatchItem, ProblemRow, Run, RunFacts

# (problem content hash, model under test, arm)
ItemKey = tuple[str, str, str]


@dataclass(frozen=True)
class Measured:
    """What one earlier item's calls spent, every call made (none answered from the response cache)."""

    calls: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cost_usd: float


async def measured(
    session: AsyncSession, hashes: list[str], models: list[str], judge_model: str, max_rounds: int
) -> dict[ItemKey, Measured]:
    """The newest full measurement of each (problem, model, arm); empty when there is no history."""
    query = (
        select(col(ProblemRow.content_hash), BatchItem, Run)
        .join(Batch, col(Batch.id) == col(BatchItem.batch_id))
        .join(ProblemRow, col(ProblemRow.id) == col(BatchItem.problem_id))
        .join(Run, col(Run.id) == col(BatchItem.run_id))
        .where(
            col(ProblemRow.content_hash).in_(hashes),
            col(BatchItem.model).in_(models),
            col(Batch.judge_model) == judge_model,
            col(Batch.max_rounds) == max_rounds,
            col(BatchItem.cache_hits) == 0,
            col(BatchItem.status).in_(("accepted", "screened", "exhausted", "needs_review")),
        )
        .order_by(col(BatchItem.finished_at))
    )
    try:
        rows = (await session.execute(query)).all()
    except (OperationalError, ProgrammingError, DBAPIError):  # no tables yet: nothing measured
        return {}
    found: dict[ItemKey, Measured] = {}
    for content_hash, item, run in rows:  # oldest first: the newest wins
        facts = RunFacts.of(run)
        calls = facts.llm_calls if facts is not None else 0
        spent = Measured(
            calls, item.input_tokens, item.cached_input_tokens, item.output_tokens, item.cost_usd
        )
        found[(content_hash, item.model, item.arm)] = spent
    return found
