"""Measured spend of earlier batch items like the ones an estimate is asked about: same problem
(by content hash), model under test, arm, judge model and max_rounds. Read only: the database is
neither migrated nor written, and a database that does not exist yet has no history."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError, OperationalError, ProgrammingError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from agents.schemas import Problem
from app.models import DEFAULT_PROJECT, Batch, BatchItem, DatasetItem, ProblemRow, Run, RunFacts

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


async def dataset_problems(session: AsyncSession, dataset_id: str) -> list[tuple[str, Problem]]:
    """A stored dataset's problems in order, each with its content hash."""
    query = (
        select(ProblemRow)
        .join(DatasetItem, col(DatasetItem.problem_id) == col(ProblemRow.id))
        .where(col(DatasetItem.dataset_id) == dataset_id)
        .order_by(col(DatasetItem.position))
    )
    rows = (await session.execute(query)).scalars().all()
    return [(r.content_hash, Problem(question=r.question, solution=r.solution)) for r in rows]


async def measured(
    session: AsyncSession,
    hashes: list[str],
    models: list[str],
    judge_model: str,
    max_rounds: int,
    project_id: str = DEFAULT_PROJECT,
) -> dict[ItemKey, Measured]:
    """The newest full measurement of each (problem, model, arm) in the project's batches; empty
    when there is no history."""
    query = (
        select(col(ProblemRow.content_hash), BatchItem, Run)
        .join(Batch, col(Batch.id) == col(BatchItem.batch_id))
        .join(ProblemRow, col(ProblemRow.id) == col(BatchItem.problem_id))
        .join(Run, col(Run.id) == col(BatchItem.run_id))
        .where(
            col(ProblemRow.content_hash).in_(hashes),
            col(BatchItem.model).in_(models),
            col(Batch.project_id) == project_id,
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
