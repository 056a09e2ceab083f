"""Validity records and warrants: what a saved bench measured of one exact panel, and what an
acceptance by that panel carries.

A record is written only from a bench in which every version was judged: a version that errored is
not a measurement, and a figure with it left out (or counted as a rejection) would be a failure
passed off as a score. A record holds the held-out split's figures only: a bench with no held-out
problem (the tune split is what the panel's checks may have been tuned on) saves nothing, nor does
one with fewer than MIN_SOUND held-out sound versions or with fewer than the floor of them passed
(a panel that refuses everything has no false accepts), nor one of a set whose labels contradict
themselves or that takes a shipped set's name with another hash (app.validity.provenance). A
record's identity holds the model id the judge endpoint reported in the bench's replies: a bench
whose calls reported none (nothing answered) or several (the endpoint changed under it) saves
nothing. A run's warrant is the record its project cites of its panel's identity (with the model
id the endpoint reported in the accepted round): ``app.validity.selection`` says which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from agents.identity import (
    DEFAULT_SPECIFICITY_FLOOR,
    NO_WARRANT,
    PanelIdentity,
    Requirement,
    Warrants,
    panel_identity,
    uncertified,
)
from agents.labelled.canonical import canonical_hash
from agents.labelled.labels import LabelledItem
from agents.llm.models import ModelRegistry
from agents.outcome import Outcome
from app.models import DEFAULT_PROJECT, Project, ValidityRecord
from app.validity import provenance, selection
from app.validity.provenance import MIN_SOUND, SHIPPED, NotRecordable
from app.validity.record_sources import (
    BENCHMARK,
    OWN,
    Source,
    record_sources,
    share,
    source_hashes,
    sources_of,
    warrant_source,
)
from app.version import version
from graphs.decision import decision_version
from graphs.result import RunResult
from graphs.scoring import ScoringPolicy, get_policy

# The figures a record keeps, each a share of the headline split.
RECORDED = ("false_accept", "specificity", "detection", "adversarial_gap")
__all__ = [
    "NO_WARRANT",
    "NotRecordable",
    "Source",
    "record_sources",
    "share",
    "source_hashes",
    "uncertified",
    "warrant_of",
]


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
        decision=decision_version(),
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
    """The set hash (agents.labelled.canonical) of ``items`` as they were sent: each item's fields
    that were given, as read. For a file, :func:`agents.labelled.canonical.file_hash` hashes its
    lines exactly; the two agree unless a text had surrounding whitespace (stripped when read)."""
    return canonical_hash(i.model_dump(mode="json", exclude_unset=True) for i in items)


def check_recordable(report: Mapping[str, Any], floor: float = DEFAULT_SPECIFICITY_FLOOR) -> dict[str, Any]:
    """The headline split's figures of a bench report; NotRecordable when it is no measurement, or
    when its sound versions are fewer than MIN_SOUND or the share passed is below ``floor``."""
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
    _check_sound(summary["specificity"], floor)
    return summary


def _check_sound(specificity: Mapping[str, Any], floor: float) -> None:
    """NotRecordable unless at least MIN_SOUND sound versions were judged and at least ``floor`` of
    them passed: a panel that refuses everything has no false accepts, and its bound would say so."""
    n, count = int(specificity["n"]), int(specificity["count"])
    if n < MIN_SOUND:
        raise NotRecordable(
            f"the held-out split holds {n} sound version(s) (controls and corrected versions); a record "
            f"needs at least {MIN_SOUND}, or a panel that refuses everything would look perfect: no "
            "validity record was saved"
        )
    if count / n < floor:  # a share, as the floor is one (7 of 10 meets 0.7)
        raise NotRecordable(
            f"the panel passed {count} of {n} sound versions ({count / n:.1%}), below the floor of "
            f"{floor:.0%} (THINKLOOP_SPECIFICITY_FLOOR): a panel that refuses sound problems has few false "
            "accepts for that reason alone, so no validity record was saved"
        )


def new_record(
    identity: PanelIdentity,
    report: Mapping[str, Any],
    set_name: str,
    digest: str,
    project_id: str = DEFAULT_PROJECT,
    floor: float = DEFAULT_SPECIFICITY_FLOOR,
    source: Source | None = None,
    hashes: Mapping[str, str] | None = None,
) -> ValidityRecord:
    """The record of a bench ``report`` of the panel ``identity`` (NotRecordable: none), with its
    figures per source (``hashes``: each source's set hash, by name; :func:`sources_of`)."""
    summary = check_recordable(report, floor)
    if not identity.answered:
        raise NotRecordable("the panel's endpoint reported no model id: its identity is incomplete")
    figures = {name: share(summary[name]) for name in RECORDED}
    source = source or Source(SHIPPED if set_name == SHIPPED else OWN)
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
        n_twins=figures["adversarial_gap"]["n"],
        false_accept=figures["false_accept"],
        false_accept_high=figures["false_accept"]["high"],
        specificity=figures["specificity"],
        specificity_low=figures["specificity"]["low"],
        detection=figures["detection"],
        adversarial_gap=figures["adversarial_gap"],
        source_kind=source.kind,
        reviewers=source.reviewers,
        sources=sources_of(report, figures, (set_name, digest), source, hashes or {}),
    )


def warrant_of(record: ValidityRecord | None) -> dict[str, Any]:
    """The warrant an acceptance carries: the record's false-accept and sound-passed figures, its
    set's name and the first 12 hex digits of its hash; or ``{"status": "none"}``."""
    if record is None:
        return dict(NO_WARRANT)
    return {
        "status": "valid",
        "record_id": record.id,
        "panel_id": record.panel_id,
        "false_accept_upper": record.false_accept_high,
        "false_accept": record.false_accept,
        # None on a record saved before the bound was kept: it meets no required warrant
        "sound_passed_lower": record.specificity_low,
        "specificity": record.specificity,
        "split": record.split,
        "set": record.set_name,
        "set_hash": record.set_hash[:12],
        "source": {"kind": record.source_kind, "name": record.set_name, "reviewers": record.reviewers},
        # where the bound was measured, per source: what a source requirement is checked against
        "sources": [warrant_source(entry) for entry in record_sources(record)],
        "counts": {"flawed": record.n_flawed, "sound": record.n_sound, "twins": record.n_twins},
        "measured_at": record.measured_at.isoformat(),
    }


def requirement_of(
    project: Project | None, required: Requirement | None, floor: float = DEFAULT_SPECIFICITY_FLOOR
) -> Requirement | None:
    """What a run's warrant must show: the project's own bounds, source and minimum of flawed
    versions where it sets them, else the setting's (``required``; a project's false-accept bound
    alone: the setting's second bound, else ``floor``). None when neither the project nor the
    setting requires a warrant."""
    own = project.require_warrant if project is not None else None
    own_floor = project.require_specificity if project is not None else None
    own_source = project.require_warrant_source if project is not None else None
    own_min = project.require_warrant_min_flawed if project is not None else None
    if own is None and required is None and own_source is None and own_min is None:
        return None
    fallback = required.specificity if required is not None else floor
    return Requirement(
        own if own is not None else required.false_accept if required is not None else 1.0,
        own_floor if own_floor is not None else fallback,
        own_source if own_source is not None else required.source if required is not None else None,
        own_min if own_min is not None else required.min_flawed if required is not None else None,
    )


async def run_warrants(
    session: AsyncSession,
    registry: ModelRegistry,
    judge_model: str,
    policy: ScoringPolicy,
    project_id: str,
    required: Requirement | float | None,
    floor: float = DEFAULT_SPECIFICITY_FLOOR,
) -> Warrants:
    """What a run's panel may cite: the record its project cites (``selection``: its pin, else the
    one of the most held-out flawed versions) of each model id the panel's endpoint was measured
    reporting, and what an acceptance's warrant must show (the project's own bounds over
    ``required``, the setting; ``floor``: the setting's specificity floor). The round's reported id
    picks one when the run is scored."""
    project = await session.get(Project, project_id)
    setting = Requirement(required, floor) if isinstance(required, (int, float)) else required
    bound = requirement_of(project, setting, floor)
    panel = identity_of(registry, judge_model, policy)
    rows = await selection.citable_records(session, project_id, judge_model=judge_model)
    mine = of_panel(panel, rows)
    if bound is not None and bound.per_source:  # with a source of the kind required, where there is one
        mine = [row for row in mine if _qualifies(row, bound)] or mine
    chosen = selection.choose(mine, await selection.pins_of(session, project_id))
    cited = {reported_of(panel, row): warrant_of(row) for row in chosen.values()}
    return Warrants(panel, cited, bound)


def of_panel(panel: PanelIdentity, rows: Iterable[ValidityRecord]) -> list[ValidityRecord]:
    """The records of this very panel (every part of its identity equal), its endpoint reporting the
    record's model id: a record of another panel under the same judge model name is none of them."""
    return [row for row in rows if panel.reporting(reported_of(panel, row)).id == row.panel_id]


def _qualifies(record: ValidityRecord, bound: Requirement) -> bool:
    """Whether one of the record's sources is of the kind and size ``bound`` requires."""
    return any(bound.qualifies(warrant_source(entry)) for entry in record_sources(record))


def reported_of(panel: PanelIdentity, record: ValidityRecord) -> str | None:
    """The model id the record's endpoint reported (None for the offline panel, which has no endpoint)."""
    return None if panel.offline else record.identity.get("reported_model")


def with_warrant(result: RunResult, warrants: Warrants) -> RunResult:
    """``result`` carrying its panel's warrant when it was accepted (any other outcome carries none):
    the warrant of the panel whose endpoint reported the accepted round's model id."""
    from graphs.refinement import round_reported  # LangGraph loads with the loop, not this module

    warrant = None
    if result.outcome == Outcome.ACCEPTED and result.rounds:
        last = result.rounds[-1]
        warrant = warrants.warrant(round_reported(last.outcomes, last.solver))
    return result.model_copy(update={"warrant": warrant})


def source_of(items: Sequence[LabelledItem], set_name: str) -> Source:
    """The source of a set sent as a file or as items: shipped when it is the shipped set (its name
    is checked against its hash), a public benchmark when every item says it comes from one (as
    ``thinkloop datasets import`` writes them), else the user's own. An item's word never makes a
    set shipped or a review set: those kinds come from the hash and from the review queue."""
    if set_name == SHIPPED:
        return Source(SHIPPED)
    kinds = {item.source.kind if item.source else None for item in items}
    return Source(BENCHMARK if kinds == {BENCHMARK} else OWN)


async def save_report(
    session: AsyncSession,
    registry: ModelRegistry,
    report: dict[str, Any],
    items: Sequence[LabelledItem],
    set_name: str,
    project_id: str = DEFAULT_PROJECT,
    *,
    digest: str | None = None,
    floor: float = DEFAULT_SPECIFICITY_FLOOR,
    source: Source | None = None,
    hashes: Mapping[str, str] | None = None,
) -> ValidityRecord:
    """Store a bench ``report`` over ``items`` (``digest``: their set hash, as sent; None: computed
    from them) as a record of its panel's identity, and put the record in the report. NotRecordable
    (nothing stored) when a version errored, the sound versions are too few or too rarely passed,
    the labels contradict themselves or ``set_name`` is a shipped set's and the hash is not.
    ``hashes``: each source's set hash as sent (:func:`source_hashes`; None: of ``items``)."""
    check_recordable(report, floor)  # a failed version first: it says more than a missing model id
    digest = digest or set_hash(items)
    name = provenance.check_set(items, set_name, digest)
    identity = bench_identity(registry, report)
    hashes = hashes or source_hashes(items, [i.model_dump(mode="json", exclude_unset=True) for i in items])
    record = new_record(
        identity, report, name, digest, project_id, floor, source or source_of(items, name), hashes
    )
    session.add(record)
    await session.flush()
    report["record"] = record.model_dump(mode="json", exclude={"project_id", "identity", "false_accept_high"})
    return record
