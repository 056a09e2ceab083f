"""Which validity record a run cites, and which records a project may cite at all.

A project's runs cite records of their own project, or records an operator published for every
project: a key of one project can never warrant another project's acceptances (the default
project's included). Of the records of one panel identity, a run cites by default the one of the
most held-out flawed versions, and among equals the most recent: a later bench on fewer problems
(a single item, a cherry-picked few) never displaces a larger one. A project may pin another
record of the identity; the pin holds until it is lifted or the record stops being citable. Every
record stays stored and listed, cited or not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from sqlalchemy import ColumnElement, or_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.models import ValidityPin, ValidityRecord, utcnow


class RecordNotFound(LookupError):
    """No such record, or one the project may not cite (another project's, unpublished)."""


def citable(project_id: str) -> ColumnElement[bool]:
    """The records ``project_id``'s runs may cite: its own, and those published for every project."""
    return or_(
        col(ValidityRecord.project_id) == project_id,
        col(ValidityRecord.published_at).is_not(None),
    )


def held_out_flawed(record: ValidityRecord) -> int:
    """The held-out flawed versions the record measured (a record of every split, saved before
    records were held-out only, has none)."""
    return record.n_flawed if record.split == "heldout" else 0


def rank(record: ValidityRecord) -> tuple[int, datetime, str]:
    """The default order of a panel's records: the most held-out flawed versions, then the newest."""
    return held_out_flawed(record), record.measured_at, record.id


def choose(records: Iterable[ValidityRecord], pins: Mapping[str, str]) -> dict[str, ValidityRecord]:
    """Panel id → the record its runs cite: the pinned record (``pins``: panel id → record id) when
    it is among ``records``, else the first by :func:`rank`."""
    grouped: dict[str, list[ValidityRecord]] = {}
    for record in records:
        grouped.setdefault(record.panel_id, []).append(record)
    chosen = {}
    for panel_id, rows in grouped.items():
        pinned = [row for row in rows if row.id == pins.get(panel_id)]
        chosen[panel_id] = pinned[0] if pinned else max(rows, key=rank)
    return chosen


async def pins_of(session: AsyncSession, project_id: str) -> dict[str, str]:
    """The project's pins: panel id → record id."""
    query = select(ValidityPin).where(col(ValidityPin.project_id) == project_id)
    return {pin.panel_id: pin.record_id for pin in (await session.execute(query)).scalars()}


async def citable_records(
    session: AsyncSession,
    project_id: str,
    *,
    judge_model: str | None = None,
    panel_ids: Iterable[str] | None = None,
) -> list[ValidityRecord]:
    """Every record ``project_id`` may cite (of one judge model, or of some panels), newest first."""
    query = select(ValidityRecord).where(citable(project_id))
    if judge_model is not None:
        query = query.where(col(ValidityRecord.judge_model) == judge_model)
    if panel_ids is not None:
        query = query.where(col(ValidityRecord.panel_id).in_(list(panel_ids)))
    query = query.order_by(col(ValidityRecord.measured_at).desc(), col(ValidityRecord.id).desc())
    return list((await session.execute(query)).scalars().all())


async def cited_records(
    session: AsyncSession, project_id: str, panel_ids: Iterable[str]
) -> dict[str, tuple[ValidityRecord, bool]]:
    """Panel id → ``(record cited, pinned)`` for ``project_id``'s runs, of each of ``panel_ids``."""
    panels = list(panel_ids)
    pins = await pins_of(session, project_id)
    chosen = choose(await citable_records(session, project_id, panel_ids=panels), pins)
    return {panel: (record, pins.get(panel) == record.id) for panel, record in chosen.items()}


async def find_record(session: AsyncSession, record_id: str, project_id: str | None = None) -> ValidityRecord:
    """The record ``record_id`` (that ``project_id`` may cite, when given); RecordNotFound if none."""
    record = await session.get(ValidityRecord, record_id) if record_id.isalnum() else None
    if record is None or (project_id is not None and not _citable_by(record, project_id)):
        where = f" that project {project_id!r} may cite" if project_id is not None else ""
        raise RecordNotFound(f"there is no validity record {record_id!r}{where}")
    return record


def _citable_by(record: ValidityRecord, project_id: str) -> bool:
    return record.project_id == project_id or record.published_at is not None


async def pin(session: AsyncSession, project_id: str, record_id: str) -> ValidityPin:
    """Make ``record_id`` the record ``project_id``'s runs cite for its panel identity (in place of
    the project's earlier pin of that identity); RecordNotFound unless the project may cite it."""
    record = await find_record(session, record_id, project_id)
    row = await session.get(ValidityPin, (project_id, record.panel_id))
    if row is None:
        row = ValidityPin(project_id=project_id, panel_id=record.panel_id, record_id=record.id)
        session.add(row)
    else:
        row.record_id, row.pinned_at = record.id, utcnow()
    await session.flush()
    return row


async def unpin(session: AsyncSession, project_id: str, record_id: str) -> ValidityPin:
    """Lift the project's pin of ``record_id`` (its runs cite by the default rule again);
    RecordNotFound when the project has not pinned it."""
    record = await find_record(session, record_id, project_id)
    row = await session.get(ValidityPin, (project_id, record.panel_id))
    if row is None or row.record_id != record.id:
        raise RecordNotFound(f"project {project_id!r} has not pinned validity record {record_id!r}")
    await session.delete(row)
    await session.flush()
    return row


async def publish(session: AsyncSession, record_id: str, published: bool = True) -> ValidityRecord:
    """Publish ``record_id`` for every project's runs to cite (``published`` False: withdraw it, so
    only its own project's runs cite it); RecordNotFound if there is none."""
    record = await find_record(session, record_id)
    if published and record.published_at is None:
        record.published_at = utcnow()
    elif not published:
        record.published_at = None
    await session.flush()
    return record
