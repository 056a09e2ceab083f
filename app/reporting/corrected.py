"""A batch report's corrected pass rates: which record's measured error corrects them (or why none
does), each arm's rate raw and corrected, and prediction-powered estimates where teachers labelled
some of the batch's own runs. The statistics are ``graphs.analysis.correction``'s; this is the glue."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from agents.outcome import Outcome
from app.models import Batch, BatchItem, ReviewItem
from app.reporting.data import Entry, by_problem, problem_pass
from graphs.analysis.correction import RESAMPLES, SEED, Calibration, corrected_rate, prediction_powered

METHOD = (
    "Rogan–Gladen (θ = (p − f) / (s − f), clipped to [0, 1]); 95 % percentile interval of a seeded "
    f"parametric bootstrap ({RESAMPLES} draws) of the batch's passes and the record's two counts, "
    "each drawn from its Agresti–Coull-adjusted share"
)
PPI_METHOD = (
    "prediction-powered inference (ppi_py, power-tuned), over items: teachers' labels and the panel's passes"
)
MIN_LABELS = 10  # fewer labels than this: the normal approximation behind PPI's interval is not to be trusted
Groups = Mapping[tuple[str, str], Sequence[Entry]]
# The record a batch's passes are corrected by (its counts, what it is), or why there is none
Found = tuple[Calibration | None, dict[str, Any] | None, str | None]


async def batch_labels(session: AsyncSession, batch: Batch, items: Sequence[BatchItem]) -> dict[str, bool]:
    """Run id → whether its teacher judged its final version sound, for the batch's runs a teacher of
    its project decided (the latest decision of the latest review)."""
    run_ids = [item.run_id for item in items if item.run_id is not None]
    if not run_ids:
        return {}
    query = (
        select(ReviewItem)
        .where(
            col(ReviewItem.project_id) == batch.project_id,
            col(ReviewItem.run_id).in_(run_ids),
            col(ReviewItem.decision).is_not(None),
        )
        .order_by(col(ReviewItem.created_at), col(ReviewItem.id))
    )
    return {row.run_id: row.decision == "sound" for row in (await session.execute(query)).scalars().all()}


def calibration_of(entries: Sequence[Entry]) -> Found:
    """The record that measured the batch's panel, as counts, with what it is; or why there is none."""
    passed = [e for e in entries if e.scored and e.result is not None and e.result.figures.get("passed")]
    warrants = [e.result.warrant for e in passed if e.result is not None and e.result.warrant is not None]
    valid = [w for w in warrants if w.get("status") == "valid"]
    if not passed:
        return _without("no item passed, so no acceptance carries a warrant to correct by")
    if not valid:
        return _without(_no_warrant(entries))
    if len(valid) < len(passed):
        return _without(
            f"{len(passed) - len(valid)} of {len(passed)} passes carry no warrant: some were judged by a "
            "panel no record measured, so no one measured error applies to the batch"
        )
    records = {str(w["record_id"]) for w in valid}
    if len(records) > 1:
        return _without(
            f"the acceptances cite {len(records)} validity records (the judge endpoint reported "
            "different models): no one panel's error corrects the batch"
        )
    return _counts(valid[0])


def _without(reason: str) -> Found:
    return None, None, reason


def _no_warrant(entries: Sequence[Entry]) -> str:
    if any(e.item.outcome == Outcome.SCREENED for e in entries):
        return (
            "the offline panel screens: a screen's passes carry no warrant, so its error is not measured here"
        )
    return (
        "the panel that judged this batch has no validity record its project cites (no acceptance "
        "carries a warrant): validate it on held-out labelled problems with `thinkloop judges validate "
        "--save`, then run the batch again"
    )


def _counts(warrant: Mapping[str, Any]) -> Found:
    flawed, sound = warrant.get("false_accept") or {}, warrant.get("specificity") or {}
    if not sound.get("n") or not flawed.get("n"):
        return _without(
            "the record cited keeps no count of sound versions passed (saved before records kept it)"
        )
    calibration = Calibration(int(flawed["count"]), int(flawed["n"]), int(sound["count"]), int(sound["n"]))
    record = {
        "record_id": str(warrant["record_id"]),
        "false_accepts": calibration.false_accepts,
        "flawed": calibration.flawed,
        "sound_passed": calibration.sound_passed,
        "sound": calibration.sound,
        "split": warrant.get("split"),
        "set": warrant.get("set"),
        "set_hash": warrant.get("set_hash"),
    }
    return calibration, record, None


def corrected_figure(passes: float, n: int, calibration: Calibration | None) -> dict[str, Any] | None:
    """One rate corrected: ``{"corrected", "corrected_ci95", "chance", "could_swap"}`` (None: no record)."""
    found = corrected_rate(passes, n, calibration) if calibration is not None else None
    if found is None:
        return None
    return {
        "corrected": found.estimate,
        "corrected_ci95": list(found.ci95),
        "chance": found.chance,
        "could_swap": found.could_swap,
    }


def correction(groups: Groups, found: Found, labels: Mapping[str, bool] | None = None) -> dict[str, Any]:
    """The report's ``correction`` section: the record ``found`` (``calibration_of``) or why there is
    none, the method, and each model and arm's pass rate raw and corrected, with a prediction-powered
    estimate where teachers labelled enough of its runs (``labels``: ``batch_labels``)."""
    calibration, record, reason = found
    rows = []
    for (model, arm), group in groups.items():
        shares = [problem_pass(results) for results in by_problem(group).values()]
        figure = corrected_figure(sum(shares), len(shares), calibration) if shares else None
        rate = sum(shares) / len(shares) if shares else None
        rows.append(
            {"model": model, "arm": arm, "problems": len(shares), "pass_rate": rate}
            | (figure or dict.fromkeys(("corrected", "corrected_ci95", "chance", "could_swap")))
            | {"ppi": _ppi(group, labels or {})}
        )
    return {
        "status": "uncorrected" if calibration is None else "corrected",
        "reason": reason,
        "method": METHOD if calibration is not None else None,
        "seed": SEED,
        "resamples": RESAMPLES,
        "record": record,
        "ppi_method": PPI_METHOD,
        "ppi_min_labels": MIN_LABELS,
        "rows": rows,
    }


def _ppi(group: Sequence[Entry], labels: Mapping[str, bool]) -> dict[str, Any] | None:
    """PPI over the arm's scored items: those a teacher decided are the labelled set (None: none was
    decided; no estimate: fewer than MIN_LABELS were, or no item is left unlabelled)."""
    scored = [e for e in group if e.scored and e.result is not None]
    decided = [e for e in scored if e.item.run_id in labels]
    if not decided:
        return None
    unlabelled = len(scored) - len(decided)
    if len(decided) < MIN_LABELS:
        return {"labelled": len(decided), "unlabelled": unlabelled, "estimate": None, "ci95": None}
    found = prediction_powered(
        [labels[str(e.item.run_id)] for e in decided],
        [bool(e.result.figures.get("passed")) for e in decided if e.result is not None],
        [bool(e.result.figures.get("passed")) for e in scored if e.item.run_id not in labels and e.result],
    )
    if found is None:  # every scored item labelled: nothing for the panel's verdicts to add
        return {"labelled": len(decided), "unlabelled": unlabelled, "estimate": None, "ci95": None}
    return {
        "labelled": found.labelled,
        "unlabelled": found.unlabelled,
        "estimate": found.estimate,
        "ci95": list(found.ci95),
    }
