"""Webhook delivery logs — a run's (/v1/runs/{id}/deliveries) and a project's
(/v1/webhook-deliveries) — filtered by status and paged by keyset, and sending deliveries again: one
by id (a new delivery), or every failed one at once (back into the outbox, same ids)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status
from sqlalchemy import ColumnElement, or_, update
from sqlmodel import col, select

from app.db import project_row
from app.deps import ReadKey, Session, WriteKey
from app.errors import NotFound, Unprocessable, problem_responses
from app.models import Run, WebhookDelivery, utcnow
from app.pagination import created_between, page
from app.pagination_http import CreatedAfter, CreatedBefore
from app.text import unstorable_reason
from app.webhooks.deps import Outbox
from app.webhooks.outbox import ENDPOINT_DELETED, DeliveryStatus, redact, redeliver
from app.webhooks.schemas import (
    DeliveryLog,
    DeliveryPublic,
    PingWebhook,
    Redelivered,
    RunFailedWebhook,
    RunFinishedWebhook,
)

router = APIRouter(prefix="/v1/runs", tags=["runs"])
project_router = APIRouter(prefix="/v1/webhook-deliveries", tags=["webhooks"])
DeliveryId = Annotated[str, Path(description="The delivery's id, from the run's delivery log")]
RunId = Annotated[str, Path(description="The run's id")]
_ERRORS = problem_responses(
    {
        400: "A cursor that is not one of ours",
        404: "No such run, or no such delivery of the run",
        422: "Invalid filter",
    }
)
StatusFilter = Annotated[
    DeliveryStatus | None,
    Query(description="Only deliveries in this state: pending, delivered or failed"),
]
Limit = Annotated[int, Query(ge=1, le=200, description="At most this many deliveries")]
Cursor = Annotated[str | None, Query(max_length=500, description="next_cursor of the previous page")]
RedeliverStatus = Annotated[
    DeliveryStatus,
    Query(
        description="Which deliveries to send again: only `failed` (a pending one is sent anyway; "
        "send a delivered one again by its id)"
    ),
]
RedeliverLimit = Annotated[
    int, Query(ge=1, le=1000, description="At most this many (the oldest first); call again for more")
]


def delivery_public(delivery: WebhookDelivery) -> DeliveryPublic:
    """A delivery as the API shows it: its URL redacted, its payload left out."""
    return DeliveryPublic(
        id=delivery.id,
        event=delivery.event,
        url=redact(delivery.url),
        status=DeliveryStatus(delivery.status),
        attempts=delivery.attempts,
        next_attempt_at=delivery.next_attempt_at,
        last_status_code=delivery.last_status_code,
        last_error=delivery.last_error,
        created_at=delivery.created_at,
        delivered_at=delivery.delivered_at,
    )


async def _run_exists(session: Session, run_id: str, project_id: str) -> None:
    """404 unless the project has this run (another project's run is unknown alike)."""
    if await project_row(session, Run, run_id, project_id) is None:
        raise NotFound(f"There is no run {run_id}.")


@router.get("/{run_id}/deliveries", response_model=DeliveryLog, responses=_ERRORS)
async def list_deliveries(
    run_id: RunId,
    session: Session,
    key: ReadKey,
    status: StatusFilter = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> DeliveryLog:
    """The run's webhook deliveries, newest first: status, attempts, next try, last answer or error."""
    await _run_exists(session, run_id, key.project_id)
    return await delivery_log(session, col(WebhookDelivery.run_id) == run_id, status, limit, cursor)


async def delivery_log(
    session: Session,
    which: ColumnElement[bool],
    state: DeliveryStatus | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> DeliveryLog:
    """A page of the deliveries ``which`` selects (a run's, an endpoint's, a project's), newest
    first, in ``state`` if given."""
    query = select(WebhookDelivery).where(which)
    if state is not None:
        query = query.where(col(WebhookDelivery.status) == state)
    rows, next_cursor = await page(session, query, WebhookDelivery, limit, cursor)
    return DeliveryLog(items=[delivery_public(row) for row in rows], next_cursor=next_cursor)


@router.post(
    "/{run_id}/deliveries/redeliver",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=Redelivered,
    responses=_ERRORS,
)
async def redeliver_run_deliveries(
    run_id: RunId,
    session: Session,
    key: WriteKey,
    outbox: Outbox,
    status: RedeliverStatus = DeliveryStatus.FAILED,
    limit: RedeliverLimit = 100,
) -> Redelivered:
    """Put the run's failed deliveries back in the outbox: each is sent again under its own id with a
    fresh retry schedule (calling twice does not send twice)."""
    await _run_exists(session, run_id, key.project_id)
    return await requeue(session, outbox, col(WebhookDelivery.run_id) == run_id, status, limit)


async def requeue(
    session: Session,
    outbox: Outbox,
    which: ColumnElement[bool],
    state: DeliveryStatus,
    limit: int,
    after: CreatedAfter = None,
    before: CreatedBefore = None,
) -> Redelivered:
    """Make the failed deliveries ``which`` selects pending again, due now, attempts from 0 (those of
    a deleted endpoint stay failed: nothing should reach it)."""
    if state != DeliveryStatus.FAILED:
        raise Unprocessable(
            f"Only failed deliveries are sent again in bulk, not {state.value} ones: a pending "
            "delivery is sent anyway, and a delivered one is sent again by its id "
            "(POST /v1/runs/{run_id}/deliveries/{delivery_id}/redeliver)."
        )
    table = WebhookDelivery
    query = select(table).where(which, col(table.status) == DeliveryStatus.FAILED)
    # NULL != x is unknown in SQL: a failure without an error text is kept by the second test
    query = query.where(or_(col(table.last_error) != ENDPOINT_DELETED, col(table.last_error).is_(None)))
    query = created_between(query, table, after, before)
    query = query.order_by(col(table.created_at), col(table.id)).limit(limit)
    rows = list((await session.execute(query)).scalars().all())
    if rows:
        await session.execute(
            update(table)
            .where(col(table.id).in_([row.id for row in rows]), col(table.status) == DeliveryStatus.FAILED)
            .values(status=DeliveryStatus.PENDING, attempts=0, next_attempt_at=utcnow(), delivered_at=None)
        )
    await session.commit()  # before waking the sender, so it finds the rows
    for row in rows:
        await session.refresh(row)
    outbox.wake()
    return Redelivered(count=len(rows), items=[delivery_public(row) for row in rows])


@router.post(
    "/{run_id}/deliveries/{delivery_id}/redeliver",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=DeliveryPublic,
    responses=_ERRORS,
)
async def redeliver_delivery(
    run_id: RunId, delivery_id: DeliveryId, session: Session, key: WriteKey, outbox: Outbox
) -> DeliveryPublic:
    """Send a delivery again: 202 with a new pending delivery (a new id) of the same event and payload."""
    await _run_exists(session, run_id, key.project_id)
    original = None if unstorable_reason(delivery_id) else await session.get(WebhookDelivery, delivery_id)
    if original is None or original.run_id != run_id:
        raise NotFound(f"The run {run_id} has no delivery {delivery_id}.")
    again = redeliver(session, original)
    await session.commit()  # before waking the sender, so it finds the row
    outbox.wake()
    return delivery_public(again)


@project_router.get("", response_model=DeliveryLog, responses=_ERRORS)
async def list_project_deliveries(
    session: Session,
    key: ReadKey,
    status: StatusFilter = None,
    created_after: CreatedAfter = None,
    created_before: CreatedBefore = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> DeliveryLog:
    """Every webhook delivery of the project (runs' own webhook_url and registered endpoints alike),
    newest first; ``status=failed`` lists what still needs attention."""
    which = col(WebhookDelivery.project_id) == key.project_id
    query = created_between(
        select(WebhookDelivery).where(which), WebhookDelivery, created_after, created_before
    )
    if status is not None:
        query = query.where(col(WebhookDelivery.status) == status)
    rows, next_cursor = await page(session, query, WebhookDelivery, limit, cursor)
    return DeliveryLog(items=[delivery_public(row) for row in rows], next_cursor=next_cursor)


@project_router.post(
    "/redeliver", status_code=status.HTTP_202_ACCEPTED, response_model=Redelivered, responses=_ERRORS
)
async def redeliver_project_deliveries(
    session: Session,
    key: WriteKey,
    outbox: Outbox,
    status: RedeliverStatus = DeliveryStatus.FAILED,
    created_after: CreatedAfter = None,
    created_before: CreatedBefore = None,
    limit: RedeliverLimit = 100,
) -> Redelivered:
    """Put the project's failed deliveries (created in the window, if given) back in the outbox, the
    oldest first: each is sent again under its own id with a fresh retry schedule. After a receiver's
    long outage, this sends what it missed."""
    which = col(WebhookDelivery.project_id) == key.project_id
    return await requeue(session, outbox, which, status, limit, created_after, created_before)


# The webhooks a run sends, for the OpenAPI document's `webhooks` section (nothing is served here).
webhooks = APIRouter()


@webhooks.post("run.finished", operation_id="run_finished")
def run_finished(body: RunFinishedWebhook) -> None:
    """POSTed to the run's webhook_url when it ends with a verdict or in error."""


@webhooks.post("run.failed", operation_id="run_failed")
def run_failed(body: RunFailedWebhook) -> None:
    """POSTed to the run's webhook_url when it is cancelled or fails inside thinkloop."""


@webhooks.post("ping", operation_id="ping")
def ping(body: PingWebhook) -> None:
    """POSTed to a registered endpoint by POST /v1/webhook-endpoints/{id}/test."""
