"""/v1/judges/calibrate: the acceptance threshold that guarantees a false-accept bound, found on
request (the CLI's `thinkloop judges calibrate`), charged as model work as the validity bench is."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from app.deps import AppSettings, Factory, Session, WriteKey
from app.errors import problem_responses
from app.models import ValidityRecord
from app.validity.calibration_schemas import CalibrationRequest, CalibrationResult
from app.validity.endpoints import TemporaryRuns, run_bench, save_bench

router = APIRouter(prefix="/v1/judges", tags=["judges"])
_ERRORS = problem_responses(
    {
        403: "save: true from a key without the validate or admin scope",
        413: "Body too large",
        422: "Invalid items or target (alpha, delta strictly between 0 and 1), an unknown judge model, "
        "an empty split, too many versions, or (save) a bench or set that cannot be recorded",
        429: "The project or the key is at a daily token or cost cap",
    }
)


@router.post("/calibrate", response_model=CalibrationResult, responses=_ERRORS)
async def calibrate_judges(
    body: CalibrationRequest,
    key: WriteKey,
    session: Session,
    factory: Factory,
    settings: AppSettings,
    temporary_runs: TemporaryRuns,
    request: Request,
) -> CalibrationResult:
    """Find the least strict Q threshold at which the panel's false accepts among the versions it
    accepts itself are ≤ alpha with confidence 1 − delta, on labelled items (fixed-sequence
    Clopper–Pearson tests, strict to lenient: ``steps``), and the coverage it keeps: the share of
    sound versions still accepted. The same bench as POST /v1/judges/validate (each version judged
    once, as round 1 of the loop), on one split (held-out by default), without twins.

    With ``save: true`` (a key with the **validate** or **admin** scope besides write; 403 before
    any call otherwise) the bench is stored as a validity record of the panel's exact identity in
    the key's project, with the threshold: the project's runs with a guarantee target escalate an
    acceptance below it (docs/guarantee.md). 422, nothing stored, where validate's save refuses.

    Model work like a run's: each version's calls are reserved against the project's and the key's
    daily caps before they are made (429 at a cap) and charged to their ledgers."""
    guarantee = (body.alpha, body.delta)
    report, labelled = await run_bench(
        request, body.bench(), key, session, factory, settings, temporary_runs, guarantee=guarantee
    )
    record = None
    if body.save:
        floor = settings.specificity_floor
        record = await save_bench(
            session, factory, report, labelled, key.project_id, floor, report["calibration"]
        )
    return _result(report, record)


def _result(report: dict[str, Any], record: ValidityRecord | None) -> CalibrationResult:
    found = report["calibration"]
    return CalibrationResult.model_validate(
        {
            **{k: v for k, v in found.items() if k != "score"},
            "judge_model": report["judge_model"],
            "policy": report["policy"],
            "record_id": record.id if record is not None else None,
            "panel_id": record.panel_id if record is not None else None,
        }
    )
