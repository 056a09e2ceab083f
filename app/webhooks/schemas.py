"""What the webhook endpoints answer (deliveries and their logs) and what a webhook POSTs (the
events about a run, and the ping), as the OpenAPI document shows them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.llm.calls import CallFailure
from app.grading import GradingProgress
from app.models import RunStatus
from app.validity.panel_schemas import WARRANT_EXAMPLES, Warrant
from app.webhooks.outbox import DeliveryStatus

_EXAMPLE_CURSOR = "WyIyMDI2LTExLTIzVDA5OjAwOjAwKzAwOjAwIiwgIjVkZDZmMTY0Il0"


class DeliveryPublic(BaseModel):
    """One webhook delivery of a run and how its attempts went."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "0b7f3c2e9a8d4e51b6c1f0a2d3e4f5a6",
                    "event": "run.finished",
                    "url": "https://tutor.example/hooks/thinkloop",
                    "status": "delivered",
                    "attempts": 2,
                    "next_attempt_at": "2026-11-23T09:00:03Z",
                    "last_status_code": 204,
                    "last_error": None,
                    "created_at": "2026-11-23T09:00:02Z",
                    "delivered_at": "2026-11-23T09:00:03Z",
                }
            ]
        }
    )

    id: str = Field(description="The delivery id, sent (and signed) as the webhook-id header each attempt")
    event: str = Field(description="The event sent: run.finished, run.failed or ping")
    url: str = Field(description="The receiver's URL without user, password, query or fragment")
    status: DeliveryStatus = Field(
        description="pending (to be sent or retried), delivered (a 2xx answer), or failed (attempts "
        "exhausted, or the target refused)"
    )
    attempts: int = Field(
        description="POSTs tried so far, each counted as it starts (one cut off by a stopped sender too)"
    )
    next_attempt_at: datetime = Field(description="When a pending delivery is due next (UTC)")
    last_status_code: int | None = Field(description="The HTTP status of the last answer; None: no answer")
    last_error: str | None = Field(
        description="Why the last attempt failed; None after a success",
        examples=["HTTP 502 from the receiver"],
    )
    created_at: datetime = Field(description="When the delivery was written (with the run's end state)")
    delivered_at: datetime | None = Field(description="When a 2xx answer came; None until then")


class DeliveryLog(BaseModel):
    """A page of webhook deliveries (a run's, an endpoint's or a project's), newest first."""

    items: list[DeliveryPublic] = Field(description="Deliveries, newest first (redeliveries included)")
    next_cursor: str | None = Field(
        default=None,
        description="Pass as cursor for the next page; null on the last page",
        examples=[_EXAMPLE_CURSOR],
    )


class Redelivered(BaseModel):
    """POST …/deliveries/redeliver: the failed deliveries put back in the outbox."""

    count: int = Field(description="How many failed deliveries are pending again", examples=[3])
    items: list[DeliveryPublic] = Field(
        description="Them, oldest first: each keeps its id (the webhook-id header), its attempts start afresh"
    )


class _Stamped(BaseModel):
    """What every webhook POST carries, signed as Standard Webhooks 1.0 defines it: the headers
    webhook-id (the delivery's id), webhook-timestamp and webhook-signature (``v1,<base64
    HMAC-SHA256 of "<id>.<timestamp>.<body>">`` keyed with the ``whsec_…`` secret's bytes; two
    space-separated values while a secret is rotated), and, deprecated for one release,
    Thinkloop-Event, Thinkloop-Delivery, Thinkloop-Timestamp and Thinkloop-Signature. Answer any 2xx;
    anything else is retried with exponential backoff for about a day. Delivery is at-least-once:
    drop a repeated webhook-id."""

    type: str = Field(
        description="The event: run.finished, run.failed, review.requested, review.decided or ping",
        examples=["run.finished"],
    )
    id: str = Field(
        description="The event's id: a redelivery keeps it, so a receiver can drop repeats",
        examples=["0e8d1c2b3a4f4e5d9c8b7a6f5e4d3c2b"],
    )
    created: datetime = Field(description="When the event was made (UTC)", examples=["2026-11-23T09:00:02Z"])


class WebhookEvent(_Stamped):
    """What every webhook POST about a run carries: the stamp, the run and its status."""

    run_id: str = Field(
        description="The run it is about: GET /v1/runs/{run_id} has its whole trace",
        examples=["5dd6f164dde6407fb7dd519ec9a32a8a"],
    )
    status: RunStatus = Field(
        description="The run's status, as in its trace and its event stream", examples=["accepted"]
    )
    metadata: dict[str, Any] = Field(
        description="The metadata the run was submitted with ({} if none): route the event by it "
        "(a pupil's id, say) without fetching the run",
        examples=[{"pupil": "P-17", "class": "4b"}],
    )
    grading_progress: GradingProgress = Field(
        description="The run's grading progress in LTI AGS's words: FullyGraded, PendingManual (a "
        "teacher's review awaited), Failed (error), NotReady (cancelled), Pending (running)",
        examples=["FullyGraded"],
    )


class RunFinishedWebhook(WebhookEvent):
    """The run ended with a verdict (accepted, screened, exhausted, needs_review) or in error."""

    type: Literal["run.finished"] = Field(description="run.finished", examples=["run.finished"])
    outcome: str = Field(
        description="The same as status (kept for receivers written before status)", examples=["accepted"]
    )
    stop_reason: str = Field(
        description="Why the loop stopped, in words", examples=["every judge passed the version in round 2"]
    )
    rounds: int = Field(description="Rounds judged", examples=[2])
    final_quality: float | None = Field(description="Q of the last version judged, 0–1", examples=[0.99])
    rounds_to_pass: int | None = Field(description="The round that passed; null when none did", examples=[2])
    avg_quality_final: float | None = Field(
        description="Q of the final version, 0–1 (as in the run's metrics); null when none was scored",
        examples=[0.99],
    )
    avg_quality_all_steps: float | None = Field(
        description="Mean Q over every judged version, 0–1; null when none was scored", examples=[0.69]
    )
    failure: CallFailure | None = Field(
        default=None,
        description="With status error: the call that failed (model, endpoint host, HTTP status, "
        "exception, message); null otherwise",
    )
    warrant: Warrant | None = Field(
        default=None,
        examples=WARRANT_EXAMPLES,
        description="With status accepted: the panel's warrant (as in the run's trace); null otherwise",
    )
    metrics: dict[str, Any] | None = Field(
        description="The run's metrics, as in its trace; null for an error run (a failure is never a score)",
        examples=[{"rounds_to_pass": 2, "avg_quality_final": 0.99, "avg_quality_all_steps": 0.69}],
    )


class RunFailedWebhook(WebhookEvent):
    """The run ended without a verdict: cancelled, or failed inside thinkloop."""

    type: Literal["run.failed"] = Field(description="run.failed", examples=["run.failed"])
    reason: str = Field(description="Why, in words", examples=["cancelled by request"])


class PingWebhook(_Stamped):
    """POST /v1/webhook-endpoints/{id}/test: a signed event about no run, to see that the endpoint
    receives it and verifies its signature."""

    type: Literal["ping"] = Field(description="ping", examples=["ping"])
    endpoint_id: str = Field(
        description="The endpoint it was sent to", examples=["9c1d2e3f4a5b4c6d8e7f9a0b1c2d3e4f"]
    )
