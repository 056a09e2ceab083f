"""/v1/runs/{id}/deliveries: a run's webhook delivery log, and sending a delivery again."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, status
from sqlalchemy import ColumnElement
from sqlmodel import col, select

from app.deps import ReadKey, Session, WriteKey
from app.errors import NotFound, problem_responses
from app.models import WebhookDelivery
from app.runs import repository as repo
from app.runs.deps import Outbox
from app.runs.schemas import (
    DeliveryLog,
    DeliveryPublic,
    PingWebhook,
    RunFailedWebhook,
    RunFinishedWebhook,
)
from app.webhooks import DeliveryStatus, redact, redeliver

router = APIRouter(prefix="/v1/runs", tags=["runs"])
DeliveryId = Annotated[str, Path(description="The delivery's id, from the run's delivery log")]
RunId = Annotated[str, Path(description="The run's id")]
_ERRORS = problem_responses({404: "No such run, or no such delivery of the run"})


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
    if await repo.project_run(session, run_id, project_id) is None:
        raise NotFound(f"There is no run {run_id}.")


@router.get("/{run_id}/deliveries", response_model=DeliveryLog, responses=_ERRORS)
async def list_deliveries(run_id: RunId, session: Session, key: ReadKey) -> DeliveryLog:
    """The run's webhook deliveries, newest first: status, attempts, next try, last answer or error."""
    await _run_exists(session, run_id, key.project_id)
    return await delivery_log(session, col(WebhookDelivery.run_id) == run_id)


async def delivery_log(session: Session, which: ColumnElement[bool]) -> DeliveryLog:
    """The deliveries ``which`` selects (a run's, an endpoint's), newest first."""
    query = (
        select(WebhookDelivery)
        .where(which)
        .order_by(col(WebhookDelivery.created_at).desc(), col(WebhookDelivery.id).desc())
    )
    rows = (await session.execute(query)).scalars().all()
    return DeliveryLog(items=[delivery_public(row) for row in rows])


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
    original = await session.get(WebhookDelivery, delivery_id)
    if original is None or original.run_id != run_id:
        raise NotFound(f"The run {run_id} has no delivery {delivery_id}.")
    again = redeliver(session, original)
    await session.commit()  # before waking the sender, so it finds the row
    outbox.wake()
    return delivery_public(again)


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
