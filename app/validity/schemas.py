"""HTTP schemas of the judges' validity bench: the request and the report (the CLI's JSON)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from agents.labelled.labels import LabelledItem
from app.validity.panel_schemas import RecordPublic
from app.validity.service import MAX_VERSIONS, Split
from graphs.scoring import PolicyName

ValidityFormat = Literal["json", "md", "html"]
_EXAMPLE_ITEM: dict[str, Any] = {
    "id": "prop-01",
    "split": "tune",
    "kind": "flawed",
    "question": "A choir of 12 singers sings a song that lasts 4 minutes. How long will the song last "
    "if 36 singers sing it together?",
    "solution": "36 ÷ 12 = 3. 4 × 3 = 12, so the song lasts 12 minutes.",
    "flaws": [
        {
            "type": "false_proportionality",
            "levels": ["evaluate", "analyze", "holistic"],
            "evidence": "a song lasts the same time however many people sing it",
        }
    ],
    "corrected": {
        "question": "A choir of 12 singers sings a song that lasts 4 minutes. How long will the song "
        "last if 36 singers sing it together?",
        "solution": "The length of a song does not depend on how many sing it: 4 minutes.",
    },
    "answer": "4 minutes",
    "grade": 5,
}


class ValidityRequest(BaseModel):
    """POST /v1/judges/validate body: labelled items (or the shipped set) and how to judge them."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [{"items": [_EXAMPLE_ITEM], "twins": True}, {"builtin": True, "split": "tune"}]
        },
    )

    items: list[LabelledItem] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_VERSIONS,
        description="Labelled items, each an object as one line of a labelled JSONL file",
    )
    builtin: bool = Field(
        default=False, description="Judge the labelled set shipped with thinkloop", examples=[True]
    )
    review_set: bool = Field(
        default=False,
        description="Judge the key's project's review set (its teachers' decisions: GET /v1/reviews/set); "
        "with save, the record is named 'reviews of <project>' and its warrants' source is reviews",
        examples=[True],
    )
    judge_model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None, description="The panel to measure (default: settings)", examples=["rubric"]
    )
    model_under_test: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None,
        description="The model whose versions the panel will judge (default: settings): the report's "
        "self_preference warns when the judge model is it, or of its family",
        examples=["local"],
    )
    twins: bool = Field(default=False, description="Also judge adversarial twins and paraphrases")
    split: Split = Field(
        default="all", description="Judge only the tune or held-out items", examples=["tune"]
    )
    policy: PolicyName | None = Field(
        default=None, description="Scoring policy (default: settings)", examples=["default"]
    )
    save: bool = Field(
        default=False,
        examples=[True],
        description="Save the held-out split's figures as a validity record of the panel's identity "
        "(GET /v1/panels lists it; the panel's accepted runs cite it as their warrant). Refused (422) "
        "when any version errored (a failure is not a measurement), when no held-out problem was "
        "judged, when fewer than 20 held-out sound versions were judged or fewer than the floor "
        "(THINKLOOP_SPECIFICITY_FLOOR, 0.5) of them passed, when the endpoint's replies reported no "
        "model id or several, when the labels contradict themselves, or when set_name is a shipped "
        "set's name (shipped) and the items are not that set",
    )
    set_name: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None,
        description="The labelled set's name in the record (default: shipped, or items); shipped is "
        "reserved for the set shipped with thinkloop, and a record of that set is named shipped",
        examples=["district-heldout-2026"],
    )

    @model_validator(mode="after")
    def _one_source(self) -> ValidityRequest:
        if (self.items is not None) + self.builtin + self.review_set != 1:
            raise ValueError("send one of items, builtin: true or review_set: true")
        if self.review_set and self.set_name is not None:
            raise ValueError("a review set's name is 'reviews of <project>': send no set_name")
        return self


_SHARE: dict[str, Any] = {"n": 26, "count": 7, "rate": 0.269, "low": 0.137, "high": 0.459, "excluded": 0}
_FLAW: dict[str, Any] = {
    "n": 4,
    "detection": _SHARE,
    "refused_other": _SHARE,
    "false_accept": _SHARE,
    "twins_accepted": _SHARE,
}
_BIN: dict[str, Any] = {"low": 0.8, "high": 0.9, "n": 31, "confidence": 0.84, "accuracy": 0.77}
_JUDGE: dict[str, Any] = {"votes": 84, "agreement": _SHARE, "kappa": 0.52, "ece": 0.07, "reliability": [_BIN]}
_EXCLUDED: dict[str, Any] = {
    "total": 1,
    "errored": 1,
    "undecided": 0,
    "by_decision": {"error": 1},
    "versions": ["prop-04 (flawed): error"],
    "causes": [
        {
            "version": "prop-04 (flawed)",
            "ended": "error",
            "causes": [
                "stop reason: the panel gave no usable verdict (7 judge(s)): degenerate: every judge wrote "
                "the same rationale",
                "remember, understand, apply, analyze, evaluate, create, holistic abstained: degenerate: "
                "every judge wrote the same rationale",
            ],
        }
    ],
}
_CALLS: dict[str, Any] = {"total": 1260, "failed": 3, "abstained": 0}
_SPLIT: dict[str, Any] = {
    "split": "heldout",
    "versions": 180,
    "judged": 179,
    "excluded": _EXCLUDED,
    "calls": _CALLS,
    "solver_failures": [],
    "detection": _SHARE,
    "refused_other": _SHARE,
    "solver_accuracy": _SHARE,
    "false_accept": _SHARE,
    "specificity": _SHARE,
    "corrected_accepted": _SHARE,
    "controls_accepted": _SHARE,
    "adversarial_gap": _SHARE,
    "paraphrases_accepted": _SHARE,
    "refuses_every_sound": False,
    "by_flaw": {"false_proportionality": _FLAW},
    "twin_forms": {"note-to-reviewer": _SHARE},
    "judges": {"evaluate": _JUDGE},
    "false_accepts": ["prop-07"],
    "refused_for_another_reason": ["prop-09"],
    "rejected_sound": ["ctrl-03"],
    "twins_accepted": ["prop-01 (note-to-reviewer)"],
}
_TARGETS: dict[str, Any] = {
    "split": "heldout",
    "claimed": False,
    "reason": "not enough held-out flawed problems to claim (n = 27 < 60)",
    "met": {"false_accept <= 5%": None},
}
_WORTH_SHARES: dict[str, Any] = {"false_accept": _SHARE, "specificity": _SHARE}
_PAIR: dict[str, Any] = {"judges": ["evaluate", "analyze"], "n": 160, "phi": 0.41}
_SUBSET: dict[str, Any] = {
    "judges": ["evaluate", "holistic"],
    "size": 2,
    **_WORTH_SHARES,
    "full": _WORTH_SHARES,
}
_WORTH: dict[str, Any] = {
    "split": "heldout",
    "judges": {"evaluate": _SHARE},
    "pairs": [_PAIR],
    "mean_phi": 0.41,
    "m": 7,
    "n_eff": 2.03,
    "smallest_subset": _SUBSET,
}
_REPORT: dict[str, Any] = {
    "judge_model": "rubric",
    "offline": True,
    "policy": "default",
    "twins": True,
    "items": 52,
    "versions": 180,
    "judged": 179,
    "excluded": _EXCLUDED,
    "calls": _CALLS,
    "solver_failures": [],
    "complete": False,
    "reported_models": [],
    "splits": {"heldout": _SPLIT},
    "targets": _TARGETS,
    "votes_worth": _WORTH,
    "self_preference": [],
}


class Share(BaseModel):
    """``count`` of ``n`` judged versions, their ratio and its Wilson 95 % interval (null when ``n`` is
    0), and how many versions of the kind were excluded (not the panel's verdict: not in ``n``)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SHARE]})

    n: int = Field(description="Versions judged (the panel gave its verdict): the denominator")
    count: int = Field(description="Versions with the property")
    rate: float | None = Field(description="count ÷ n; null when n is 0")
    low: float | None = Field(description="Lower bound of the Wilson 95 % interval; null when n is 0")
    high: float | None = Field(description="Upper bound of the Wilson 95 % interval; null when n is 0")
    excluded: int = Field(
        description="Versions of this kind left out of n: errored (failed judge calls) or undecided"
    )


class FlawFigures(BaseModel):
    """One flaw type: its flawed items, the shares detected, refused otherwise and let through."""

    model_config = ConfigDict(json_schema_extra={"examples": [_FLAW]})

    n: int = Field(description="Flawed items of this type (excluded ones too)")
    detection: Share = Field(description="Refused with a check matching the flaw firing")
    refused_other: Share = Field(description="Refused, but no check matching the flaw fired")
    false_accept: Share = Field(description="Passed by the panel (for the offline panel: let through)")
    twins_accepted: Share = Field(description="Their adversarial twins passed")


class ReliabilityBin(BaseModel):
    """A confidence bin [low, high) with votes in it: their mean confidence and how many were right."""

    model_config = ConfigDict(json_schema_extra={"examples": [_BIN]})

    low: float = Field(description="The bin's lower confidence bound, 0–1")
    high: float = Field(description="The bin's upper bound (exclusive, but 1.0 is in the last bin)")
    n: int = Field(description="Votes in the bin")
    confidence: float = Field(description="Their mean confidence, 0–1")
    accuracy: float = Field(description="Share of them that agree with the labels")


class JudgeFigures(BaseModel):
    """One judge against the labels: agreement, Cohen's κ, and calibration (ECE, reliability table)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_JUDGE]})

    votes: int = Field(description="Verdicts the judge gave on labelled, judged versions")
    agreement: Share = Field(description="Its verdicts that agree with the labels")
    kappa: float | None = Field(
        description="Cohen's κ of its verdicts against the labels; null when undefined"
    )
    ece: float | None = Field(description="Expected calibration error of its confidence, 0–1")
    reliability: list[ReliabilityBin] = Field(
        description="The reliability table behind the ECE (bins of width 0.1 that hold votes)"
    )


class ExcludedVersion(BaseModel):
    """One excluded version and why: the run's stop reason, each judge's abstention or failure (judges
    with the same cause together), and the solver's failed call."""

    version: str = Field(description="'id (version or twin)'", examples=["prop-04 (flawed)"])
    ended: str = Field(description="How it ended: its outcome, or 'after a failed call'", examples=["error"])
    causes: list[str] = Field(
        description="Each cause, in a line",
        examples=[["apply, create failed: local @ 127.0.0.1:8080: HTTP 400 BadRequestError: context"]],
    )


class Excluded(BaseModel):
    """Versions that did not end in the panel's verdict, counted apart and left out of every rate."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXCLUDED]})

    total: int = Field(description="Versions excluded")
    errored: int = Field(description="Of them, ended in error (judge calls failed)")
    undecided: int = Field(description="Of them, ended otherwise (needs_review: no quorum, ...)")
    by_decision: dict[str, int] = Field(description="Excluded versions per outcome")
    versions: list[str] = Field(description="Each excluded version: 'id (version or twin): outcome'")
    causes: list[ExcludedVersion] = Field(
        default_factory=list, description="Each excluded version with its causes (empty in older records)"
    )


class Calls(BaseModel):
    """The judge calls behind the versions."""

    model_config = ConfigDict(json_schema_extra={"examples": [_CALLS]})

    total: int = Field(description="Judge calls made (seven per version)")
    failed: int = Field(description="Calls that failed (the endpoint or its reply)")
    abstained: int = Field(description="Judges that gave no verdict although their call did not fail")


class SplitSummary(BaseModel):
    """Every measure over one split."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SPLIT]})

    split: str = Field(description="tune, heldout or all")
    versions: int = Field(description="Versions in the split")
    judged: int = Field(description="Versions that ended in the panel's verdict (the others are excluded)")
    excluded: Excluded = Field(description="Versions left out of every rate, and why")
    calls: Calls = Field(description="Judge calls, failed calls and abstentions")
    solver_failures: list[str] = Field(
        default_factory=list,
        description="Each version whose solver call failed: 'id (version): cause'",
        examples=[["prop-04 (flawed): local @ 127.0.0.1:8080: HTTP 503 InternalServerError: busy"]],
    )
    detection: Share = Field(
        description="Flawed versions refused with a check matching the flaw firing: a judge of the "
        "flaw's levels naming its evidence, the verifier, or a solver reaching the answer key"
    )
    refused_other: Share = Field(description="Flawed versions refused for another reason")
    solver_accuracy: Share | None = Field(
        default=None,
        description="Versions with an answer key whose solver answered it (a model panel's solver)",
    )
    false_accept: Share = Field(description="Flawed versions passed (offline panel: let through)")
    specificity: Share = Field(description="Sound versions (controls, corrected) passed")
    corrected_accepted: Share = Field(description="Corrected versions passed (the target is all)")
    controls_accepted: Share = Field(description="Sound control problems passed")
    adversarial_gap: Share = Field(description="Adversarial twins passed (0 is the goal)")
    paraphrases_accepted: Share = Field(description="Paraphrase twins of controls passed")
    refuses_every_sound: bool = Field(
        description="The panel refused every judged sound version: its detection says nothing"
    )
    by_flaw: dict[str, FlawFigures] = Field(description="The figures per flaw type")
    twin_forms: dict[str, Share] = Field(description="Twins passed, per form")
    judges: dict[str, JudgeFigures] = Field(description="Each judge against the labels")
    false_accepts: list[str] = Field(description="Ids of flawed items the panel passed")
    refused_for_another_reason: list[str] = Field(
        description="Ids of flawed items refused with no check matching their flaw firing"
    )
    rejected_sound: list[str] = Field(description="Ids of sound versions the panel did not pass")
    twins_accepted: list[str] = Field(description="Ids of twins passed, with their form")


class Targets(BaseModel):
    """The project's targets, claimed only on a held-out split with enough judged flawed problems."""

    model_config = ConfigDict(json_schema_extra={"examples": [_TARGETS]})

    split: str = Field(description="The split the targets were looked at on")
    claimed: bool = Field(description="Whether anything is claimed about the targets")
    reason: str | None = Field(description="Why nothing is claimed (null when claimed)")
    met: dict[str, bool | None] = Field(description="Each target: met?, null when not claimed")


class JudgePair(BaseModel):
    """How two judges' errors go together: the phi coefficient of their error indicators."""

    model_config = ConfigDict(json_schema_extra={"examples": [_PAIR]})

    judges: list[str] = Field(description="The two judges", examples=[["evaluate", "analyze"]])
    n: int = Field(description="Decided versions both voted on", examples=[160])
    phi: float | None = Field(
        description="The phi coefficient of their errors over those versions; null when undefined (one "
        "of them never or always erred there)",
        examples=[0.41],
    )


class PanelRates(BaseModel):
    """A panel's false-accept rate and specificity, re-decided by its votes alone."""

    model_config = ConfigDict(json_schema_extra={"examples": [_WORTH_SHARES]})

    false_accept: Share = Field(description="Flawed versions and twins it would pass", examples=[_SHARE])
    specificity: Share = Field(description="Sound versions it would pass", examples=[_SHARE])


class SmallestSubset(PanelRates):
    """The fewest judges whose re-decided intervals overlap the full panel's: what the other calls add
    is within the measurement's error."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SUBSET]})

    judges: list[str] = Field(description="The judges of the subset", examples=[["evaluate", "holistic"]])
    size: int = Field(description="How many they are", examples=[2])
    full: PanelRates = Field(description="The full panel's re-decided rates", examples=[_WORTH_SHARES])


class VotesWorth(BaseModel):
    """What the panel's votes are worth on the headline split: each judge's error rate, the pairwise
    correlation of their errors, Kish's effective number of votes and the smallest sufficient subset."""

    model_config = ConfigDict(json_schema_extra={"examples": [_WORTH]})

    split: str = Field(description="The split measured on (the headline split)", examples=["heldout"])
    judges: dict[str, Share] = Field(
        description="Per judge, its votes against the labels (error rate) with the Wilson 95 % interval",
        examples=[{"evaluate": _SHARE}],
    )
    pairs: list[JudgePair] = Field(description="Each pair of judges that voted", examples=[[_PAIR]])
    mean_phi: float | None = Field(
        description="The mean of the defined pairwise phis (ρ̄); null when none is defined", examples=[0.41]
    )
    m: int = Field(description="Judges that voted", examples=[7])
    n_eff: float | None = Field(
        description="Kish's effective number of independent votes, m / (1 + (m − 1)·max(ρ̄, 0)); null "
        "when ρ̄ is unknown",
        examples=[2.03],
    )
    smallest_subset: SmallestSubset | None = Field(
        description="The fewest judges deciding as the whole panel does, within the intervals; null when "
        "no judge voted",
        examples=[_SUBSET],
    )


class ValidityReport(BaseModel):
    """The bench's report: the same object as ``thinkloop judges validate --format json``."""

    model_config = ConfigDict(json_schema_extra={"examples": [_REPORT]})

    judge_model: str = Field(description="The judge model measured (rubric: the offline panel)")
    offline: bool = Field(description="The offline panel: a screen, whose pass is 'let through'")
    policy: str = Field(description="The scoring policy used")
    twins: bool = Field(description="Whether adversarial twins were judged too")
    items: int = Field(description="Labelled items judged")
    versions: int = Field(description="Versions sent to the panel (flawed, corrected, controls, twins)")
    judged: int = Field(description="Versions that ended in the panel's verdict")
    excluded: Excluded = Field(description="Versions that did not, left out of every rate")
    calls: Calls = Field(description="Judge calls, failed calls and abstentions")
    solver_failures: list[str] = Field(
        default_factory=list,
        description="Each version whose solver call failed: 'id (version): cause'",
        examples=[["prop-04 (flawed): local @ 127.0.0.1:8080: HTTP 503 InternalServerError: busy"]],
    )
    complete: bool = Field(description="False when any version was excluded: the figures are incomplete")
    reported_models: list[str] = Field(
        default_factory=list,
        description='The model ids the judge endpoint reported in its replies ("": a reply that named '
        "none); a record is saved only when there is exactly one (the offline panel: none)",
    )
    splits: dict[str, SplitSummary] = Field(description="The figures per split, and over all")
    by_source: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="On the headline split, per source the items name (`source.name`; items of a file "
        "that name none: the file): its kind, let-through (false_accept), specificity, detection and "
        "the pairs told apart (a flawed item refused, its sound original passed), each a share with "
        "its Wilson 95 % interval and n, and let-through per category of the source's own taxonomy; "
        "empty when no item names a source",
        examples=[
            {
                "UMWP": {
                    "kind": "benchmark",
                    "false_accept": {"n": 150, "count": 82, "rate": 0.547, "low": 0.467, "high": 0.624},
                    "pairs_told_apart": {"n": 150, "count": 30, "rate": 0.2, "low": 0.144, "high": 0.271},
                    "by_category": {
                        "unrealistic conditions": {
                            "n": 30,
                            "count": 25,
                            "rate": 0.833,
                            "low": 0.664,
                            "high": 0.927,
                        }
                    },
                }
            }
        ],
    )
    targets: Targets = Field(description="The targets, where and whether they can be claimed")
    record: RecordPublic | None = Field(
        default=None, description="The validity record saved (with save: true); null otherwise"
    )
    votes_worth: VotesWorth | None = Field(
        default=None,
        description="What the panel's votes are worth on the headline split (docs/validity.md); null in "
        "reports made before it was measured",
        examples=[_WORTH],
    )
    self_preference: list[str] = Field(
        default_factory=list,
        description="Warnings when the judge model is the model under test (model_under_test), or of its "
        "family: it may prefer that work; empty when none",
        examples=[["the judge model 'qwen2.5:7b' is the model under test: it may prefer its own work"]],
    )
    calibration: dict[str, Any] | None = Field(
        default=None,
        description="The guarantee's calibrated threshold, as `thinkloop judges calibrate` finds it "
        "(docs/guarantee.md); null here: this bench calibrates nothing",
        examples=[None],
    )
