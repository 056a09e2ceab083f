"""What a client can ask of runs, apart from HTTP: submit one (idempotently), cancel one, read its
trace, follow its events. The endpoints in ``app.runs.endpoints`` only translate."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

import structlog
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agents.llm.models import ModelRegistry
from agents.schemas import Problem
from app import audit
from app.access.estimate import step_estimate
from app.access.reserve import release, reserve
from app.db import short_session
from app.deps import check_models
from app.errors import Conflict, NotFound, Unprocessable
from app.models import RUN_TERMINAL, ApiKey, ProblemRow, Run, new_id, utcnow
from app.runs import repository as repo
from app.runs.executor import RunExecutor
from app.runs.schemas import RunCreate, RunTrace
from app.runs.stream import Notifier, StreamEvent, announce
from app.runs.trace import run_trace, streamed_thinking
from app.settings import Settings
from app.webhooks.outbox import WebhookOutbox, WebhookTargetRefused, check_target, enqueue, refuse_credentials

log = structlog.get_logger(__name__)


@dataclass
class Submitted:
    """A stored run, its question, and whether it is an earlier request's run (Idempotency-Key)."""

    run: Run
    question: str
    replayed: bool = False


PROBLEM = {"question", "solution"}


def _request_hash(body: RunCreate) -> str:
    return hashlib.sha256(body.model_dump_json().encode()).hexdigest()


async def submit(
    session: AsyncSession,
    body: RunCreate,
    *,
    key: ApiKey,
    idempotency_key: str | None,
    executor: RunExecutor,
    registry: ModelRegistry,
    settings: Settings,
) -> Submitted:
    """Store a new run and start it (here, or on a worker), or find the run an earlier request with
    the same Idempotency-Key stored (409 if that request was a different one)."""
    options = body.options
    model, judge = options.model or settings.model, options.judge_model or settings.judge_model
    check_models(registry, model, judge)
    if body.webhook_url is not None:
        try:
            refuse_credentials(str(body.webhook_url))
            await check_target(str(body.webhook_url), settings.webhook_allow_hosts)
        except WebhookTargetRefused as exc:
            raise Unprocessable(f"webhook_url refused: {exc}.") from exc
    digest = _request_hash(body)
    if idempotency_key:
        earlier = await repo.find_idempotent(session, key.project_id, idempotency_key)
        if earlier is not None:
            return await _replay(session, earlier, digest)
    run_id = new_id()
    # its first round reserved before anything is stored or spent: 429 at a daily cap
    first_round = step_estimate(registry, judge, model)(Problem(**body.problem.model_dump(include=PROBLEM)))
    await reserve(session, settings, run_id, (key.project_id, key.id), first_round)
    problem = await repo.get_or_create_problem(session, body.problem.question, body.problem.solution)
    run = Run(
        id=run_id,
        project_id=key.project_id,
        problem_id=problem.id,
        meta=body.problem.metadata,
        status="queued",
        model=model,
        judge_model=judge,
        policy=options.policy or settings.policy,
        max_rounds=options.max_rounds or 3,
        guarantee_alpha=options.guarantee.alpha if options.guarantee else None,
        guarantee_delta=options.guarantee.delta if options.guarantee else None,
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
        await release(session, run_id)  # this request stores no run
        earlier = await repo.find_idempotent(session, key.project_id, idempotency_key or "")
        if earlier is None:
            raise
        return await _replay(session, earlier, digest)
    audit.record(session, key, "created", "run", run.id, key.project_id)
    await session.commit()
    await executor.start(run.id)
    return Submitted(run, problem.question)


async def delete(session: AsyncSession, run_id: str, key: ApiKey, executor: RunExecutor) -> None:
    """Delete the project's ended run and every trace of it: its rows, transcript, webhook deliveries
    and checkpoints, and its problem unless something else refers to it. 409 while it runs (cancel
    it first) and for a batch item's run (delete the batch)."""
    run = await get(session, run_id, key.project_id)
    if run.status not in RUN_TERMINAL:
        raise Conflict(f"The run is still {run.status}: cancel it first.")
    if run.batch_id is not None:
        raise Conflict(f"The run is an item of batch {run.batch_id}: delete the batch instead.")
    await executor.delete_checkpoints([run_id])  # first: a failure leaves the run, never its states
    problems = await repo.delete_runs(session, [run_id])
    await repo.delete_orphan_problems(session, problems)
    audit.record(session, key, "deleted", "run", run_id, key.project_id)
    await session.commit()


async def _replay(session: AsyncSession, run: Run, digest: str) -> Submitted:
    if run.request_hash != digest:
        raise Conflict("This Idempotency-Key was used with a different request.")
    problem = await session.get(ProblemRow, run.problem_id)
    assert problem is not None
    return Submitted(run, problem.question, replayed=True)


async def get(session: AsyncSession, run_id: str, project_id: str) -> Run:
    """The project's run; 404 for an unknown id and for another project's run alike, so ids
    reveal nothing across projects."""
    run = await repo.project_run(session, run_id, project_id)
    if run is None:
        raise NotFound(f"There is no run {run_id}.")
    return run


async def trace(session: AsyncSession, run_id: str, project_id: str) -> RunTrace:
    """The project's run's full trace, read afresh."""
    session.expire_all()
    run = await get(session, run_id, project_id)
    problem = await session.get(ProblemRow, run.problem_id)
    assert problem is not None
    rows = await repo.trace_rows(session, run_id)
    return run_trace(run, problem, *rows, await streamed_thinking(session, run_id))


async def cancel(
    session: AsyncSession, run_id: str, key: ApiKey, executor: RunExecutor, outbox: WebhookOutbox
) -> Submitted:
    """Cancel the project's queued or running run; 409 if it already ended or is a batch item's.
    Returns the run in its end state, from whichever process stored it."""
    run = await get(session, run_id, key.project_id)
    if run.status in RUN_TERMINAL:
        raise Conflict(f"The run already ended ({run.status}).")
    if run.batch_id is not None:  # its item would be left without a result
        raise Conflict(f"The run is an item of batch {run.batch_id}: cancel the batch instead.")
    audit.record(session, key, "cancelled", "run", run_id, key.project_id)
    await session.commit()
    if not executor.cancel(run_id):
        # Executed elsewhere (that process loses the lease at its next renewal and stops the run)
        # or by nobody: the end state and its webhook are stored here. There is no end event, so
        # every process's streams of the run must look, and close.
        webhook = {"run_id": run_id, "status": "cancelled", "reason": "cancelled by request"}
        if await repo.finish_run(session, run_id, "cancelled", "cancelled by request", None):
            await session.refresh(run)
            await enqueue(session, run, "run.failed", webhook)
            await repo.keep_verdict_text_once(session, run_id)  # its end is stored here, not there
        await announce(session, run_id)
        await session.commit()
        executor.notifier.wake(run_id)
        outbox.wake()
    else:
        await executor.wait(run_id, 10.0)
    await session.refresh(run)
    problem = await session.get(ProblemRow, run.problem_id)
    assert problem is not None
    return Submitted(run, problem.question)


_END = frozenset({"run.finished", "run.failed"})


async def events(
    sessions: async_sessionmaker[AsyncSession], run_id: str, after: int, notifier: Notifier, reread_s: float
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
                events, ended = await follow.read(after, partial(_stored, sessions, run_id))
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
        whole = await repo.with_verdict_text(session, run_id, rows)
    events = [StreamEvent.of(row.seq, row.type, data) for row, data in zip(rows, whole, strict=True)]
    return events, run is None or run.status in RUN_TERMINAL


DeleteCheckpoints = Callable[[list[str]], Awaitable[None]]


async def purge(
    sessions: async_sessionmaker[AsyncSession], delete_checkpoints: DeleteCheckpoints, older_than: timedelta
) -> int:
    """Delete every ended run submitted over the API that was created more than ``older_than`` ago,
    with every trace of it, as ``delete`` does, and log each in the audit log (actor "retention").
    Batch items' runs stay with their batch. Returns how many runs were deleted."""
    before, total = utcnow() - older_than, 0
    while True:
        async with short_session(sessions) as session:
            expired = await repo.expired_runs(session, before)
        if not expired:
            return total
        ids = [run_id for run_id, _ in expired]
        await delete_checkpoints(ids)
        async with short_session(sessions) as session:
            problems = await repo.delete_runs(session, ids)
            await repo.delete_orphan_problems(session, problems)
            why = {"reason": "retention"}
            for run_id, project in expired:
                audit.record(session, None, "deleted", "run", run_id, project, why, actor="retention")
        total += len(ids)
        log.info("runs.purged", count=len(ids))


@contextlib.asynccontextmanager
async def retaining(
    settings: Settings, sessions: async_sessionmaker[AsyncSession], delete_checkpoints: DeleteCheckpoints
) -> AsyncIterator[None]:
    """Purge runs older than THINKLOOP_RETENTION_DAYS every THINKLOOP_RETENTION_SWEEP_S while the block
    runs (any number of processes may: a run is deleted once). Does nothing without the setting."""
    if settings.retention_days is None:
        yield
        return
    age = timedelta(days=settings.retention_days)

    async def sweep() -> None:
        while True:
            try:
                await purge(sessions, delete_checkpoints, age)
            except (DBAPIError, OSError) as exc:  # the database is away: next time
                log.warning("runs.purge_failed", error=type(exc).__name__)
            await asyncio.sleep(settings.retention_sweep_s)

    task = asyncio.create_task(sweep(), name="runs-retention")
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
