"""The answer keys a batch's items carry: a dataset row's corrected version, in its metadata.

A row of a dataset carries an answer key when its metadata holds ``corrected_solution`` (the sound
version's solution), optionally ``corrected_question`` (the sound version's question; the row's
own question when absent) and ``answer`` (the correct final answer as written, read before the
corrected solution's last number: :class:`agents.labelled.repair.RepairKey`). A batch over such
rows reports a repair rate beside RoundsToPass (``app.reporting.repair_column``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select as sa_select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from agents.labelled.repair import RepairKey
from agents.schemas import Problem
from app.models import Batch, BatchItem, DatasetItem, ProblemRow


async def answer_keys(session: AsyncSession, items: Iterable[BatchItem]) -> dict[str, RepairKey]:
    """The answer key of each problem of the items' batches whose dataset row carries one, by
    problem id (one query; none when no item is given)."""
    batch_ids = sorted({item.batch_id for item in items})
    if not batch_ids:
        return {}
    query = (
        sa_select(
            col(DatasetItem.problem_id),
            col(DatasetItem.meta),
            col(ProblemRow.question),
            col(ProblemRow.solution),
        )
        .join(Batch, col(Batch.dataset_id) == col(DatasetItem.dataset_id))
        .join(ProblemRow, col(ProblemRow.id) == col(DatasetItem.problem_id))
        .where(col(Batch.id).in_(batch_ids))
    )
    keys: dict[str, RepairKey] = {}
    for problem_id, meta, question, solution in (await session.execute(query)).all():
        key = key_of(Problem(question=question, solution=solution), meta or {})
        if key is not None:
            keys[problem_id] = key
    return keys


def key_of(original: Problem, meta: Mapping[str, Any]) -> RepairKey | None:
    """The key a row's metadata gives its problem (None: no corrected solution, or no answer that
    can be read, or a corrected version no problem could be)."""
    solution = str(meta.get("corrected_solution") or "").strip()
    if not solution:
        return None
    question = str(meta.get("corrected_question") or "").strip() or original.question
    try:
        corrected = Problem(question=question, solution=solution)
    except ValidationError:
        return None
    answer = meta.get("answer")
    return RepairKey.of(original, corrected, str(answer) if answer else None)
