"""HTTP schemas of the judges' validity bench: the request and the report (the CLI's JSON)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from agents.validity.labels import LabelledItem
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
    builtin: bool = Field(default=False, description="Judge the labelled set shipped with thinkloop")
    judge_model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None, description="The panel to measure (default: settings)"
    )
    twins: bool = Field(default=False, description="Also judge adversarial twins and paraphrases")
    split: Split = Field(default="all", description="Judge only the tune or held-out items")
    policy: PolicyName | None = Field(default=None, description="Scoring policy (default: settings)")

    @model_validator(mode="after")
    def _one_source(self) -> ValidityRequest:
        if (self.items is None) == (not self.builtin):
            raise ValueError("send either items or builtin: true, not both")
        return self


class Share(BaseModel):
    """``count`` of ``n`` versions, and their ratio (null when ``n`` is 0)."""

    n: int
    count: int
    rate: float | None


class FlawFigures(BaseModel):
    """One flaw type: its flawed items, the share detected and accepted, and twins accepted."""

    n: int
    detection: float | None
    false_accept: float | None
    twins_accepted: float | None


class ReliabilityBin(BaseModel):
    """A confidence bin [low, high) with votes in it: their mean confidence and how many were right."""

    low: float
    high: float
    n: int
    confidence: float
    accuracy: float


class JudgeFigures(BaseModel):
    """One judge against the labels: agreement, Cohen's κ, and calibration (ECE, reliability table)."""

    votes: int
    agreement: float | None
    kappa: float | None
    ece: float | None
    reliability: list[ReliabilityBin]


class SplitSummary(BaseModel):
    """Every measure over one split."""

    split: str
    detection: Share = Field(description="Flawed versions a judge of the flaw's levels (or the gate) failed")
    false_accept: Share = Field(description="Flawed versions the panel accepted")
    specificity: Share = Field(description="Sound versions (controls, corrected) accepted")
    corrected_accepted: Share
    controls_accepted: Share
    adversarial_gap: Share = Field(description="Keyword-stuffed twins accepted (0 is the goal)")
    paraphrases_accepted: Share
    by_flaw: dict[str, FlawFigures]
    judges: dict[str, JudgeFigures]
    false_accepts: list[str]
    rejected_sound: list[str]
    twins_accepted: list[str]


class ValidityReport(BaseModel):
    """The bench's report: the same object as ``thinkloop judges validate --format json``."""

    judge_model: str
    policy: str
    twins: bool
    items: int
    versions: int
    splits: dict[str, SplitSummary]
    targets: dict[str, str | bool] = Field(description="'split': where they were measured; each target: met?")
