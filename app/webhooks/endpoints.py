"""/v1/webhook-endpoints: receivers a project registers. Every run of the project that ends is
POSTed to each of them (besides a run's own webhook_url), signed with the endpoint's own secret."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query, Response, status
from pydantic import AnyHttpUrl, BaseModel, BeforeValidator, ConfigDict, Field
from sqlalchemy import update
from sqlmodel import col, select

from app import audit
from app.deps import AppSettings, ReadKey, Session, WriteKey
from app.errors import NotFound, Unprocessable, problem_responses
from app.models import WebhookDelivery, WebhookEndpoint, new_webhook_secret, utcnow
from app.text import storable_if_text, unstorable_reason
from app.webhooks.deliveries import Cursor, Limit, StatusFilter, delivery_log, delivery_public
from app.webhooks.deps import Outbox
from app.webhooks.outbox import (
    ENDPOINT_DELETED,
    DeliveryStatus,
    WebhookTargetRefused,
    check_target,
    enqueue_test,
    previous_until,
    redact,
    refuse_credentials,
)
from app.webhooks.schemas import DeliveryLog, DeliveryPublic

router = APIRouter(prefix="/v1/webhook-endpoints", tags=["webhooks"])
EndpointId = Annotated[str, Path(description="The webhook endpoint's id")]
KeepPrevious = Annotated[
    float | None,
    Query(
        ge=0,
        le=30 * 86400,
        description="Seconds the replaced secret keeps signing beside the new one (default "
        "THINKLOOP_WEBHOOK_ROTATION_S); 0 ends it at once (a leaked secret)",
    ),
]
_ERRORS = problem_responses({404: "No such endpoint", 422: "Invalid request, or a target refused"})


class EndpointCreate(BaseModel):
    """A receiver to register."""

    model_config = ConfigDict(extra="forbid", strict=True)

    url: AnyHttpUrl = Field(
        description="Where to POST events (it must pass THINKLOOP_WEBHOOK_ALLOW_HOSTS, and hold no "
        "password or token: no user:password@, no query parameter named like a secret)",
        examples=["https://tutor.example/hooks/thinkloop"],
    )
    description: Annotated[str, BeforeValidator(storable_if_text)] = Field(
        default="", max_length=200, description="What it is, for people", examples=["north school's grader"]
    )


class EndpointPublic(BaseModel):
    """A registered receiver."""

    id: str = Field(description="Endpoint id", examples=["9c1d2e3f4a5b4c6d8e7f9a0b1c2d3e4f"])
    url: str = Field(
        description="Its URL without user, password, query or fragment",
        examples=["https://tutor.example/hooks/thinkloop"],
    )
    description: str = Field(description="What it is, for people", examples=["north school's grader"])
    created_at: datetime = Field(
        description="When it was registered (UTC)", examples=["2026-11-23T09:00:00Z"]
    )


class EndpointCreated(EndpointPublic):
    """A receiver just registered or given a new secret, with the secret its events are signed with
    (shown this once)."""

    secret: str = Field(
        description="Its Standard Webhooks signing secret (whsec_ and the base64 of the HMAC-SHA256 key "
        "of the webhook-signature header): keep it",
        examples=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    )
    previous_until: datetime | None = Field(
        default=None,
        description="After a rotation: until when the replaced secret still signs beside this one (a "
        "second webhook-signature value); null if it does not",
        examples=["2026-11-24T09:00:00Z"],
    )


class EndpointList(BaseModel):
    """The project's endpoints, oldest first."""

    items: list[EndpointPublic] = Field(
        description="The project's endpoints, oldest first",
        examples=[
            [
                {
                    "id": "9c1d2e3f4a5b4c6d8e7f9a0b1c2d3e4f",
                    "url": "https://tutor.example/hooks/thinkloop",
                    "description": "north school's grader",
                    "created_at": "2026-11-23T09:00:00Z",
                }
            ]
        ],
    )


def _public(endpoint: WebhookEndpoint) -> EndpointPublic:
    return EndpointPublic(
        id=endpoint.id,
        url=redact(endpoint.url),
        description=endpoint.description,
        created_at=endpoint.created_at,
    )


async def _get(session: Session, endpoint_id: str, project_id: str) -> WebhookEndpoint:
    # No id holds NUL (PostgreSQL would refuse to look): unknown on every database alike.
    endpoint = None if unstorable_reason(endpoint_id) else await session.get(WebhookEndpoint, endpoint_id)
    if endpoint is None or endpoint.project_id != project_id:
        raise NotFound(f"There is no webhook endpoint {endpoint_id}.")
    return endpoint


@router.post("", status_code=status.HTTP_201_CREATED, response_model=EndpointCreated, responses=_ERRORS)
async def create_webhook_endpoint(
    body: EndpointCreate, session: Session, key: WriteKey, settings: AppSettings, response: Response
) -> EndpointCreated:
    """Register a receiver for every run of the project; its secret is in this answer only."""
    try:
        refuse_credentials(str(body.url))
        await check_target(str(body.url), settings.webhook_allow_hosts)
    except WebhookTargetRefused as exc:
        raise Unprocessable(f"url refused: {exc}.") from exc
    endpoint = WebhookEndpoint(
        project_id=key.project_id,
        url=str(body.url),
        description=body.description,
        secret=new_webhook_secret(),
    )
    session.add(endpoint)
    await session.flush()
    audit.record(session, key, "created", "webhook-endpoint", endpoint.id, key.project_id)
    await session.commit()
    response.headers["Location"] = f"/v1/webhook-endpoints/{endpoint.id}"
    return EndpointCreated(**_public(endpoint).model_dump(), secret=endpoint.secret)


@router.post("/{endpoint_id}/rotate-secret", response_model=EndpointCreated, responses=_ERRORS)
async def rotate_webhook_endpoint_secret(
    endpoint_id: EndpointId,
    session: Session,
    key: WriteKey,
    settings: AppSettings,
    keep_previous_s: KeepPrevious = None,
) -> EndpointCreated:
    """Give the endpoint a new secret (in this answer only): attempts from now on are signed with it,
    and with the old one too until ``previous_until``, so the receiver can switch without a gap."""
    endpoint = await _get(session, endpoint_id, key.project_id)
    endpoint.previous_secret = endpoint.secret
    endpoint.previous_secret_until = previous_until(settings, keep_previous_s, utcnow())
    endpoint.secret = new_webhook_secret()
    audit.record(session, key, "rotated-secret", "webhook-endpoint", endpoint.id, key.project_id)
    await session.commit()
    until = endpoint.previous_secret_until
    return EndpointCreated(**_public(endpoint).model_dump(), secret=endpoint.secret, previous_until=until)


@router.get("", response_model=EndpointList, responses=_ERRORS)
async def list_webhook_endpoints(session: Session, key: ReadKey) -> EndpointList:
    """The project's endpoints (never their secrets)."""
    query = (
        select(WebhookEndpoint)
        .where(col(WebhookEndpoint.project_id) == key.project_id)
        .order_by(col(WebhookEndpoint.created_at))
    )
    return EndpointList(items=[_public(e) for e in (await session.execute(query)).scalars().all()])


@router.get("/{endpoint_id}", response_model=EndpointPublic, responses=_ERRORS)
async def get_webhook_endpoint(endpoint_id: EndpointId, session: Session, key: ReadKey) -> EndpointPublic:
    """One endpoint of the project."""
    return _public(await _get(session, endpoint_id, key.project_id))


@router.delete(
    "/{endpoint_id}", status_code=status.HTTP_204_NO_CONTENT, response_class=Response, responses=_ERRORS
)
async def delete_webhook_endpoint(endpoint_id: EndpointId, session: Session, key: WriteKey) -> Response:
    """Stop sending to an endpoint: it is removed, and its deliveries not sent yet fail; sent ones
    stay in the runs' delivery logs."""
    await _get(session, endpoint_id, key.project_id)
    mine = col(WebhookDelivery.endpoint_id) == endpoint_id
    pending = col(WebhookDelivery.status) == DeliveryStatus.PENDING
    await session.execute(
        update(WebhookDelivery)
        .where(mine, pending)
        .values(status=DeliveryStatus.FAILED, last_error=ENDPOINT_DELETED)
    )
    await session.execute(update(WebhookDelivery).where(mine).values(endpoint_id=None))
    endpoint = await session.get(WebhookEndpoint, endpoint_id)
    await session.delete(endpoint)
    audit.record(session, key, "deleted", "webhook-endpoint", endpoint_id, key.project_id)
    await session.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/{endpoint_id}/test",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=DeliveryPublic,
    responses=_ERRORS,
)
async def ping_webhook_endpoint(
    endpoint_id: EndpointId, session: Session, key: WriteKey, outbox: Outbox
) -> DeliveryPublic:
    """Send a `ping` event (signed like any other) to see that the endpoint receives and verifies."""
    delivery = enqueue_test(session, await _get(session, endpoint_id, key.project_id))
    await session.commit()
    outbox.wake()
    return delivery_public(delivery)


@router.get("/{endpoint_id}/deliveries", response_model=DeliveryLog, responses=_ERRORS)
async def list_endpoint_deliveries(
    endpoint_id: EndpointId,
    session: Session,
    key: ReadKey,
    status: StatusFilter = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> DeliveryLog:
    """What was sent to the endpoint, newest first (in one state, if given)."""
    await _get(session, endpoint_id, key.project_id)
    which = col(WebhookDelivery.endpoint_id) == endpoint_id
    return await delivery_log(session, which, status, limit, cursor)
