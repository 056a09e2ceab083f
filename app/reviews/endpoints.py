"""/v1/reviews: the project's review queue, teachers' decisions, the review set and the judges'
agreement with the teachers; /v1/runs/{id}/review-requests asks for a review."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Header, Path, Query, Response, status

from app.deps import RequestReviewKey, ReviewKey, ReviewReadKey, Session
from app.errors import problem_responses
from app.models import Project
from app.reviews import decisions, labels
from app.reviews.agreement import teacher_agreement
from app.reviews.schemas import (
    DecisionIn,
    DecisionPublic,
    ReviewDecidedWebhook,
    ReviewDetail,
    ReviewPage,
    ReviewPublic,
    ReviewRequest,
    ReviewRequestedWebhook,
)
from app.reviews.views import decision_public, review_detail, review_public, review_rows
from app.runs import service

router = APIRouter(tags=["reviews"])
_NO_NOTE = ReviewRequest()  # a request may send no body
ReviewId = Annotated[str, Path(max_length=64, description="The review item's id")]
_ERRORS = problem_responses(
    {403: "The key lacks the scope", 404: "No such review", 409: "Conflict", 422: "Invalid request"}
)


@router.get("/v1/reviews", response_model=ReviewPage, responses=_ERRORS)
async def list_reviews(
    session: Session,
    key: ReviewKey,
    status_filter: Annotated[
        Literal["pending", "decided"] | None, Query(alias="status", description="pending or decided")
    ] = None,
    reason: Annotated[
        Literal["needs_review", "audit", "requested"] | None, Query(description="Only items queued for this")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100, description="At most this many items")] = 20,
    cursor: Annotated[
        str | None, Query(max_length=500, description="next_cursor of the previous page")
    ] = None,
) -> ReviewPage:
    """The project's review queue, newest first: each item's status, reason, version and the run's
    metadata (a pupil's id, say). A **review** key's."""
    items, next_cursor = await decisions.queue_page(
        session, key.project_id, status=status_filter, reason=reason, limit=limit, cursor=cursor
    )
    return ReviewPage(items=await review_rows(session, items), next_cursor=next_cursor)


@router.get("/v1/reviews/set", responses=_ERRORS)
async def get_review_set(session: Session, key: ReviewReadKey) -> dict[str, Any]:
    """The project's review set: its name, hash, counts and labelled items (the JSONL whose canonical
    hash it is: `thinkloop datasets hash` of the items, one per line, prints the same hash)."""
    project = await session.get(Project, key.project_id)
    assert project is not None
    found = await labels.review_set(session, project)
    return {
        "name": found.name,
        "hash": found.hash,
        **found.counts(),
        "reviewer_names": found.reviewers,
        "items": found.objects,
    }


@router.get("/v1/reviews/agreement", responses=_ERRORS)
async def get_review_agreement(
    session: Session,
    key: ReviewReadKey,
    judge_model: Annotated[
        str | None, Query(max_length=200, description="Only runs judged by this panel")
    ] = None,
) -> dict[str, Any]:
    """The judges against the project's teachers: Cohen's κ per judge with its interval and n, the
    panel's false-accept rate and specificity on decided items, and the audit sample's line."""
    project = await session.get(Project, key.project_id)
    assert project is not None
    return await teacher_agreement(session, project, judge_model)


@router.get("/v1/reviews/{review_id}", response_model=ReviewDetail, responses=_ERRORS)
async def get_review(review_id: ReviewId, session: Session, key: ReviewKey) -> ReviewDetail:
    """One item with what a teacher needs: the version, each judge's words on it, the warrant, the
    think-aloud and every decision so far."""
    item = await decisions.get_item(session, review_id, key.project_id)
    return await review_detail(session, item)


@router.post(
    "/v1/reviews/{review_id}/decision",
    status_code=status.HTTP_201_CREATED,
    response_model=DecisionPublic,
    responses={**_ERRORS, 200: {"model": DecisionPublic, "description": "An earlier request's decision"}},
)
async def decide_review(
    review_id: ReviewId,
    body: Annotated[DecisionIn, Body()],
    session: Session,
    key: ReviewKey,
    response: Response,
    idempotency_key: Annotated[
        str | None,
        Header(
            max_length=200,
            description="A retry with it returns the first decision (Idempotent-Replayed: true)",
        ),
    ] = None,
) -> DecisionPublic:
    """Decide a queued version: sound, or flawed with its flaw types and evidence, optionally with a
    corrected version. 409 (with the item's state) for an item no longer in the queue, unless
    `replaces` names the decision to replace."""
    item = await decisions.get_item(session, review_id, key.project_id)
    done = await decisions.decide(session, item, body, key, idempotency_key)
    await session.commit()
    if done.replayed:
        response.status_code = status.HTTP_200_OK
        response.headers["Idempotent-Replayed"] = "true"
    return decision_public(done.decision)


@router.post(
    "/v1/runs/{run_id}/review-requests",
    status_code=status.HTTP_201_CREATED,
    response_model=ReviewPublic,
    responses=_ERRORS,
)
async def request_review(
    run_id: Annotated[str, Path(max_length=64, description="The run's id")],
    session: Session,
    key: RequestReviewKey,
    body: Annotated[ReviewRequest, Body()] = _NO_NOTE,
) -> ReviewPublic:
    """Ask a teacher to decide an ended run's final version (a **write** or **review** key); 409
    while it runs or already waits in the queue."""
    run = await service.get(session, run_id, key.project_id)
    item = await decisions.request_review(session, run, key, body.note)
    await session.commit()
    return review_public(item, run, None)


# The review events, for the OpenAPI document's `webhooks` section (nothing is served here).
webhooks = APIRouter()


@webhooks.post("review.requested", operation_id="review_requested")
def review_requested(body: ReviewRequestedWebhook) -> None:
    """POSTed to the run's webhook_url and the project's endpoints when a version enters the queue."""


@webhooks.post("review.decided", operation_id="review_decided")
def review_decided(body: ReviewDecidedWebhook) -> None:
    """POSTed to the run's webhook_url and the project's endpoints when a teacher decides."""
