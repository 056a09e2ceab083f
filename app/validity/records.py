"""Validity records and warrants: what a saved bench measured of one exact panel, and what an
acceptance by that panel carries.

A record is written only from a bench in which every version was judged: a version that errored is
not a measurement, and a figure with it left out (or counted as a rejection) would be a failure
passed off as a score. A run's warrant is the newest record of its panel's identity saved in its
project or in the default project (where the operator's `thinkloop judges validate --save` writes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from agents.identity import PanelIdentity, panel_identity
from agents.models import ModelRegistry
from agents.validity.labels import LabelledItem
from app.models import DEFAULT_PROJECT, Project, ValidityRecord
from app.version import version
from graphs.result import RunResult
from graphs.scoring import Outcome, ScoringPolicy, get_policy
from graphs.validity_metrics import share as bench_share

# The figures a record keeps, each a share of the headline split.
RECORDED = ("false_accept", "specificity", "detection", "adversarial_gap")
NO_WARRANT: dict[str, Any] = {"status": "none"}


class NotRecordable(ValueError):
    """A bench that must not become a validity record (a version errored, nothing flawed judged)."""


def identity_of(registry: ModelRegistry, judge_model: str, policy: ScoringPolicy) -> PanelIdentity:
    """The identity of ``judge_model``'s panel under ``policy`` in this thinkloop."""
    return panel_identity(judge_model, registry.get(judge_model), policy, version())


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


async def newest_record(session: AsyncSession, panel_id: str, project_id: str) -> ValidityRecord | None:
    """The newest record of ``panel_id`` that ``project_id`` may cite (its own, or the default's)."""
    query = (
        select(ValidityRecord)
        .where(col(ValidityRecord.panel_id) == panel_id)
        .where(col(ValidityRecord.project_id).in_({project_id, DEFAULT_PROJECT}))
        .order_by(col(ValidityRecord.measured_at).desc(), col(ValidityRecord.id).desc())
        .limit(1)
    )
    return (await session.execute(query)).scalars().first()


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


def uncertified(warrant: Mapping[str, Any], bound: float | None) -> str | None:
    """Why an acceptance by a panel with ``warrant`` may not stand under a required ``bound`` on the
    false-accept upper bound; None when it may (no bound, or a record at or below it)."""
    if bound is None:
        return None
    if warrant.get("status") != "valid":
        return (
            f"panel not certified: this panel has never been validated (required: false accepts "
            f"≤ {bound:.1%})"
        )
    upper = warrant.get("false_accept_upper")
    if upper is not None and upper <= bound:
        return None
    shown = "unknown" if upper is None else f"{upper:.1%}"
    return (
        f"panel not certified: its newest validity record ({warrant['record_id']}) bounds false accepts "
        f"at {shown} (95 %), above the required {bound:.1%}"
    )


@dataclass(frozen=True)
class Standing:
    """What a panel brings to a run: its warrant (cited when the run is accepted) and, under a
    required warrant it does not meet, why an acceptance must go to review instead."""

    panel_id: str
    warrant: dict[str, Any]
    uncertified: str | None


async def standing(
    session: AsyncSession, identity: PanelIdentity, project_id: str, bound: float | None
) -> Standing:
    """The panel ``identity``'s standing for a run of ``project_id`` under a required ``bound``."""
    warrant = warrant_of(await newest_record(session, identity.id, project_id))
    return Standing(identity.id, warrant, uncertified(warrant, bound))


async def run_standing(
    session: AsyncSession,
    registry: ModelRegistry,
    judge_model: str,
    policy: ScoringPolicy,
    project_id: str,
    required: float | None,
) -> Standing:
    """The standing of a run's panel: the project's own required warrant over ``required`` (the
    setting), and the newest record its project may cite."""
    project = await session.get(Project, project_id)
    own = project.require_warrant if project is not None else None
    bound = own if own is not None else required
    return await standing(session, identity_of(registry, judge_model, policy), project_id, bound)


def with_warrant(result: RunResult, panel: Standing) -> RunResult:
    """``result`` carrying its panel's warrant when it was accepted (any other outcome carries none)."""
    warrant = panel.warrant if result.outcome == Outcome.ACCEPTED else None
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
    identity = identity_of(registry, report["judge_model"], get_policy(report["policy"]))
    record = new_record(identity, report, set_name, set_hash(items), project_id)
    session.add(record)
    await session.flush()
    report["record"] = record.model_dump(mode="json", exclude={"project_id", "identity", "false_accept_high"})
    return record
