"""HTTP schemas of the judges' validity bench: the request and the report (the CLI's JSON)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from agents.validity.labels import LabelledItem
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
    judge_model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None, description="The panel to measure (default: settings)", examples=["rubric"]
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
        description="Save the headline split's figures as a validity record of the panel's identity "
        "(GET /v1/panels lists it; the panel's accepted runs cite it as their warrant). Refused (422) "
        "when any version errored: a failure is not a measurement",
    )
    set_name: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None,
        description="The labelled set's name in the record (default: shipped, or items)",
        examples=["district-heldout-2026"],
    )

    @model_validator(mode="after")
    def _one_source(self) -> ValidityRequest:
        if (self.items is None) == (not self.builtin):
            raise ValueError("send either items or builtin: true, not both")
        return self


_SHARE: dict[str, Any] = {"n": 26, "count": 7, "rate": 0.269}
_FLAW: dict[str, Any] = {"n": 4, "detection": 0.75, "false_accept": 0.25, "twins_accepted": 0.5}
_BIN: dict[str, Any] = {"low": 0.8, "high": 0.9, "n": 31, "confidence": 0.84, "accuracy": 0.77}
_JUDGE: dict[str, Any] = {"votes": 84, "agreement": 0.81, "kappa": 0.52, "ece": 0.07, "reliability": [_BIN]}
_SPLIT: dict[str, Any] = {
    "split": "heldout",
    "detection": _SHARE,
    "false_accept": _SHARE,
    "specificity": _SHARE,
    "corrected_accepted": _SHARE,
    "controls_accepted": _SHARE,
    "adversarial_gap": _SHARE,
    "paraphrases_accepted": _SHARE,
    "by_flaw": {"false_proportionality": _FLAW},
    "judges": {"evaluate": _JUDGE},
    "false_accepts": ["prop-07"],
    "rejected_sound": ["ctrl-03"],
    "twins_accepted": ["prop-01 (keyword-stuffed)"],
}
_REPORT: dict[str, Any] = {
    "judge_model": "rubric",
    "policy": "default",
    "twins": True,
    "items": 52,
    "versions": 180,
    "splits": {"heldout": _SPLIT},
    "targets": {"split": "heldout", "false_accept below 10 %": False},
}


class Share(BaseModel):
    """``count`` of ``n`` versions, and their ratio (null when ``n`` is 0)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SHARE]})

    n: int = Field(description="Versions counted")
    count: int = Field(description="Versions with the property")
    rate: float | None = Field(description="count ÷ n; null when n is 0")


class FlawFigures(BaseModel):
    """One flaw type: its flawed items, the share detected and accepted, and twins accepted."""

    model_config = ConfigDict(json_schema_extra={"examples": [_FLAW]})

    n: int = Field(description="Flawed items of this type")
    detection: float | None = Field(
        description="Share whose flaw a right judge (or the gate) flagged in round 1"
    )
    false_accept: float | None = Field(description="Share the panel accepted")
    twins_accepted: float | None = Field(description="Share of their keyword-stuffed twins accepted")


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

    votes: int = Field(description="Verdicts the judge gave on labelled versions")
    agreement: float | None = Field(description="Share of its verdicts that agree with the labels")
    kappa: float | None = Field(
        description="Cohen's κ of its verdicts against the labels; null when undefined"
    )
    ece: float | None = Field(description="Expected calibration error of its confidence, 0–1")
    reliability: list[ReliabilityBin] = Field(
        description="The reliability table behind the ECE (bins of width 0.1 that hold votes)"
    )


class SplitSummary(BaseModel):
    """Every measure over one split."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SPLIT]})

    split: str = Field(description="tune, heldout or all")
    detection: Share = Field(description="Flawed versions a judge of the flaw's levels (or the gate) failed")
    false_accept: Share = Field(description="Flawed versions the panel accepted")
    specificity: Share = Field(description="Sound versions (controls, corrected) accepted")
    corrected_accepted: Share = Field(description="Corrected versions accepted (the target is all)")
    controls_accepted: Share = Field(description="Sound control problems accepted")
    adversarial_gap: Share = Field(description="Keyword-stuffed twins accepted (0 is the goal)")
    paraphrases_accepted: Share = Field(description="Paraphrase twins of controls accepted")
    by_flaw: dict[str, FlawFigures] = Field(description="The figures per flaw type")
    judges: dict[str, JudgeFigures] = Field(description="Each judge against the labels")
    false_accepts: list[str] = Field(description="Ids of flawed items the panel accepted")
    rejected_sound: list[str] = Field(description="Ids of sound versions the panel did not accept")
    twins_accepted: list[str] = Field(description="Ids of twins accepted, with their kind")


class ValidityReport(BaseModel):
    """The bench's report: the same object as ``thinkloop judges validate --format json``."""

    model_config = ConfigDict(json_schema_extra={"examples": [_REPORT]})

    judge_model: str = Field(description="The judge model measured (rubric: the offline panel)")
    policy: str = Field(description="The scoring policy used")
    twins: bool = Field(description="Whether adversarial twins were judged too")
    items: int = Field(description="Labelled items judged")
    versions: int = Field(description="Versions judged (flawed, corrected, controls; twins apart)")
    splits: dict[str, SplitSummary] = Field(description="The figures per split, and over all")
    targets: dict[str, str | bool] = Field(description="'split': where they were measured; each target: met?")
    errored_versions: int = Field(
        default=0,
        description="Versions whose round ended in error (not judged; no record is saved)",
        examples=[0],
    )
    record: RecordPublic | None = Field(
        default=None, description="The validity record saved (with save: true); null otherwise"
    )
