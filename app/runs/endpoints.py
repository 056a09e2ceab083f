"""/v1/runs: submit, read, list, stream and cancel refinement runs (the work is in ``service``)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Path, Query, Request, Response, status
from pydantic import AfterValidator
from sse_starlette import EventSourceResponse

from app.db import short_session
from app.deps import AppSettings, ReadKey, Registry, Session, WriteKey
from app.errors import problem_responses
from app.models import RunStatus
from app.pagination import sequence_number
from app.pagination_http import CreatedAfter, CreatedBefore
from app.runs import repository as repo
from app.runs import service
from app.runs.deps import Executor
from app.runs.schemas import RunCreate, RunPage, RunPublic, RunTrace
from app.runs.trace import run_public
from app.text import storable_if_text
from app.webhooks.deps import Outbox

router = APIRouter(prefix="/v1/runs", tags=["runs"])
RunId = Annotated[str, Path(description="The run's id")]


_RESUME = "; send the id of an event this stream sent"
_ERRORS = problem_responses(
    {404: "No such run", 409: "Conflict", 413: "Body too large", 422: "Invalid request"}
)


@router.post(
    "",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunTrace | RunPublic,
    responses={**_ERRORS, 200: {"model": RunTrace, "description": "With ?wait=true: the finished trace"}},
)
async def create_run(
    body: RunCreate,
    session: Session,
    key: WriteKey,
    executor: Executor,
    registry: Registry,
    settings: AppSettings,
    response: Response,
    idempotency_key: Annotated[
        str | None,
        Header(
            max_length=200,
            description="Your key for this submission: a retry with it returns the same run "
            "(Idempotent-Replayed: true); with a different body it is a 409",
        ),
    ] = None,
    wait: Annotated[bool, Query(description="Answer when the run ends (bounded by wait_s)")] = False,
    wait_s: Annotated[
        float | None,
        Query(gt=0, le=600, description="With wait=true: wait at most this many seconds"),
    ] = None,
) -> RunTrace | RunPublic:
    """Start a refinement run; 202 with the run, or with ?wait=true the finished trace."""
    submitted = await service.submit(
        session,
        body,
        key=key,
        idempotency_key=idempotency_key,
        executor=executor,
        registry=registry,
        settings=settings,
    )
    run = submitted.run
    response.headers["Location"] = f"/v1/runs/{run.id}"
    if submitted.replayed:
        response.headers["Idempotent-Replayed"] = "true"
        return run_public(run, submitted.question)
    if wait and await executor.wait(run.id, min(wait_s or settings.wait_timeout_s, settings.wait_timeout_s)):
        response.status_code = status.HTTP_200_OK
        return await service.trace(session, run.id, key.project_id)
    if wait:
        await session.refresh(run)  # still going: as it is now, not as it was created
    return run_public(run, submitted.question)


@router.get("/{run_id}", response_model=RunTrace, responses=_ERRORS)
async def get_run(run_id: RunId, session: Session, key: ReadKey) -> RunTrace:
    """The full revision trace: every round's version, verdicts, scores, feedback and think-aloud."""
    return await service.trace(session, run_id, key.project_id)


@router.get("", response_model=RunPage, responses=_ERRORS)
async def list_runs(
    session: Session,
    key: ReadKey,
    limit: Annotated[int, Query(ge=1, le=100, description="At most this many runs")] = 20,
    cursor: Annotated[
        str | None, Query(max_length=500, description="next_cursor of the previous page")
    ] = None,
    status_filter: Annotated[
        RunStatus | None, Query(alias="status", description="Only runs with this status")
    ] = None,
    model: Annotated[
        str | None,
        Query(max_length=200, description="Only runs of this model under test"),
        AfterValidator(storable_if_text),
    ] = None,
    metadata: Annotated[
        str | None,
        Query(
            max_length=400,
            pattern=r"^[^:]{1,100}:.*$",
            description="KEY:VALUE — runs whose metadata holds KEY with this text value (e.g. pupil:P-17)",
        ),
        AfterValidator(storable_if_text),
    ] = None,
    created_after: CreatedAfter = None,
    created_before: CreatedBefore = None,
    source: Annotated[
        Literal["api", "batch"] | None,
        Query(description="batch: only batch items' runs; api: only runs submitted on their own"),
    ] = None,
    batch: Annotated[
        str | None,
        Query(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="Only this batch's runs"),
    ] = None,
) -> RunPage:
    """The project's runs, newest first, with filters and cursor pagination."""
    runs, next_cursor = await repo.list_runs(
        session,
        project_id=key.project_id,
        limit=limit,
        cursor=cursor,
        status=status_filter,
        model=model,
        metadata=tuple(metadata.split(":", 1)) if metadata else None,  # type: ignore[arg-type]
        created_after=created_after,
        created_before=created_before,
        source=source,
        batch_id=batch,
    )
    questions = await repo.questions(session, [r.problem_id for r in runs])
    return RunPage(items=[run_public(r, questions[r.problem_id]) for r in runs], next_cursor=next_cursor)


@router.post("/{run_id}/cancel", response_model=RunPublic, responses=_ERRORS)
async def cancel_run(
    run_id: RunId, session: Session, key: WriteKey, executor: Executor, outbox: Outbox
) -> RunPublic:
    """Cancel a queued or running run; 409 if it already ended or is a batch item's."""
    cancelled = await service.cancel(session, run_id, key, executor, outbox)
    return run_public(cancelled.run, cancelled.question)


@router.delete(
    "/{run_id}", status_code=status.HTTP_204_NO_CONTENT, response_class=Response, responses=_ERRORS
)
async def delete_run(run_id: RunId, session: Session, key: WriteKey, executor: Executor) -> Response:
    """Delete an ended run and every trace of it (rows, transcript, deliveries, checkpoints); 409 while
    it runs or when it is a batch item's."""
    await service.delete(session, run_id, key, executor)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{run_id}/events", responses={**_ERRORS, 200: {"content": {"text/event-stream": {}}}})
async def stream_run_events(
    run_id: RunId,
    request: Request,
    key: ReadKey,
    settings: AppSettings,
    executor: Executor,
    last_event_id: Annotated[
        str | None, Header(max_length=100, description="Resume after this event id (an earlier event's id)")
    ] = None,
) -> EventSourceResponse:
    """Server-Sent Events of the run's transcript: live, or replayed; resumes after Last-Event-ID."""
    sessions = request.app.state.sessions
    # No request-scoped session here: it would stay checked out for the whole stream.
    async with short_session(sessions) as session:
        await service.get(session, run_id, key.project_id)
    after = sequence_number(last_event_id, "Last-Event-ID", _RESUME) if last_event_id else 0
    stream = service.events(sessions, run_id, after, executor.notifier, settings.sse_reread_s)
    return EventSourceResponse(stream, ping=settings.sse_heartbeat_s)
