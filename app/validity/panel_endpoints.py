"""GET /v1/panels: every panel identity measured, with its validity records and the one cited."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from sqlalchemy import and_, func, or_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.deps import ReadKey, Session
from app.errors import problem_responses
from app.models import Project, RepairRecord, ValidityRecord
from app.pagination import decode_cursor, encode_cursor
from app.validity.panel_schemas import PanelPage, PanelPublic, RecordPublic, RepairPublic
from app.validity.selection import choose, citable, pins_of

router = APIRouter(prefix="/v1/panels", tags=["judges"])
_ERRORS = problem_responses({400: "A cursor that is not one of ours", 422: "A limit out of range"})


@dataclass
class _Position:
    """A panel's place in the list: its newest record's time, then its id."""

    id: str
    created_at: datetime


def _visible(project_id: str) -> Any:
    """Records a key of ``project_id`` sees: those its runs may cite (its own, and published ones)."""
    return citable(project_id)


async def _panel_page(
    session: AsyncSession, project_id: str, limit: int, cursor: str | None
) -> tuple[list[_Position], str | None]:
    """Panel ids by their newest record, newest first (keyset on (newest, id))."""
    newest = func.max(col(ValidityRecord.measured_at)).label("newest")
    panel = col(ValidityRecord.panel_id)
    query = select(panel, newest).where(_visible(project_id)).group_by(panel)
    if cursor:
        when, last_id = decode_cursor(cursor)
        query = query.having(or_(newest < when, and_(newest == when, panel < last_id)))
    query = query.order_by(newest.desc(), panel.desc()).limit(limit + 1)
    rows = [_Position(row[0], row[1]) for row in (await session.execute(query)).all()]
    page = rows[:limit]
    return page, encode_cursor(page[-1]) if len(rows) > limit else None


async def _records(session: AsyncSession, project_id: str, panel_ids: Sequence[str]) -> list[ValidityRecord]:
    query = (
        select(ValidityRecord)
        .where(_visible(project_id), col(ValidityRecord.panel_id).in_(panel_ids))
        .order_by(col(ValidityRecord.measured_at).desc(), col(ValidityRecord.id).desc())
    )
    return list((await session.execute(query)).scalars().all())


async def _repairs(
    session: AsyncSession, project_id: str, panel_ids: Sequence[str]
) -> dict[str, list[RepairPublic]]:
    """Panel id → the project's latest repair record of each reviser it judged, by reviser name."""
    query = (
        select(RepairRecord)
        .where(col(RepairRecord.project_id) == project_id, col(RepairRecord.panel_id).in_(panel_ids))
        .order_by(col(RepairRecord.measured_at).desc(), col(RepairRecord.id).desc())
    )
    latest: dict[tuple[str, str], RepairRecord] = {}
    for row in (await session.execute(query)).scalars():
        latest.setdefault((row.panel_id, row.reviser), row)
    found: dict[str, list[RepairPublic]] = {}
    for (panel_id, _), row in sorted(latest.items()):
        found.setdefault(panel_id, []).append(RepairPublic.of(row))
    return found


async def _teachers(request: Request, session: AsyncSession, project_id: str, judge_model: str) -> Any:
    """The judge model's agreement with the project's teachers (``app.reviews.agreement``, handed in
    by ``app.main`` as ``app.state.teacher_agreement``: app.reviews depends on this package); None
    when no run of it was decided."""
    project = await session.get(Project, project_id)
    found = await request.app.state.teacher_agreement(session, project, judge_model) if project else None
    return found if found and found["decided"] else None


@router.get("", response_model=PanelPage, responses=_ERRORS)
async def list_panels(
    request: Request,
    session: Session,
    key: ReadKey,
    limit: Annotated[int, Query(ge=1, le=100, description="At most this many panels")] = 20,
    records: Annotated[int, Query(ge=1, le=100, description="At most this many records per panel")] = 10,
    cursor: Annotated[
        str | None, Query(max_length=500, description="next_cursor of the previous page")
    ] = None,
) -> PanelPage:
    """Every panel identity with validity records (saved by ``thinkloop judges validate --save`` or
    POST /v1/judges/validate with ``save: true``), the most recently measured first: its parts and
    its records, newest first, and the record its runs cite (``cited``; ``pinned`` when the project
    pinned it). A key sees the records its project's runs may cite: its own project's, and those an
    operator published for every project. Every record saved stays listed, cited or not. ``teachers``:
    how the panel's judge model agrees with the project's teachers' review decisions. ``repairs``: the
    project's latest repair figures judged by the panel, per reviser (``thinkloop judges repair --save``)."""
    positions, next_cursor = await _panel_page(session, key.project_id, limit, cursor)
    rows = await _records(session, key.project_id, [p.id for p in positions])
    pins = await pins_of(session, key.project_id)
    cited = choose(rows, pins)
    repairs = await _repairs(session, key.project_id, [p.id for p in positions])
    items = []
    agreement: dict[str, Any] = {}
    for position in positions:
        mine = [row for row in rows if row.panel_id == position.id]
        record = cited[position.id]
        if record.judge_model not in agreement:
            agreement[record.judge_model] = await _teachers(
                request, session, key.project_id, record.judge_model
            )
        items.append(
            PanelPublic(
                id=position.id,
                identity=mine[0].identity,
                cited=record.id,
                pinned=pins.get(position.id) == record.id,
                records=[RecordPublic.of(row) for row in mine[:records]],
                teachers=agreement[record.judge_model],
                repairs=repairs.get(position.id, []),
            )
        )
    return PanelPage(items=items, next_cursor=next_cursor)
