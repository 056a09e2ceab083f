"""Validity records and warrants: what a saved bench measured of one exact panel, and what an
acceptance by that panel carries.

A record is written only from a bench in which every version was judged: a version that errored is
not a measurement, and a figure with it left out (or counted as a rejection) would be a failure
passed off as a score. A record holds the held-out split's figures only: a bench with no held-out
problem (the tune split is what the panel's checks may have been tuned on) saves nothing. A
record's identity holds the model id the judge endpoint reported in the bench's replies: a bench
whose calls reported none (nothing answered) or several (the endpoint changed under it) saves
nothing. A run's warrant is the record its project cites of its panel's identity (with the model
id the endpoint reported in the accepted round): ``app.validity.selection`` says which.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from agents.identity import NO_WARRANT, PanelIdentity, Warrants, panel_identity, uncertified
from agents.models import ModelRegistry
from agents.validity.labels import LabelledItem
from app.models import DEFAULT_PROJECT, Project, ValidityRecord
from app.validity import selection
from app.version import version
from graphs.refinement import round_reported
from graphs.result import RunResult
from graphs.scoring import DECISION_VERSION, Outcome, ScoringPolicy, get_policy
from graphs.validity_metrics import share as bench_share

# The figures a record keeps, each a share of the headline split.
RECORDED = ("false_accept", "specificity", "detection", "adversarial_gap")
__all__ = ["NO_WARRANT", "NotRecordable", "uncertified", "warrant_of"]


class NotRecordable(ValueError):
    """A bench that must not become a validity record (a version errored, nothing flawed judged)."""


def identity_of(
    registry: ModelRegistry, judge_model: str, policy: ScoringPolicy, reported_model: str | None = None
) -> PanelIdentity:
    """The identity of ``judge_model``'s panel under ``policy`` in this thinkloop, its endpoint having
    reported ``reported_model`` (None: not known yet)."""
    return panel_identity(
        judge_model,
        registry.get(judge_model),
        policy,
        version(),
        decision=DECISION_VERSION,
        reported_model=reported_model,
    )


def bench_identity(registry: ModelRegistry, report: Mapping[str, Any]) -> PanelIdentity:
    """The identity of the panel a bench ``report`` measured: with the one model id its endpoint
    reported. NotRecordable when the replies reported none (nothing answered) or several."""
    identity = identity_of(registry, report["judge_model"], get_policy(report["policy"]))
    if identity.offline:
        return identity
    reported = list(report.get("reported_models") or [])
    if not reported:
        raise NotRecordable(
            "the judge endpoint never answered, so it reported no model id: a panel's identity holds the "
            "model id its endpoint reports, and no validity record was saved"
        )
    if len(reported) > 1:
        raise NotRecordable(
            f"the judge endpoint reported {len(reported)} model ids during the bench "
            f"({', '.join(repr(m) for m in reported)}): no one panel was measured, so no validity "
            "record was saved"
        )
    return identity.reporting(reported[0])


def set_hash(items: Sequence[LabelledItem]) -> str:
    """SHA-256 of the labelled set's canonical JSON (every item, in order, as it was read)."""
    lines = [json.dumps(i.model_dump(mode="json", exclude_none=True), sort_keys=True) for i in items]
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def share(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``{"n", "count", "rate", "low", "high"}``: the bench's share with its Wilson 95 % interval
    (taken from the bench when it reports one, else computed by the bench's own ``share``)."""
    if "low" in raw and "high" in raw:
        return {key: raw[key] for key in ("n", "count", "rate", "low", "high")}
    n, count = int(raw["n"]), int(raw["count"])
    measured = bench_share([True] * count + [False] * (n - count))
    return {key: measured[key] for key in ("n", "count", "rate", "low", "high")}


def check_recordable(report: Mapping[str, Any]) -> dict[str, Any]:
    """The headline split's figures of a bench report; NotRecordable when it is no measurement."""
    excluded = report["excluded"]
    if excluded["total"]:
        raise NotRecordable(
            f"{excluded['total']} of {report['versions']} versions did not end in the panel's verdict "
            f"({excluded['errored']} errored, {excluded['undecided']} undecided): a failure is not a "
            "measurement, so no validity record was saved. Fix the cause and validate again."
        )
    summary: dict[str, Any] = report["splits"][report["targets"]["split"]]
    if summary["split"] != "heldout":
        # the headline is "all" only when no version was held out: tune problems, which the panel's
        # checks may have been tuned on, would flatter it
        raise NotRecordable(
            "the bench judged no held-out problem: a warrant rests only on problems kept out of all "
            'tuning, so no validity record was saved. Mark the problems of your set "split": "heldout" '
            "(and never tune on them), then validate again"
        )
    if not summary["false_accept"]["n"]:
        raise NotRecordable("the split holds no flawed problem: there is no false-accept rate to record")
    return summary


def new_record(
    identity: PanelIdentity,
    report: Mapping[str, Any],
    set_name: str,
    digest: str,
    project_id: str = DEFAULT_PROJECT,
) -> ValidityRecord:
    """The record of a bench ``report`` of the panel ``identity`` (NotRecordable: none)."""
    summary = check_recordable(report)
    if not identity.answered:
        raise NotRecordable("the panel's endpoint reported no model id: its identity is incomplete")
    figures = {name: share(summary[name]) for name in RECORDED}
    return ValidityRecord(
        project_id=project_id,
        panel_id=identity.id,
        identity=identity.parts(),
        judge_model=identity.judge_model,
        set_name=set_name,
        set_hash=digest,
        split=summary["split"],
        n_flawed=figures["false_accept"]["n"],
        n_sound=figures["specificity"]["n"],
        false_accept=figures["false_accept"],
        false_accept_high=figures["false_accept"]["high"],
        specificity=figures["specificity"],
        detection=figures["detection"],
        adversarial_gap=figures["adversarial_gap"],
    )


def warrant_of(record: ValidityRecord | None) -> dict[str, Any]:
    """The warrant an acceptance carries: the record's false-accept figures, or ``{"status": "none"}``."""
    if record is None:
        return dict(NO_WARRANT)
    return {
        "status": "valid",
        "record_id": record.id,
        "panel_id": record.panel_id,
        "false_accept_upper": record.false_accept_high,
        "false_accept": record.false_accept,
        "split": record.split,
        "set": record.set_name,
        "measured_at": record.measured_at.isoformat(),
    }


async def run_warrants(
    session: AsyncSession,
    registry: ModelRegistry,
    judge_model: str,
    policy: ScoringPolicy,
    project_id: str,
    required: float | None,
) -> Warrants:
    """What a run's panel may cite: the record its project cites (``selection``: its pin, else the
    one of the most held-out flawed versions) of each model id the panel's endpoint was measured
    reporting, and the bound required of an acceptance (the project's own over ``required``, the
    setting). The round's reported id picks one when the run is scored."""
    project = await session.get(Project, project_id)
    own = project.require_warrant if project is not None else None
    bound = own if own is not None else required
    panel = identity_of(registry, judge_model, policy)
    rows = await selection.citable_records(session, project_id, judge_model=judge_model)
    # the records of this very panel (every part equal), its endpoint reporting the record's model id
    mine = [row for row in rows if panel.reporting(_reported(panel, row)).id == row.panel_id]
    chosen = selection.choose(mine, await selection.pins_of(session, project_id))
    cited = {_reported(panel, row): warrant_of(row) for row in chosen.values()}
    return Warrants(panel, cited, bound)


def _reported(panel: PanelIdentity, record: ValidityRecord) -> str | None:
    """The model id the record's endpoint reported (None for the offline panel, which has no endpoint)."""
    return None if panel.offline else record.identity.get("reported_model")


def with_warrant(result: RunResult, warrants: Warrants) -> RunResult:
    """``result`` carrying its panel's warrant when it was accepted (any other outcome carries none):
    the warrant of the panel whose endpoint reported the accepted round's model id."""
    warrant = None
    if result.outcome == Outcome.ACCEPTED and result.rounds:
        last = result.rounds[-1]
        warrant = warrants.warrant(round_reported(last.outcomes, last.solver))
    return result.model_copy(update={"warrant": warrant})


async def save_report(
    session: AsyncSession,
    registry: ModelRegistry,
    report: dict[str, Any],
    items: Sequence[LabelledItem],
    set_name: str,
    project_id: str = DEFAULT_PROJECT,
) -> ValidityRecord:
    """Store a bench ``report`` over ``items`` as a record of its panel's identity, and put the
    record in the report. NotRecordable (nothing stored) when a version errored."""
    check_recordable(report)  # a failed version first: it says more than a missing model id
    identity = bench_identity(registry, report)
    record = new_record(identity, report, set_name, set_hash(items), project_id)
    session.add(record)
    await session.flush()
    report["record"] = record.model_dump(mode="json", exclude={"project_id", "identity", "false_accept_high"})
    return record
