"""Database access for datasets: a parsed file stored as problems (shared by content) and rows, and
the flaw labels a report groups them by."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import delete, insert
from sqlalchemy import select as sa_select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.datasets.parsing import DatasetRow, ParsedDataset, listed
from app.db import dialect_insert
from app.models import DEFAULT_PROJECT, Batch, Dataset, DatasetItem, ProblemRow, new_id, utcnow


async def store_dataset(
    session: AsyncSession,
    name: str,
    parsed: ParsedDataset,
    chunk: int = 500,
    project_id: str = DEFAULT_PROJECT,
) -> Dataset:
    """A project's dataset of the parsed file's valid rows (problems shared across datasets by
    content; each row keeps its own metadata), keeping the duplicates folded and the warnings.

    Rows go in chunks of bulk inserts: a 10,000-row file is about 60 statements, not 20,000, and no
    ORM object is kept per row.
    """
    dataset = Dataset(
        project_id=project_id,
        name=name,
        format=parsed.format,
        n_problems=len(parsed.rows),
        duplicates=listed(parsed.duplicates),
        warnings=listed(parsed.warnings),
    )
    session.add(dataset)
    await session.flush()
    for start in range(0, len(parsed.rows), chunk):
        rows = parsed.rows[start : start + chunk]
        ids = await _problem_ids(session, rows)
        items = [
            {
                "dataset_id": dataset.id,
                "problem_id": ids[row.content_hash],
                "position": start + offset,
                "external_id": row.external_id,
                "meta": dict(row.metadata) or None,
            }
            for offset, row in enumerate(rows)
        ]
        await session.execute(insert(DatasetItem), items)
    return dataset


async def _problem_ids(session: AsyncSession, rows: Sequence[DatasetRow]) -> dict[str, str]:
    """The stored problem id of each row's content, storing the new ones (rows are distinct)."""
    query = sa_select(col(ProblemRow.content_hash), col(ProblemRow.id))
    wanted = [row.content_hash for row in rows]
    ids: dict[str, str] = dict(
        (await session.execute(query.where(col(ProblemRow.content_hash).in_(wanted)))).all()
    )
    new = [
        {
            "id": new_id(),
            "content_hash": row.content_hash,
            "question": row.question,
            "solution": row.solution,
            "created_at": utcnow(),
        }
        for row in rows
        if row.content_hash not in ids
    ]
    if new:
        # Another upload may store the same problem meanwhile: skip it, then read its id.
        dialect = dialect_insert(session)
        await session.execute(
            dialect(ProblemRow).on_conflict_do_nothing(index_elements=["content_hash"]), new
        )
        missing = [problem["content_hash"] for problem in new]
        ids |= dict((await session.execute(query.where(col(ProblemRow.content_hash).in_(missing)))).all())
    return ids


class DatasetInUse(Exception):
    """Batches still evaluate the dataset: they go first."""


async def delete_dataset(session: AsyncSession, dataset_id: str) -> set[str]:
    """Delete a dataset and its rows (with their metadata); returns its problems' ids, for
    ``delete_orphan_problems``. DatasetInUse while a batch refers to it."""
    query = select(col(Batch.id)).where(col(Batch.dataset_id) == dataset_id)
    batches = list((await session.execute(query.limit(5))).scalars().all())
    if batches:
        raise DatasetInUse(", ".join(batches))
    rows = select(col(DatasetItem.problem_id)).where(col(DatasetItem.dataset_id) == dataset_id)
    problems = set((await session.execute(rows)).scalars().all())
    await session.execute(delete(DatasetItem).where(col(DatasetItem.dataset_id) == dataset_id))
    await session.execute(delete(Dataset).where(col(Dataset.id) == dataset_id))
    return problems


async def row_meta(session: AsyncSession, dataset_id: str, problem_id: str) -> dict[str, Any] | None:
    """The metadata of a problem's row in a dataset (what a batch item's run shows)."""
    query = sa_select(col(DatasetItem.meta)).where(
        col(DatasetItem.dataset_id) == dataset_id, col(DatasetItem.problem_id) == problem_id
    )
    meta: dict[str, Any] | None = (await session.execute(query)).scalar()
    return meta


async def flaw_labels(session: AsyncSession, dataset_id: str) -> dict[str, str]:
    """The labelled flaw (its row's metadata ``flaw``) of each problem of a dataset that has one."""
    query = sa_select(col(DatasetItem.problem_id), col(DatasetItem.meta)).where(
        col(DatasetItem.dataset_id) == dataset_id
    )
    labels = {problem: flaw_label(meta or {}) for problem, meta in (await session.execute(query)).all()}
    return {problem: label for problem, label in labels.items() if label}


async def external_ids(session: AsyncSession, dataset_id: str, problem_ids: set[str]) -> dict[str, str]:
    """The dataset's own id of each of these problems whose row has one (e.g. fp-01)."""
    if not problem_ids:
        return {}
    query = sa_select(col(DatasetItem.problem_id), col(DatasetItem.external_id)).where(
        col(DatasetItem.dataset_id) == dataset_id, col(DatasetItem.problem_id).in_(sorted(problem_ids))
    )
    return {problem: name for problem, name in (await session.execute(query)).all() if name}


def flaw_label(meta: Mapping[str, Any]) -> str | None:
    """The flaw a problem's metadata names, if any."""
    value = meta.get("flaw")
    return str(value).strip() or None if value is not None else None
