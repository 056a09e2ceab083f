"""/v1/panels/records: one validity record, a project's pin of the record its runs cite, and an
operator's publication of a record for every project."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response, status
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit
from app.deps import OperatorKey, ReadKey, Session, ValidateKey
from app.errors import NotFound, problem_responses
from app.models import ApiKey, ValidityRecord
from app.validity import selection
from app.validity.panel_schemas import PinPublic, RecordPublic, RecordShown

router = APIRouter(prefix="/v1/panels/records", tags=["judges"])
RecordId = Annotated[str, Path(max_length=64, description="The record's id (a warrant's record_id)")]
_ERRORS = problem_responses(
    {
        403: "The key lacks the scope this needs",
        404: "No such record, or another project's that was not published",
        422: "A record id longer than 64 characters",
    }
)
TARGET = "validity-record"  # the audit log's target type


async def _find(session: AsyncSession, record_id: str, project_id: str | None) -> ValidityRecord:
    """The record (one ``project_id`` may cite, when given); 404 otherwise, for an unknown record and
    another project's alike, so ids reveal nothing across projects."""
    try:
        return await selection.find_record(session, record_id, project_id)
    except selection.RecordNotFound as exc:
        raise NotFound(f"There is no validity record {record_id}.") from exc


@router.get("/{record_id}", response_model=RecordShown, responses=_ERRORS)
async def show_record(record_id: RecordId, session: Session, key: ReadKey) -> RecordShown:
    """One validity record the key's project may cite, its panel's identity, and whether the
    project's runs cite it (and pinned it)."""
    record = await _find(session, record_id, key.project_id)
    cited, pinned = (await selection.cited_records(session, key.project_id, [record.panel_id]))[
        record.panel_id
    ]
    return RecordShown(
        **RecordPublic.of(record).model_dump(),
        identity=record.identity,
        cited=cited.id == record.id,
        pinned=pinned and cited.id == record.id,
    )


@router.post("/{record_id}/pin", response_model=PinPublic, responses=_ERRORS)
async def pin_record(record_id: RecordId, session: Session, key: ValidateKey) -> PinPublic:
    """Make this record the one the key's project's accepted runs cite for its panel identity, over
    the default (the record of the most held-out flawed versions), until unpinned. The project's
    own records and published ones may be pinned; 404 for any other. A **validate** or **admin**
    key's; audited."""
    await _find(session, record_id, key.project_id)
    pin = await selection.pin(session, key.project_id, record_id)
    _audit(session, key, "pinned", record_id, key.project_id, pin.panel_id)
    await session.commit()
    return PinPublic.model_validate(pin.model_dump())


@router.delete("/{record_id}/pin", status_code=status.HTTP_204_NO_CONTENT, responses=_ERRORS)
async def unpin_record(record_id: RecordId, session: Session, key: ValidateKey) -> Response:
    """Lift the project's pin of this record: its runs cite by the default rule again; 404 when
    the project has not pinned it. A **validate** or **admin** key's; audited."""
    try:
        pin = await selection.unpin(session, key.project_id, record_id)
    except selection.RecordNotFound as exc:
        raise NotFound(f"This project has not pinned validity record {record_id}.") from exc
    _audit(session, key, "unpinned", record_id, key.project_id, pin.panel_id)
    await session.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{record_id}/publish", response_model=RecordPublic, responses=_ERRORS)
async def publish_record(record_id: RecordId, session: Session, key: OperatorKey) -> RecordPublic:
    """Publish a record of any project for every project's runs to cite (by the same rule as their
    own records). An **operator** key's; audited in the record's project's log."""
    return await _publication(session, key, record_id, published=True)


@router.delete("/{record_id}/publish", response_model=RecordPublic, responses=_ERRORS)
async def withdraw_record(record_id: RecordId, session: Session, key: OperatorKey) -> RecordPublic:
    """Withdraw a publication: only the record's own project's runs cite it again. An **operator**
    key's; audited in the record's project's log."""
    return await _publication(session, key, record_id, published=False)


async def _publication(
    session: AsyncSession, key: ApiKey, record_id: str, *, published: bool
) -> RecordPublic:
    record = await _find(session, record_id, None)
    await selection.publish(session, record_id, published)
    action = "published" if published else "unpublished"
    _audit(session, key, action, record_id, record.project_id, record.panel_id)
    await session.commit()
    await session.refresh(record)
    return RecordPublic.of(record)


def _audit(session: AsyncSession, key: ApiKey, action: str, record_id: str, project: str, panel: str) -> None:
    audit.record(session, key, action, TARGET, record_id, project, {"panel_id": panel})
