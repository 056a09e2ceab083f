"""/v1/batches: start, follow, steer and report batch evaluations."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, func, select
from sse_starlette import EventSourceResponse

from app.batches import repository as repo
from app.batches.deps import Batches
from app.batches.estimate import estimate_batch
from app.batches.exports import item_export
from app.batches.schemas import (
    MAX_BATCH_ITEMS,
    BatchComparison,
    BatchCreate,
    BatchItemPage,
    BatchItemPublic,
    BatchPage,
    BatchProgress,
    BatchPublic,
    BatchReport,
    BatchStatus,
    ItemFormat,
    ItemOutcome,
    ReportFormat,
)
from app.batches.service import BatchService, BatchSpec, BatchStateError, progress
from app.datasets import repository as datasets_repo
from app.db import short_session
from app.deps import AppSettings, QuotasDep, ReadKey, Registry, Session, WriteKey, check_models
from app.errors import Conflict, NotFound, Unprocessable, problem_responses
from app.models import BATCH_TERMINAL, ApiKey, Batch, Dataset, DatasetItem, RunStatus
from app.pagination import created_between, page, sequence_number
from app.pagination_http import CreatedAfter, CreatedBefore
from app.reporting import figures
from app.reporting.batch import build_report
from app.reporting.comparisons import compare
from app.reporting.corrected import batch_labels
from app.reporting.data import load_entries
from app.reporting.figure_cache import FigureCache
from app.reporting.formats import render_report
from app.reporting.item_export import MEDIA_TYPES as ITEM_MEDIA
from app.reporting.item_result import item_results
from app.reporting.manifest import complete_manifest, served_by
from app.reviews.agreement import batch_teachers
from app.runs.deps import Executor
from app.text import unstorable_reason

router = APIRouter(prefix="/v1/batches", tags=["batches"])
BatchId = Annotated[str, Path(description="The batch's id")]
_ERRORS = problem_responses(
    {404: "No such batch", 409: "The batch's state forbids this", 422: "Invalid request"}
)
MEDIA = {"json": "application/json", "md": "text/markdown", "csv": "text/csv", "html": "text/html"}


async def _public(service: BatchService, batch_id: str) -> BatchPublic:
    batch, state = await service.snapshot(batch_id)
    return BatchPublic.model_validate(batch.model_dump() | {"progress": BatchProgress.model_validate(state)})


async def _get(session: AsyncSession, batch_id: str, project_id: str) -> Batch:
    """The project's batch; 404 for an unknown id and for another project's batch alike."""
    batch = None if unstorable_reason(batch_id) else await session.get(Batch, batch_id)
    if batch is None or batch.project_id != project_id:
        raise NotFound(f"There is no batch {batch_id}.")
    return batch


async def _size(session: Session, body: BatchCreate, project_id: str) -> int:
    dataset = await session.get(Dataset, body.dataset_id)
    if dataset is None or dataset.project_id != project_id:
        raise Unprocessable(f"There is no dataset {body.dataset_id}; upload it to /v1/datasets first.")
    query = select(func.count()).where(col(DatasetItem.dataset_id) == dataset.id)
    problems = int((await session.execute(query)).scalar_one())
    return problems * len(set(body.models)) * body.repeats * (2 if body.control_arm else 1)


@router.post("", status_code=status.HTTP_202_ACCEPTED, response_model=BatchPublic, responses=_ERRORS)
async def create_batch(
    body: BatchCreate,
    session: Session,
    key: WriteKey,
    service: Batches,
    registry: Registry,
    settings: AppSettings,
    quotas: QuotasDep,
    response: Response,
    dry_run: Annotated[
        bool, Query(description="Only estimate its calls, tokens and cost (200); nothing runs or is stored")
    ] = False,
) -> BatchPublic | JSONResponse:
    """Evaluate every problem of a dataset with every model (× repeats, + control arm); 202 at once.
    With ``dry_run``, 200 and what it would spend (see `thinkloop batch estimate`)."""
    judge = body.judge_model or settings.judge_model
    check_models(registry, *body.models, judge)
    items = await _size(session, body, key.project_id)
    await quotas.check_daily(session, key)
    if items > MAX_BATCH_ITEMS:
        raise Unprocessable(f"The batch would have {items} items; the limit is {MAX_BATCH_ITEMS}.")
    spec = BatchSpec(
        **body.model_dump(exclude={"models", "judge_model", "policy"}),
        models=list(dict.fromkeys(body.models)),
        judge_model=judge,
        policy=body.policy or settings.policy,
        project_id=key.project_id,
    )
    if dry_run:
        return JSONResponse(await estimate_batch(session, spec, registry))
    batch = await service.create(spec, key, registry)
    response.headers["Location"] = f"/v1/batches/{batch.id}"
    return await _public(service, batch.id)


@router.get("", response_model=BatchPage, responses=_ERRORS)
async def list_batches(
    session: Session,
    key: ReadKey,
    service: Batches,
    limit: Annotated[int, Query(ge=1, le=100, description="At most this many batches")] = 20,
    cursor: Annotated[
        str | None, Query(max_length=500, description="next_cursor of the previous page")
    ] = None,
    status_filter: Annotated[
        BatchStatus | None, Query(alias="status", description="Only batches in this state")
    ] = None,
    created_after: CreatedAfter = None,
    created_before: CreatedBefore = None,
) -> BatchPage:
    """The project's batches, newest first, each with its progress; filtered by ``status`` and
    creation time, paged with ``cursor``."""
    query = select(Batch).where(col(Batch.project_id) == key.project_id)
    if status_filter is not None:
        query = query.where(col(Batch.status) == status_filter)
    query = created_between(query, Batch, created_after, created_before)
    rows, next_cursor = await page(session, query, Batch, limit, cursor)
    return BatchPage(items=[await _public(service, b.id) for b in rows], next_cursor=next_cursor)


@router.get("/{batch_id}", response_model=BatchPublic, responses=_ERRORS)
async def get_batch(batch_id: BatchId, session: Session, key: ReadKey, service: Batches) -> BatchPublic:
    """A batch and its progress: items by state, tokens, cost and ETA."""
    return await _public(service, (await _get(session, batch_id, key.project_id)).id)


async def _steer(
    service: BatchService,
    batch_id: str,
    key: ApiKey,
    verb: str,
    act: Callable[[str, ApiKey], Awaitable[object]],
) -> BatchPublic:
    async with short_session(service.sessions) as session:
        await _get(session, batch_id, key.project_id)
    try:
        await act(batch_id, key)
    except LookupError as exc:
        raise NotFound(f"There is no batch {batch_id}.") from exc
    except BatchStateError as exc:
        raise Conflict(f"Cannot {verb} this batch: {exc}.") from exc
    return await _public(service, batch_id)


@router.post("/{batch_id}/pause", response_model=BatchPublic, responses=_ERRORS)
async def pause_batch(batch_id: BatchId, key: WriteKey, service: Batches) -> BatchPublic:
    """Start no more items; items in flight finish. 409 unless queued or running."""
    return await _steer(service, batch_id, key, "pause", service.pause)


@router.post("/{batch_id}/resume", response_model=BatchPublic, responses=_ERRORS)
async def resume_batch(
    batch_id: BatchId, key: WriteKey, service: Batches, session: Session, quotas: QuotasDep
) -> BatchPublic:
    """Go on with a paused batch. 409 unless paused; 429 when the key or project is at a daily cap
    (new work, as a new run or batch would be)."""
    await quotas.check_daily(session, key)
    return await _steer(service, batch_id, key, "resume", service.resume)


@router.post("/{batch_id}/cancel", response_model=BatchPublic, responses=_ERRORS)
async def cancel_batch(batch_id: BatchId, key: WriteKey, service: Batches) -> BatchPublic:
    """Stop for good: pending items are cancelled, items in flight finish. 409 once ended."""
    return await _steer(service, batch_id, key, "cancel", service.cancel)


@router.post("/{batch_id}/retry-failed", response_model=BatchPublic, responses=_ERRORS)
async def retry_failed_items(
    batch_id: BatchId, key: WriteKey, service: Batches, session: Session, quotas: QuotasDep
) -> BatchPublic:
    """Send the items that ended in error again. 409 for a cancelled or budget-stopped batch; 429
    when the key or project is at a daily cap."""
    await quotas.check_daily(session, key)
    return await _steer(service, batch_id, key, "retry-failed", service.retry_failed)


@router.delete(
    "/{batch_id}", status_code=status.HTTP_204_NO_CONTENT, response_class=Response, responses=_ERRORS
)
async def delete_batch(batch_id: BatchId, key: WriteKey, service: Batches, executor: Executor) -> Response:
    """Delete an ended batch and every trace of it: items, their runs (rows, transcripts, deliveries,
    checkpoints), cached replies no other batch used. 409 while it is active or items still run."""
    async with short_session(service.sessions) as session:
        await _get(session, batch_id, key.project_id)
    try:
        await service.delete(batch_id, key, executor.delete_checkpoints)
    except LookupError as exc:
        raise NotFound(f"There is no batch {batch_id}.") from exc
    except BatchStateError as exc:
        raise Conflict(f"Cannot delete this batch: {exc}.") from exc
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/{batch_id}/report",
    responses={**_ERRORS, 200: {"model": BatchReport, "content": {m: {} for m in MEDIA.values()}}},
    response_class=Response,
)
async def get_batch_report(
    batch_id: BatchId,
    session: Session,
    key: ReadKey,
    fmt: Annotated[
        ReportFormat,
        Query(alias="format", description="json, md (Markdown), csv, or html (one page, plots)"),
    ] = "json",
) -> Response:
    """Per model and arm: the paper's tables, pass rate, tokens, cost and latency with 95% intervals,
    judge agreement, the feedback-vs-control comparison, and (when the dataset labels them) outcomes
    and pass rate per flaw type; as JSON, Markdown, CSV or HTML with plots. JSON, Markdown and HTML
    carry the batch's manifest; CSV, which has no place for it, points to it in a `Link` header
    (rel="describedby"). Each pass rate is also shown corrected for the panel's measured error when the
    batch's acceptances cite one validity record (`correction`; else why not), with prediction-powered
    estimates where teachers decided some of the batch's runs."""
    batch = await _get(session, batch_id, key.project_id)
    items = await repo.items(session, batch_id)
    entries = await load_entries(session, items)
    flaws = await datasets_repo.flaw_labels(session, batch.dataset_id)
    served = await served_by(session, items)
    teachers = await batch_teachers(session, batch, items)
    labels = await batch_labels(session, batch, items)
    # statistics (bootstrap) and plots are CPU work: off the event loop
    body = await run_in_threadpool(
        lambda: render_report(build_report(batch, entries, flaws, served, teachers, labels), fmt)
    )
    headers = {"Link": f'</v1/batches/{batch.id}/manifest>; rel="describedby"'} if fmt == "csv" else None
    return Response(body, media_type=MEDIA[fmt], headers=headers)


Arm = Literal["loop", "control"]


@router.get("/{batch_id}/compare", response_model=BatchComparison, responses=_ERRORS)
async def compare_batches(
    batch_id: BatchId,
    session: Session,
    key: ReadKey,
    model: Annotated[str, Query(description="Side A's model under test (one of this batch's)")],
    with_model: Annotated[str, Query(description="Side B's model under test")],
    arm: Annotated[Arm, Query(description="Side A's arm")] = "loop",
    with_batch: Annotated[
        str | None, Query(description="Side B's batch (default: this one); it must be of this key's project")
    ] = None,
    with_arm: Annotated[Arm, Query(description="Side B's arm")] = "loop",
) -> BatchComparison:
    """A model and arm of this batch against another of this or another batch, paired on the problems
    both scored: pass rates with the exact McNemar test, and the mean difference of the final
    AvgQualityScore with its BCa bootstrap interval and Wilcoxon p-value. Batches of the same
    dataset share problems; unrelated ones give no pairs. 422 for a model the batch does not run."""
    sides = []
    for batch_ref, name, which in ((batch_id, model, arm), (with_batch or batch_id, with_model, with_arm)):
        batch = await _get(session, batch_ref, key.project_id)
        if name not in batch.models:
            raise Unprocessable(
                f"Batch {batch.id} does not run model {name!r} (it runs {', '.join(batch.models)})."
            )
        if which == "control" and not batch.control_arm:
            raise Unprocessable(f"Batch {batch.id} has no control arm.")
        entries = await load_entries(session, await repo.items(session, batch.id, name, which))
        sides.append((f"{batch.id} · {name}/{which}", entries))
    (a, left), (b, right) = sides
    # the bootstrap is CPU work: off the event loop
    row = await run_in_threadpool(lambda: compare("batches", a, left, b, right))
    return BatchComparison.model_validate(row)


@router.get("/{batch_id}/items", response_model=BatchItemPage, responses=_ERRORS)
async def list_batch_items(
    batch_id: BatchId,
    session: Session,
    key: ReadKey,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many items")] = 100,
    cursor: Annotated[
        str | None, Query(max_length=40, description="next_cursor of the previous page")
    ] = None,
    status_filter: Annotated[
        RunStatus | None, Query(alias="status", description="Only items in this state")
    ] = None,
    outcome: Annotated[ItemOutcome | None, Query(description="Only items that ended this way")] = None,
) -> BatchItemPage:
    """A batch's items in order, each with its outcome, error and cause, rounds, tokens and cost.

    Filter by ``status`` (queued, running, accepted, screened, exhausted, needs_review, error,
    cancelled: a run's statuses) or ``outcome`` (an ended item's status); page with ``cursor``."""
    batch = await _get(session, batch_id, key.project_id)
    after = _item_cursor(cursor)
    rows, next_after = await repo.item_page(
        session, batch_id, limit=limit, after=after, status=status_filter, outcome=outcome
    )
    results = await item_results(session, rows)
    named = await datasets_repo.external_ids(session, batch.dataset_id, {row.problem_id for row in rows})
    return BatchItemPage(
        items=[BatchItemPublic.of(row, results.get(row.id or 0), named.get(row.problem_id)) for row in rows],
        next_cursor=None if next_after is None else str(next_after),
    )


@router.get(
    "/{batch_id}/items/export",
    responses={**_ERRORS, 200: {"content": {m.split(";")[0]: {} for m in ITEM_MEDIA.values()}}},
    response_class=Response,
)
async def export_batch_items(
    batch_id: BatchId,
    session: Session,
    key: ReadKey,
    fmt: Annotated[
        ItemFormat, Query(alias="format", description="jsonl (manifest on the first line), csv, parquet")
    ] = "jsonl",
) -> Response:
    """Every item of the batch as one row: model, arm, repeat, outcome, rounds, final score per judge,
    tokens, cost, cache hits and `trace` (its run: GET /v1/runs/{run_id}). The manifest is JSONL's
    first line or Parquet's schema metadata (`thinkloop.manifest`); for CSV it is at the URL of the
    `Link` header (rel="describedby")."""
    batch = await _get(session, batch_id, key.project_id)
    made = await item_export(session, batch)
    body = await run_in_threadpool(made.render, fmt)  # Parquet encoding is CPU work
    headers = {"Content-Disposition": f'attachment; filename="batch-{batch.id}-items.{fmt}"'}
    if fmt == "csv":
        headers["Link"] = f'</v1/batches/{batch.id}/manifest>; rel="describedby"'
    return Response(body, media_type=ITEM_MEDIA[fmt], headers=headers)


@router.get("/{batch_id}/manifest", responses=_ERRORS)
async def get_batch_manifest(batch_id: BatchId, session: Session, key: ReadKey) -> dict[str, Any]:
    """What the batch was run with: thinkloop version and git revision, the dataset's name and
    content hash, each model's endpoint host, provider model id, temperature, seed and
    structured-output mode, prompt versions, the policy and its parameters, start and end times,
    and cache hits."""
    batch = await _get(session, batch_id, key.project_id)
    items = await repo.items(session, batch.id)
    return complete_manifest(batch, items, await served_by(session, items))


FigureName = Literal["comparison", "levels", "rounds", "agreement", "flaws", "paired"]  # figures.FIGURES
_FIGURE_MEDIA = {"svg": "image/svg+xml", "png": "image/png"}
_WHY_NO_DATA = {
    "agreement": "no arm has judged versions to compare judges on",
    "flaws": "its dataset labels no flaw types (metadata.flaw)",
    "paired": "it has no control arm with problems scored in both arms",
}


_FIGURE_CACHE = FigureCache()


@router.get(
    "/{batch_id}/figures/{name}",
    responses={**_ERRORS, 200: {"content": {media: {} for media in _FIGURE_MEDIA.values()}}},
    response_class=Response,
)
async def get_batch_figure(
    batch_id: BatchId,
    name: Annotated[FigureName, Path(description="Which figure of the report")],
    session: Session,
    key: ReadKey,
    fmt: Annotated[
        Literal["svg", "png"], Query(alias="format", description="svg (vector) or png (300 dpi)")
    ] = "svg",
) -> Response:
    """One of the report's figures, fit for a paper: comparison (pass rate and AvgQualityScore with
    their intervals), levels (per Bloom level and the holistic judge), rounds (Kaplan–Meier), agreement
    (Cohen's κ between judges), flaws (per labelled flaw type), paired (loop vs control per problem).
    The file carries the batch's whole manifest (as JSON in the SVG's metadata, in a PNG text chunk
    `thinkloop.manifest`). 404 when the batch has no data for that figure."""
    batch = await _get(session, batch_id, key.project_id)
    items = await repo.items(session, batch_id)
    state = _FIGURE_CACHE.state(batch, items)
    cached = _FIGURE_CACHE.get(state, name, fmt)
    if cached is not None:
        body = cached.body
    else:
        entries = await load_entries(session, items)
        flaws = await datasets_repo.flaw_labels(session, batch.dataset_id)
        served = await served_by(session, items)
        body = await run_in_threadpool(
            lambda: figures.render(build_report(batch, entries, flaws, served), name, fmt)
        )
        _FIGURE_CACHE.put(state, name, fmt, body)
    if body is None:
        why = _WHY_NO_DATA.get(name, "no item of it is scored yet")
        raise NotFound(f"This batch has no data for the figure {name!r}: {why}.")
    headers = {
        "Content-Disposition": f'inline; filename="batch-{batch.id}-{name}.{fmt}"',
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",  # an SVG runs nothing
        "X-Content-Type-Options": "nosniff",
    }
    return Response(body, media_type=_FIGURE_MEDIA[fmt], headers=headers)


def _item_cursor(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    return sequence_number(cursor, "cursor", "; use next_cursor from a previous page")


@router.get("/{batch_id}/events", responses={**_ERRORS, 200: {"content": {"text/event-stream": {}}}})
async def stream_batch_progress(
    batch_id: BatchId, request: Request, key: ReadKey, settings: AppSettings
) -> EventSourceResponse:
    """Server-Sent Events: `batch.progress` whenever the counts change, then `batch.finished`."""
    sessions = request.app.state.sessions
    async with short_session(sessions) as session:
        await _get(session, batch_id, key.project_id)
    return EventSourceResponse(
        _progress_events(request, batch_id, settings.sse_poll_s), ping=settings.sse_heartbeat_s
    )


async def _progress_events(request: Request, batch_id: str, poll_s: float) -> AsyncIterator[dict[str, Any]]:
    last: dict[str, Any] | None = None
    seq = 0
    while True:
        state = await progress(request.app.state.sessions, batch_id)  # a short session each time
        shown = {k: v for k, v in state.items() if k != "eta_s"}
        ended = state["status"] in BATCH_TERMINAL and not state["items"].get("running")
        if shown != last or ended:
            seq += 1
            kind = "batch.finished" if ended else "batch.progress"
            yield {"id": str(seq), "event": kind, "data": json.dumps(state, default=str)}
            last = shown
        if ended:
            return
        await asyncio.sleep(poll_s)
