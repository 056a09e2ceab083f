"""/v1/judges/validate: how well a judge panel catches labelled flaws, measured on request."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.ext.asyncio import AsyncSession

from agents.labelled.canonical import canonical_hash
from agents.labelled.labels import LabelledItem, LabelsError
from agents.llm.models import ModelConfigError
from agents.panel import PanelFactory
from agents.schemas import JUDGES
from app.access.metering import Meter, bench_meter, settle_bench
from app.deps import VALIDATE, AppSettings, Factory, Session, WriteKey, check_models, holds
from app.errors import Forbidden, Unprocessable, problem_responses
from app.models import ApiKey, Project, ValidityRecord
from app.settings import Settings
from app.validity.provenance import REVIEWS, SHIPPED, NotRecordable, preflight, shipped_hash
from app.validity.records import Source, save_report, source_hashes
from app.validity.report import to_html, to_markdown
from app.validity.schemas import ValidityFormat, ValidityReport, ValidityRequest
from app.validity.service import MAX_VERSIONS, Runs, builtin_set, select_split, size, validate

router = APIRouter(prefix="/v1/judges", tags=["judges"])
_ERRORS = problem_responses(
    {
        403: "save: true from a key without the validate or admin scope",
        413: "Body too large",
        422: "Invalid items, an unknown judge model, an empty split, too many versions, or (save) a bench "
        "or set that cannot be recorded",
        429: "The project or the key is at a daily token or cost cap",
    }
)
MEDIA = {"json": "application/json", "md": "text/markdown", "html": "text/html"}
# A labelled set as large as MAX_VERSIONS allows is about 1 MB of JSON; the default body limit is 64 KiB.
BODY_LIMITS = {"/v1/judges/validate": 4 * 1024 * 1024, "/v1/judges/calibrate": 4 * 1024 * 1024}


def _chosen(body: ValidityRequest, items: list[LabelledItem]) -> list[LabelledItem]:
    """The items of the asked split; 422 when there are none, or too many versions to judge."""
    try:
        chosen = select_split(items, body.split, "the shipped set" if body.builtin else "items")
    except LabelsError as exc:
        raise Unprocessable(str(exc)) from exc
    versions = size(chosen, body.twins)
    if versions > MAX_VERSIONS:
        raise Unprocessable(
            f"These items make {versions} versions to judge ({versions * len(JUDGES)} judge calls); "
            f"a request judges at most {MAX_VERSIONS}. Send fewer items, one split, or no twins.",
            versions=versions,
            max_versions=MAX_VERSIONS,
        )
    return chosen


async def _charge(request: Request, key_id: str, project_id: str, meter: Meter) -> None:
    """Charge the bench's calls to the project's and the key's ledgers and give back what it
    reserved, in a session of its own (the request's may be failing), shielded so a client that
    goes away mid-bench is still charged."""
    await asyncio.shield(settle_bench(request.app.state.sessions, (project_id, key_id), meter))


async def _provenance(request: Request, body: ValidityRequest) -> tuple[str, str, dict[str, str]]:
    """The set's name (``set_name``; default shipped, or items), its hash and each source's (by the
    name its items give it): of the items exactly as the request sent them (the JSON body's
    ``items``), or of the shipped set."""
    if body.items is None:
        return body.set_name or SHIPPED, shipped_hash(), {}
    sent = (await request.json())["items"]  # the body FastAPI read, as sent (before stripping)
    return body.set_name or "items", canonical_hash(sent), source_hashes(body.items, sent)


async def save_bench(
    session: AsyncSession,
    factory: PanelFactory,
    report: dict[str, Any],
    labelled: Labelled,
    project: str,
    floor: float,
    calibration: dict[str, Any] | None = None,
) -> ValidityRecord:
    """Store the report as a validity record of the project's (with ``calibration``, the threshold
    `judges calibrate` found); 422 when it is no measurement."""
    items, (name, digest, hashes), source = labelled
    try:
        record = await save_report(
            session,
            factory.registry,
            report,
            items,
            name,
            project,
            digest=digest,
            floor=floor,
            source=source,
            hashes=hashes or None,
        )
    except NotRecordable as exc:
        raise Unprocessable(str(exc), excluded=report["excluded"]) from exc
    if calibration is not None:
        record.calibration = calibration
    await session.commit()
    return record


def _preflight(items: list[LabelledItem], chosen: list[LabelledItem], provenance: tuple[str, str]) -> None:
    """422 before any call when no record of the set could be saved (contradictory labels, a
    reserved name with another hash, too few held-out sound versions)."""
    try:
        preflight(items, chosen, *provenance)
    except NotRecordable as exc:
        raise Unprocessable(str(exc)) from exc


def get_temporary_runs(request: Request) -> Callable[[], AbstractAsyncContextManager[Runs]]:
    """How the app opens a temporary store for a bench's runs (``app.runs.temporary``, set by
    ``app.main``: app.runs depends on this package, so the opener is handed in)."""
    opener: Callable[[], AbstractAsyncContextManager[Runs]] = request.app.state.temporary_runs
    return opener


TemporaryRuns = Annotated[Callable[[], AbstractAsyncContextManager[Runs]], Depends(get_temporary_runs)]
# The items, their (name, hash, each source's hash) and their source: what a bench judged and a
# record names.
Labelled = tuple[list[LabelledItem], tuple[str, str, dict[str, str]], Source | None]


async def _labelled(
    request: Request, session: AsyncSession, body: ValidityRequest, project_id: str
) -> Labelled:
    """The items the request names: its own (hashed as sent), the shipped set, or the project's
    review set (loaded by ``app.reviews.labels.review_set``, which ``app.main`` hands in as
    ``app.state.review_set``: app.reviews depends on this package). 422 for an empty review set."""
    if not body.review_set:
        items = builtin_set() if body.items is None else body.items
        return items, await _provenance(request, body), None
    project = await session.get(Project, project_id)
    assert project is not None
    found = await request.app.state.review_set(session, project)
    if not found.items:
        raise Unprocessable(f"Project {project.name!r} has no decided review yet: its review set is empty.")
    return found.items, (found.name, found.hash, {}), Source(REVIEWS, len(found.reviewers))


async def run_bench(
    request: Request,
    body: ValidityRequest,
    key: ApiKey,
    session: AsyncSession,
    factory: PanelFactory,
    settings: Settings,
    temporary_runs: Callable[[], AbstractAsyncContextManager[Runs]],
    **options: Any,
) -> tuple[dict[str, Any], Labelled]:
    """The bench both POST /v1/judges/validate and /calibrate run: refuse a save the key may not
    make (403) or the items cannot back (422) before any call, reserve each version's calls against
    the daily caps (429 at a cap, also mid-way), judge every chosen version once with ``options``
    (``validate``'s keywords), and charge what was spent, whatever happened."""
    if body.save and not holds(key, VALIDATE):  # before any call: nothing is spent on a refusal
        raise Forbidden(
            "Saving a validity record needs the 'validate' or 'admin' scope; this key has neither."
        )
    judge = body.judge_model or settings.judge_model
    check_models(factory.registry, judge)
    labelled = await _labelled(request, session, body, key.project_id)
    chosen = _chosen(body, labelled[0])
    if body.save:
        _preflight(labelled[0], chosen, labelled[1][:2])
    # its first version reserved before any call, and each next one before its calls (429 at a cap)
    owner, first = (key.project_id, key.id), chosen[0].problem
    meter = await bench_meter(request.app.state.sessions, settings, factory.registry, owner, judge, first)
    try:
        async with temporary_runs() as runs:
            policy = body.policy or settings.policy
            report = await validate(chosen, factory, judge, runs, policy=policy, meter=meter, **options)
    except ModelConfigError as exc:
        raise Unprocessable(str(exc)) from exc
    finally:
        await _charge(request, key.id, key.project_id, meter)
    if meter.budget is not None and meter.budget.refused is not None:  # stopped at a cap mid-way
        raise meter.budget.refused
    return report, labelled


@router.post(
    "/validate",
    response_model=ValidityReport,
    responses={**_ERRORS, 200: {"content": {MEDIA["md"]: {}, MEDIA["html"]: {}}}},
)
async def validate_judges(
    body: ValidityRequest,
    key: WriteKey,
    session: Session,
    factory: Factory,
    settings: AppSettings,
    temporary_runs: TemporaryRuns,
    request: Request,
    fmt: Annotated[
        ValidityFormat, Query(alias="format", description="json (as the CLI's --format json), md or html")
    ] = "json",
) -> ValidityReport | Response:
    """Judge every version of labelled items once, as round 1 of the loop, and measure the panel
    against the labels per split: detection, false accepts, specificity, Cohen's κ and calibration
    per judge, the adversarial gap, per flaw type, each rate with n and its Wilson 95 % interval.
    Versions whose judge calls failed (or that stayed undecided) are counted in ``excluded`` and
    ``calls`` and are in no rate; ``complete`` is false then. As JSON (the CLI's ``--format json``),
    Markdown, or HTML with a reliability diagram per split.

    Synchronous: the answer comes once every version is judged (seven judge calls each, at most
    MAX_VERSIONS versions), so a request to a slow endpoint takes as long as the bench does.

    With ``save: true`` (a key with the **validate** or **admin** scope besides write; 403 before
    any call otherwise) the held-out split's figures are stored as a validity record of the key's
    project, which the project's accepted runs of the panel may then cite as their warrant
    (GET /v1/panels says which record they cite); 422 (nothing stored) when any version errored,
    no held-out problem was judged, fewer than 20 held-out sound versions were or too few of them
    passed (THINKLOOP_SPECIFICITY_FLOOR), or the endpoint's replies reported no model id or
    several; 422 before any call when the items' labels contradict themselves (a version both
    flawed and sound) or ``set_name`` is a shipped set's (``shipped``) and the items are not that
    set. The record holds the hash of the items as sent (``thinkloop datasets hash`` of the same
    JSONL reproduces it).

    Model work like a run's: each version's calls are reserved against the project's and the key's
    daily token and cost caps before they are made (429 before any call when a cap is reached; a
    bench that reaches one mid-way stops there, with a 429), and every call is charged to the
    project's and the key's ledgers (a client that goes away mid-bench is charged for the calls made)."""
    under_test = body.model_under_test or settings.model
    bench = (request, body, key, session, factory, settings, temporary_runs)
    report, labelled = await run_bench(*bench, twins=body.twins, model_under_test=under_test)
    if body.save:
        await save_bench(session, factory, report, labelled, key.project_id, settings.specificity_floor)
    if fmt == "json":
        return ValidityReport.model_validate(report)
    # drawing the diagrams is CPU work: off the event loop
    text = to_markdown(report) if fmt == "md" else await run_in_threadpool(to_html, report)
    return Response(text, media_type=MEDIA[fmt])
