"""/v1/runs: submit, read, list, stream and cancel refinement runs."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request, Response, status
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import col, select
from sse_starlette import EventSourceResponse

from app.db import short_session
from app.deps import AppSettings, ReadKey, Registry, Session, WriteKey, check_models
from app.errors import Conflict, NotFound, Unprocessable, problem_responses
from app.models import RUN_TERMINAL, ProblemRow, Run, RunStatus
from app.runs import repository as repo
from app.runs.deps import Executor, Outbox
from app.runs.schemas import RunCreate, RunPage, RunPublic, RunTrace
from app.runs.stream import Notifier, StreamEvent, announce
from app.runs.trace import run_public, run_trace
from app.webhooks import WebhookTargetRefused, check_target, enqueue

router = APIRouter(prefix="/v1/runs", tags=["runs"])
_ERRORS = problem_responses(
    {404: "No such run", 409: "Conflict", 413: "Body too large", 422: "Invalid request"}
)


def _request_hash(body: RunCreate) -> str:
    return hashlib.sha256(body.model_dump_json().encode()).hexdigest()


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
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
    wait: Annotated[bool, Query(description="Answer when the run ends (bounded by wait_s)")] = False,
    wait_s: Annotated[float | None, Query(gt=0, le=600)] = None,
) -> RunTrace | RunPublic:
    """Start a refinement run; 202 with the run, or with ?wait=true the finished trace."""
    options = body.options
    model, judge = options.model or settings.model, options.judge_model or settings.judge_model
    check_models(registry, model, judge)
    if body.webhook_url is not None:
        try:
            await check_target(str(body.webhook_url), settings.webhook_allow_hosts)
        except WebhookTargetRefused as exc:
            raise Unprocessable(f"webhook_url refused: {exc}.") from exc
    digest = _request_hash(body)
    if idempotency_key:
        earlier = await repo.find_idempotent(session, key.id, idempotency_key)
        if earlier is not None:
            return await _replay(session, earlier, digest, response)
    problem = await repo.get_or_create_problem(
        session, body.problem.question, body.problem.solution, body.problem.metadata
    )
    run = Run(
        problem_id=problem.id,
        status="queued",
        model=model,
        judge_model=judge,
        policy=options.policy or settings.policy,
        max_rounds=options.max_rounds or 3,
        webhook_url=str(body.webhook_url) if body.webhook_url else None,
        idempotency_key=idempotency_key,
        request_hash=digest,
        api_key_id=key.id,
        # executed here: held by this process from the start, so no other process's sweep takes
        # it first; with workers, free for the first worker that takes it
        lease_owner=executor.worker if executor.embedded else None,
        lease_until=executor.lease_deadline() if executor.embedded else None,
    )
    try:
        async with session.begin_nested():
            session.add(run)
    except IntegrityError:  # the same Idempotency-Key raced in
        earlier = await repo.find_idempotent(session, key.id, idempotency_key or "")
        if earlier is None:
            raise
        return await _replay(session, earlier, digest, response)
    await session.commit()
    await executor.start(run.id)
    response.headers["Location"] = f"/v1/runs/{run.id}"
    if wait and await executor.wait(run.id, min(wait_s or settings.wait_timeout_s, settings.wait_timeout_s)):
        response.status_code = status.HTTP_200_OK
        return await _trace(session, run.id)
    if wait:
        await session.refresh(run)  # still going: as it is now, not as it was created
    return run_public(run, problem.question)


async def _replay(session: Session, run: Run, digest: str, response: Response) -> RunPublic:
    if run.request_hash != digest:
        raise Conflict("This Idempotency-Key was used with a different request.")
    response.headers["Idempotent-Replayed"] = "true"
    response.headers["Location"] = f"/v1/runs/{run.id}"
    problem = await session.get(ProblemRow, run.problem_id)
    assert problem is not None
    return run_public(run, problem.question)


async def _trace(session: Session, run_id: str) -> RunTrace:
    session.expire_all()
    run = await session.get(Run, run_id)
    if run is None:
        raise NotFound(f"There is no run {run_id}.")
    problem = await session.get(ProblemRow, run.problem_id)
    assert problem is not None
    return run_trace(run, problem, *await repo.trace_rows(session, run_id))


@router.get("/{run_id}", response_model=RunTrace, responses=_ERRORS)
async def get_run(run_id: str, session: Session, _: ReadKey) -> RunTrace:
    """The full revision trace: every round's version, verdicts, scores, feedback and think-aloud."""
    return await _trace(session, run_id)


@router.get("", response_model=RunPage, responses=_ERRORS)
async def list_runs(
    session: Session,
    _: ReadKey,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    status_filter: Annotated[RunStatus | None, Query(alias="status")] = None,
    model: Annotated[str | None, Query(max_length=200)] = None,
) -> RunPage:
    """Runs, newest first, with filters and cursor pagination."""
    runs, next_cursor = await repo.list_runs(
        session, limit=limit, cursor=cursor, status=status_filter, model=model
    )
    questions = await _questions(session, [r.problem_id for r in runs])
    return RunPage(items=[run_public(r, questions[r.problem_id]) for r in runs], next_cursor=next_cursor)


async def _questions(session: Session, ids: list[str]) -> dict[str, str]:
    rows = (
        await session.execute(
            select(col(ProblemRow.id), col(ProblemRow.question)).where(col(ProblemRow.id).in_(ids))
        )
    ).all()
    return {row[0]: row[1] for row in rows}


@router.post("/{run_id}/cancel", response_model=RunPublic, responses=_ERRORS)
async def cancel_run(
    run_id: str, session: Session, _: WriteKey, executor: Executor, outbox: Outbox
) -> RunPublic:
    """Cancel a queued or running run; 409 if it already ended or is a batch item's."""
    run = await session.get(Run, run_id)
    if run is None:
        raise NotFound(f"There is no run {run_id}.")
    if run.status in RUN_TERMINAL:
        raise Conflict(f"The run already ended ({run.status}).")
    if run.batch_id is not None:  # its item would be left without a result
        raise Conflict(f"The run is an item of batch {run.batch_id}: cancel the batch instead.")
    if not executor.cancel(run_id):
        # Executed elsewhere (that process loses the lease at its next renewal and stops the run)
        # or by nobody: the end state and its webhook are stored here. There is no end event, so
        # every process's streams of the run must look, and close.
        webhook = {"run_id": run_id, "status": "cancelled", "reason": "cancelled by request"}
        if await repo.finish_run(session, run_id, "cancelled", "cancelled by request", None):
            await session.refresh(run)
            enqueue(session, run, "run.failed", webhook)
        await announce(session, run_id)
        await session.commit()
        executor.notifier.wake(run_id)
        outbox.wake()
    else:
        await executor.wait(run_id, 10.0)
    await session.refresh(run)  # its end state, from whichever process stored it
    problem = await session.get(ProblemRow, run.problem_id)
    assert problem is not None
    return run_public(run, problem.question)


@router.get("/{run_id}/events", responses={**_ERRORS, 200: {"content": {"text/event-stream": {}}}})
async def stream_events(
    run_id: str,
    request: Request,
    _: ReadKey,
    settings: AppSettings,
    executor: Executor,
    last_event_id: Annotated[str | None, Header()] = None,
) -> EventSourceResponse:
    """Server-Sent Events of the run's transcript: live, or replayed; resumes after Last-Event-ID."""
    # No request-scoped session here: it would stay checked out for the whole stream.
    async with short_session(request.app.state.sessions) as session:
        exists = await session.get(Run, run_id) is not None
    if not exists:
        raise NotFound(f"There is no run {run_id}.")
    after = int(last_event_id) if last_event_id and last_event_id.isdigit() else 0
    stream = _events(request, run_id, after, executor.notifier, settings.sse_reread_s)
    return EventSourceResponse(stream, ping=settings.sse_heartbeat_s)


_END = frozenset({"run.finished", "run.failed"})


async def _events(
    request: Request, run_id: str, after: int, notifier: Notifier, reread_s: float
) -> AsyncIterator[bytes]:
    """The run's events after ``after``, until its end event.

    On the process executing the run they come from memory, woken by each publish; elsewhere from
    the database, woken by the run's announcements (PostgreSQL NOTIFY), with a re-read every
    ``reread_s`` as the safety net for an announcement lost while the listener was reconnecting.
    """
    with notifier.following(run_id) as follow:  # armed before the first look
        while True:
            events, ended = notifier.since(run_id, after), False
            if events is None:  # not executing here, or older than memory keeps: read the database
                events, ended = await follow.read(after, partial(_stored, request.app.state.sessions, run_id))
            frames, after, finished = _until_end(events, after)
            if frames:  # what is ready goes out as one write: a burst of verdicts costs one send
                yield frames
            if finished or (ended and not events):  # or it ended with no end event (an older version's)
                return
            if not events:
                await follow.wait(reread_s)


def _until_end(events: list[StreamEvent], after: int) -> tuple[bytes, int, bool]:
    """The frames to send (up to an end event), the last seq sent, and whether the run ended."""
    for index, event in enumerate(events):
        if event.type in _END:
            return b"".join(e.frame for e in events[: index + 1]), event.seq, True
    return b"".join(e.frame for e in events), events[-1].seq if events else after, False


async def _stored(
    sessions: async_sessionmaker[AsyncSession], run_id: str, after: int
) -> tuple[list[StreamEvent], bool]:
    """The run's stored events after ``after``, and whether it had ended before they were read."""
    async with short_session(sessions) as session:  # never held across a wait
        # The run first: its end state is stored with its end event, so if it has ended, the
        # events read next include the one that ends the stream.
        run = await session.get(Run, run_id)
        rows = await repo.events_after(session, run_id, after)
    events = [StreamEvent.of(row.seq, row.type, row.data) for row in rows]
    return events, run is None or run.status in RUN_TERMINAL
