"""Measured spend of earlier batch items like the ones an estimate is asked about: the same problem
(by content hash), model under test, arm, judge model and max_rounds (``measured``), or the same all
but the problem (``similar``). Read only: the database is neither migrated nor written, and a
database that does not exist yet has no history."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError, OperationalError, ProgrammingError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from agents.outcome import JUDGED_OUTCOMES
from agents.schemas import Problem
from app.models import DEFAULT_PROJECT, Batch, BatchItem, DatasetItem, ProblemRow, Run, RunFacts

# (problem content hash, model under test, arm)
ItemKey = tuple[str, str, str]
# (model under test, arm)
Kind = tuple[str, str]
SIMILAR_LIMIT = 200  # the newest measured items of a kind an estimate learns from
FINAL = tuple(JUDGED_OUTCOMES)  # the items that ran to the panel's end (no error, no cancellation)


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
            col(BatchItem.status).in_(FINAL),
        )
        .order_by(col(BatchItem.finished_at))
    )
    try:
        rows = (await session.execute(query)).all()
    except (OperationalError, ProgrammingError, DBAPIError):  # no tables yet: nothing measured
        return {}
    found: dict[ItemKey, Measured] = {}
    for content_hash, item, run in rows:  # oldest first: the newest wins
        found[(content_hash, item.model, item.arm)] = _spent(item, run)
    return found


async def similar(
    session: AsyncSession,
    models: list[str],
    judge_model: str,
    max_rounds: int,
    project_id: str = DEFAULT_PROJECT,
) -> dict[Kind, list[tuple[Problem, Measured]]]:
    """The newest ``SIMILAR_LIMIT`` full measurements of each (model, arm) with this judge model
    and max_rounds in the project's batches, on any problem, each with its problem; empty when
    there is no history. An estimate scales its assumed rounds, reply lengths and prompt tokens by
    what these items spent against what it would have assumed for them."""
    query = (
        select(ProblemRow, BatchItem, Run)
        .join(Batch, col(Batch.id) == col(BatchItem.batch_id))
        .join(ProblemRow, col(ProblemRow.id) == col(BatchItem.problem_id))
        .join(Run, col(Run.id) == col(BatchItem.run_id))
        .where(
            col(BatchItem.model).in_(models),
            col(Batch.project_id) == project_id,
            col(Batch.judge_model) == judge_model,
            col(Batch.max_rounds) == max_rounds,
            col(BatchItem.cache_hits) == 0,
            col(BatchItem.status).in_(FINAL),
        )
        .order_by(col(BatchItem.finished_at).desc())
    )
    try:
        rows = (await session.execute(query)).all()
    except (OperationalError, ProgrammingError, DBAPIError):  # no tables yet: nothing measured
        return {}
    found: dict[Kind, list[tuple[Problem, Measured]]] = {}
    for problem, item, run in rows:  # newest first
        kind = found.setdefault((item.model, item.arm), [])
        if len(kind) < SIMILAR_LIMIT:
            kind.append((Problem(question=problem.question, solution=problem.solution), _spent(item, run)))
    return found


def _spent(item: BatchItem, run: Run) -> Measured:
    facts = RunFacts.of(run)
    calls = facts.llm_calls if facts is not None else 0
    return Measured(calls, item.input_tokens, item.cached_input_tokens, item.output_tokens, item.cost_usd)
