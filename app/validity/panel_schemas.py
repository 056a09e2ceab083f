"""HTTP schemas of panels, their validity records, and the warrant an accepted run carries."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.labelled.labels import SourceKind
from app.models import RepairRecord, ValidityRecord
from app.validity.record_sources import record_sources

_SHARE: dict[str, Any] = {"n": 120, "count": 4, "rate": 0.0333, "low": 0.0131, "high": 0.0827}
_WARRANT: dict[str, Any] = {
    "status": "valid",
    "record_id": "3f0c9a7e5b2d4c1a8e6f0b9d7c5a3e1f",
    "panel_id": "9b2e61c0d4a87f35",
    "false_accept_upper": 0.0827,
    "false_accept": _SHARE,
    "sound_passed_lower": 0.846,
    "specificity": {"n": 80, "count": 74, "rate": 0.925, "low": 0.846, "high": 0.965},
    "split": "heldout",
    "set": "shipped",
    "set_hash": "17407c95d697",
    "counts": {"flawed": 120, "sound": 80, "twins": 0},
    "source": {"kind": "shipped", "name": "shipped", "reviewers": None},
    "sources": [
        {
            "name": "shipped",
            "kind": "shipped",
            "set_hash": "17407c95d697",
            "reviewers": None,
            "n_flawed": 120,
            "n_sound": 80,
            "false_accept_upper": 0.0827,
            "sound_passed_lower": 0.846,
        }
    ],
    "measured_at": "2026-11-26T23:10:00+00:00",
}
_IDENTITY: dict[str, Any] = {
    "judge_model": "gpt4o",
    "model": "gpt-4o",
    "reported_model": "gpt-4o-2024-08-06",
    "endpoint": None,
    "sampling": {"temperature": 0.0, "seed": None},
    "max_tokens": {"judge": 1000, "solver": 500},
    "structured_output": "json_schema",
    "parse_retries": 2,
    "prompts": {"judge_remember": "judge_remember@5e0c1b2a3d4f"},
    "checks": None,
    "solver": "solver@7c21e0a9b8d1",
    "verifier": "verify@0a1b2c3d4e5f",
    "code": "agents@3c4d5e6f7a8b",
    "policy": {"name": "default", "tau": 0.85, "pass_threshold": 85.0},
    "decision": "decide@9f8e7d6c5b4a",
    "thinkloop": "0.1.0",
}
_RECORD: dict[str, Any] = {
    "id": _WARRANT["record_id"],
    "panel_id": _WARRANT["panel_id"],
    "judge_model": "gpt4o",
    "set_name": "shipped",
    "set_hash": "17407c95d697022844feac7cb9b83de7d0c470e634039b0356dd7c89d480e6ce",
    "split": "heldout",
    "n_flawed": 120,
    "n_sound": 80,
    "n_twins": 0,
    "false_accept": _SHARE,
    "specificity": _WARRANT["specificity"],
    "specificity_low": 0.846,
    "detection": {"n": 120, "count": 113, "rate": 0.942, "low": 0.884, "high": 0.971},
    "adversarial_gap": {"n": 0, "count": 0, "rate": None, "low": None, "high": None},
    "source_kind": "shipped",
    "reviewers": None,
    "sources": [
        {
            "name": "shipped",
            "kind": "shipped",
            "set_hash": "17407c95d697022844feac7cb9b83de7d0c470e634039b0356dd7c89d480e6ce",
            "reviewers": None,
            "n_flawed": 120,
            "n_sound": 80,
            "false_accept": _SHARE,
            "specificity": _WARRANT["specificity"],
            "pairs_told_apart": None,
        }
    ],
    "measured_at": _WARRANT["measured_at"],
    "published_at": None,
}


class MeasuredShare(BaseModel):
    """``count`` of ``n`` versions, their ratio, and its Wilson 95 % interval (null when n is 0)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SHARE]})

    n: int = Field(description="Versions counted (the denominator)")
    count: int = Field(description="Versions with the property")
    rate: float | None = Field(description="count ÷ n; null when n is 0")
    low: float | None = Field(description="Wilson 95 % lower bound; null when n is 0")
    high: float | None = Field(description="Wilson 95 % upper bound; null when n is 0")


class WarrantSource(BaseModel):
    """Where a warrant's labels came from."""

    kind: SourceKind = Field(
        description="shipped (the set thinkloop ships), benchmark (a public benchmark imported), own (the "
        "user's own labelled set) or reviews (this project's teachers' decisions)",
        examples=["reviews"],
    )
    name: str = Field(
        description="The set's name (reviews of <project>, for a review set)",
        examples=["reviews of school-north"],
    )
    reviewers: int | None = Field(
        default=None, description="A review set's: how many teachers decided", examples=[3]
    )


class WarrantSourceBound(BaseModel):
    """One labelled set a warrant's record was measured on, with the bounds measured on it."""

    model_config = ConfigDict(json_schema_extra={"examples": [_WARRANT["sources"][0]]})

    name: str = Field(description="The set's name (a benchmark's, a file's, shipped)", examples=["UMWP"])
    kind: SourceKind = Field(
        description="shipped (only with the shipped set's hash), benchmark, own or reviews",
        examples=["benchmark"],
    )
    set_hash: str | None = Field(
        default=None,
        description="The first 12 hex digits of this set's hash (null: not known)",
        examples=["5e0c1b2a3d4f"],
    )
    reviewers: int | None = Field(
        default=None, description="A review set's: how many teachers decided", examples=[None]
    )
    n_flawed: int = Field(description="Flawed versions of this set judged", examples=[150])
    n_sound: int = Field(description="Sound versions of this set judged", examples=[150])
    false_accept_upper: float | None = Field(
        description="The Wilson 95 % upper bound of false accepts on this set (null: no flawed version)",
        examples=[0.624],
    )
    sound_passed_lower: float | None = Field(
        default=None,
        description="The Wilson 95 % lower bound of sound versions passed on this set (null: none judged)",
        examples=[0.71],
    )


class ValidWarrant(BaseModel):
    """What an acceptance is worth: the validity record its project cites of the exact panel that
    accepted (GET /v1/panels says which, and why)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_WARRANT]})

    status: Literal["valid"] = Field(description="valid: the panel has a validity record")
    record_id: str = Field(description="The record cited (GET /v1/panels lists it)")
    panel_id: str = Field(description="The panel identity it measured")
    false_accept_upper: float | None = Field(
        description="The Wilson 95 % upper bound of the panel's false-accept rate"
    )
    false_accept: MeasuredShare = Field(description="Flawed problems the panel accepted, of those it judged")
    sound_passed_lower: float | None = Field(
        default=None,
        description="The Wilson 95 % lower bound of the share of sound versions the panel passed: the "
        "other error a warrant bounds; null for a record saved before records kept it (it meets no "
        "required warrant)",
    )
    specificity: MeasuredShare | None = Field(
        default=None, description="Sound versions (controls and corrected versions) the panel passed"
    )
    split: str = Field(description="The labelled set's split it was measured on")
    set: str = Field(description="The labelled set's name (shipped: only when its hash is the shipped set's)")
    set_hash: str | None = Field(
        default=None,
        description="The first 12 hex digits of the set's hash (`thinkloop datasets hash FILE` prints "
        "it whole)",
    )
    counts: dict[str, int | None] | None = Field(
        default=None, description="Versions judged by kind: flawed, sound, twins (null: not kept)"
    )
    source: WarrantSource | None = Field(
        default=None,
        description="Where the labels came from (null: a warrant stored before sources were kept)",
        examples=[_WARRANT["source"]],
    )
    sources: list[WarrantSourceBound] | None = Field(
        default=None,
        description="Where the bound was measured, per labelled set the record's bench judged (one for a "
        "bench of one set): a required source kind and minimum of flawed versions are met through "
        "these; the overall false_accept_upper is what the acceptance cites. Null: a warrant stored "
        "before sources were kept per record",
        examples=[_WARRANT["sources"]],
    )
    measured_at: datetime = Field(description="When it was measured (UTC)")


class NoWarrant(BaseModel):
    """The panel that accepted was never validated: the acceptance carries no evidence."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"status": "none"}]})

    status: Literal["none"] = Field(description="none: this exact panel has no validity record")


Warrant = Annotated[ValidWarrant | NoWarrant, Field(discriminator="status")]
# The examples of a warrant field: a valid one, and none
WARRANT_EXAMPLES: list[Any] = [_WARRANT, {"status": "none"}, None]


class RecordSource(BaseModel):
    """One labelled set of a record's bench, with the figures measured on it."""

    model_config = ConfigDict(json_schema_extra={"examples": [_RECORD["sources"][0]]})

    name: str = Field(description="The set's name (a benchmark's, a file's, shipped)", examples=["UMWP"])
    kind: SourceKind = Field(
        description="shipped (only with the shipped set's hash), benchmark (a public benchmark), own (the "
        "user's) or reviews (a project's teachers' decisions)",
        examples=["benchmark"],
    )
    set_hash: str = Field(
        description="SHA-256 of this set's items as sent (their canonical JSONL; empty: not known)",
        examples=[_RECORD["set_hash"]],
    )
    reviewers: int | None = Field(
        default=None, description="A review set's: how many teachers decided", examples=[None]
    )
    n_flawed: int = Field(description="Flawed versions of this set judged (held out)", examples=[150])
    n_sound: int = Field(description="Sound versions of this set judged (held out)", examples=[150])
    false_accept: MeasuredShare = Field(description="Flawed versions of this set the panel passed")
    specificity: MeasuredShare = Field(description="Sound versions of this set the panel passed")
    pairs_told_apart: MeasuredShare | None = Field(
        default=None,
        description="Of the pairs (a flawed item and its sound original), those whose flawed item was "
        "refused and whose original passed; null when not counted (a record of one set that names no "
        "source, or saved before sources were kept)",
        examples=[_SHARE],
    )


class RecordPublic(BaseModel):
    """One saved measurement of one exact panel against a labelled set."""

    model_config = ConfigDict(json_schema_extra={"examples": [_RECORD]})

    id: str = Field(description="Record id (what a warrant cites)")
    panel_id: str = Field(description="The panel identity measured")
    judge_model: str = Field(description="The judge model's registry name")
    set_name: str = Field(description="The labelled set's name (shipped: the set shipped with thinkloop)")
    set_hash: str = Field(
        description="SHA-256 of the labelled set's canonical JSONL (docs/warrants.md; `thinkloop datasets "
        "hash FILE` reproduces it); records saved before it was defined hold another hash"
    )
    split: str = Field(
        description="The split measured: heldout (records saved before the held-out rule may say all: "
        "tune problems included)"
    )
    n_flawed: int = Field(description="Flawed problems judged (every one ended in the panel's verdict)")
    n_sound: int = Field(description="Sound versions judged (controls and corrected versions)")
    n_twins: int | None = Field(
        default=None, description="Adversarial twins judged (0: a bench without twins; null: not kept)"
    )
    false_accept: MeasuredShare = Field(
        description="Flawed problems the panel passed (accepted; for the offline panel, screened), "
        "of n_flawed"
    )
    specificity: MeasuredShare = Field(
        description="Sound versions (controls and corrected versions) the panel passed, of n_sound"
    )
    specificity_low: float | None = Field(
        default=None,
        description="The specificity's Wilson 95 % lower bound: what a required warrant's floor is "
        "compared with; null for a record saved before records kept it",
    )
    detection: MeasuredShare = Field(
        description="Flawed problems refused with a check matching the flaw firing (a judge of one of the "
        "flaw's Bloom levels failed it, an offline check of its type fired, or the verifier's evidence is "
        "of its kind), of n_flawed; one refused for another reason is not detected"
    )
    adversarial_gap: MeasuredShare = Field(
        description="Adversarial twins of the flawed problems the panel passed: the flaw kept, the wording "
        "changed (Bloom verbs stuffed in, a variable given a wrong value, × written for 'of', a sentence "
        "addressed to the checker); n is 0 when the bench ran without twins. 0 is the goal"
    )
    source_kind: SourceKind = Field(
        default="own",
        description="Where the labels came from: shipped, benchmark (a public benchmark), own (the "
        "user's) or reviews (the project's teachers' decisions)",
        examples=["shipped"],
    )
    reviewers: int | None = Field(
        default=None, description="A review set's: how many teachers decided", examples=[None, 3]
    )
    sources: list[RecordSource] = Field(
        default_factory=list,
        description="Per labelled set the bench judged at once (`judges validate --dataset A --dataset "
        "B`): its name, kind, hash, counts and figures on the held-out split; one source (the record's "
        "own set) for a bench of one set and for records saved before sources were kept",
        examples=[_RECORD["sources"]],
    )
    measured_at: datetime = Field(description="When it was measured (UTC)")
    published_at: datetime | None = Field(
        default=None,
        description="When an operator published it for every project's runs to cite; null: only its "
        "own project's runs cite it",
        examples=[None, "2026-11-27T09:00:00+00:00"],
    )

    @classmethod
    def of(cls, row: ValidityRecord) -> RecordPublic:
        """The public view of a stored record."""
        shown = row.model_dump(exclude={"project_id", "identity", "false_accept_high"})
        return cls.model_validate(shown | {"sources": record_sources(row)})


_REPAIR: dict[str, Any] = {
    "id": "7d1e0c9a5b2f4e3d8c6a1b0e9f7d5c3a",
    "reviser": "qwen-student",
    "set_name": "shipped",
    "set_hash": "17407c95d697022844feac7cb9b83de7d0c470e634039b0356dd7c89d480e6ce",
    "split": "heldout",
    "max_rounds": 3,
    "runs": 60,
    "decided": 58,
    "repaired": {"n": 58, "count": 31, "rate": 0.534, "low": 0.408, "high": 0.657},
    "accepted_but_wrong": {"n": 58, "count": 6, "rate": 0.103, "low": 0.048, "high": 0.208},
    "gave_up": {"n": 58, "count": 17, "rate": 0.293, "low": 0.192, "high": 0.42},
    "counts": {"repaired": 31, "accepted_but_wrong": 6, "gave_up": 17, "undecided": 2},
    "measured_at": "2026-11-28T22:00:00+00:00",
}


class RepairPublic(BaseModel):
    """The latest repair measurement of one reviser judged by a panel (`thinkloop judges repair --save`)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_REPAIR]})

    id: str = Field(description="Repair record id", examples=[_REPAIR["id"]])
    reviser: str = Field(description="The reviser (model under test) measured", examples=["qwen-student"])
    set_name: str = Field(description="The labelled set's name", examples=["shipped"])
    set_hash: str = Field(
        description="SHA-256 of the labelled set's canonical JSONL", examples=[_REPAIR["set_hash"]]
    )
    split: str = Field(description="The split measured (heldout, tune or all)", examples=["heldout"])
    max_rounds: int = Field(description="Evaluations a run had at most", examples=[3])
    runs: int = Field(description="Flawed problems with a corrected version run", examples=[60])
    decided: int = Field(
        description="Runs that ended in the panel's verdict: each rate's n (the others enter no rate)",
        examples=[58],
    )
    repaired: MeasuredShare = Field(
        description="Final version passed, the verifier checked its chain, its answer is the corrected "
        "version's and its givens the original's or the correction's"
    )
    accepted_but_wrong: MeasuredShare = Field(description="Final version passed with another answer")
    gave_up: MeasuredShare = Field(description="The loop ended refused (exhausted)")
    counts: dict[str, int] = Field(
        description="Runs by verdict (repaired, accepted_but_wrong, unrevised, givens_changed, unverified, "
        "gave_up, undecided)",
        examples=[_REPAIR["counts"]],
    )
    measured_at: datetime = Field(description="When it was measured (UTC)", examples=[_REPAIR["measured_at"]])

    @classmethod
    def of(cls, row: RepairRecord) -> RepairPublic:
        """The public view of a stored repair record."""
        return cls.model_validate(row.model_dump())


class PanelPublic(BaseModel):
    """A panel identity and its validity records, newest first."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": _WARRANT["panel_id"],
                    "identity": _IDENTITY,
                    "cited": _RECORD["id"],
                    "pinned": False,
                    "records": [_RECORD],
                    "repairs": [_REPAIR],
                }
            ]
        }
    )

    id: str = Field(description="The identity's id: a hash of every part")
    identity: dict[str, Any] = Field(
        description="Its parts: judge model, the model id asked for and the one the endpoint reported, "
        "endpoint, sampling, max_tokens per kind of call, structured-output mode, parse retries, prompt "
        "versions, offline checks, solver, verifier, scoring policy and parameters, decision code "
        "version, thinkloop version"
    )
    cited: str = Field(
        description="The record this project's accepted runs cite as their warrant: the pinned one, "
        "else the one of the most held-out flawed versions (the newest among equals)"
    )
    pinned: bool = Field(description="Whether this project pinned the cited record")
    teachers: dict[str, Any] | None = Field(
        default=None,
        description="How this judge model's verdicts on the project's runs agree with its teachers' "
        "review decisions (GET /v1/reviews/agreement?judge_model=…): Cohen's κ per judge with its "
        "interval and n, the false-accept rate and specificity on decided items, and the audit "
        "sample's line; null when no run of it was decided",
        examples=[
            {
                "decided": 40,
                "reviewers": 3,
                "judges": {"apply": {"n": 40, "kappa": 0.62, "low": 0.38, "high": 0.83}},
                "false_accept": {"n": 12, "count": 2, "rate": 0.167, "low": 0.047, "high": 0.448},
                "audit": {
                    "accepted": {
                        "text": "accepted runs that teachers judged flawed: 2 of 14 (4.0%–39.9%, 95 %)"
                    }
                },
            }
        ],
    )
    records: list[RecordPublic] = Field(
        description="Its validity records the project may cite (its own and published ones), newest "
        "first, cited or not"
    )
    repairs: list[RepairPublic] = Field(
        default_factory=list,
        description="The project's latest repair measurement judged by this panel, one per reviser "
        "(`thinkloop judges repair --save`): repaired, accepted but wrong and gave up, each with its "
        "Wilson 95 % interval and n; empty when none was saved",
        examples=[[_REPAIR]],
    )


class RecordShown(RecordPublic):
    """One validity record, its panel's identity, and whether the key's project cites it."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [_RECORD | {"identity": _IDENTITY, "cited": True, "pinned": False}]}
    )

    identity: dict[str, Any] = Field(description="The parts of the panel identity it measured")
    cited: bool = Field(description="Whether the project's accepted runs of this panel cite it")
    pinned: bool = Field(description="Whether the project pinned it")


class PinPublic(BaseModel):
    """The record a project's runs cite for one panel identity, chosen over the default."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "project_id": "884c7932be6a48c1aab6f455d2bc364e",
                    "panel_id": _WARRANT["panel_id"],
                    "record_id": _RECORD["id"],
                    "pinned_at": "2026-11-27T08:00:00+00:00",
                }
            ]
        }
    )

    project_id: str = Field(description="The project whose runs cite it")
    panel_id: str = Field(description="The panel identity")
    record_id: str = Field(description="The record pinned")
    pinned_at: datetime = Field(description="When it was pinned (UTC)")


class PanelPage(BaseModel):
    """A page of panels, the most recently measured first; pass ``next_cursor`` as ``cursor``."""

    items: list[PanelPublic] = Field(description="Panels, the most recently measured first")
    next_cursor: str | None = Field(
        description="Pass as cursor for the next page; null on the last page",
        examples=["WyIyMDI2LTExLTI2VDIzOjEwOjAwKzAwOjAwIiwgIjliMmU2MWMwZDRhODdmMzUiXQ"],
    )
