"""HTTP schemas of POST /v1/judges/calibrate: the request (a labelled set and a target) and the
threshold found, with the fixed-sequence scan that found it (the CLI's `judges calibrate`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from agents.labelled.labels import LabelledItem
from app.validity.schemas import _EXAMPLE_ITEM, ValidityRequest
from app.validity.service import MAX_VERSIONS, Split
from graphs.scoring import PolicyName

_Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class CalibrationRequest(BaseModel):
    """POST /v1/judges/calibrate body: labelled items (the shipped set, or the project's review set)
    and the target: false accepts ≤ alpha among the versions the panel accepts itself, with
    confidence 1 − delta."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [
                {"builtin": True, "alpha": 0.05, "delta": 0.1},
                {"items": [_EXAMPLE_ITEM], "split": "all", "alpha": 0.1, "delta": 0.2, "save": True},
            ]
        },
    )

    items: list[LabelledItem] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_VERSIONS,
        description="Labelled items, each an object as one line of a labelled JSONL file",
    )
    builtin: bool = Field(
        default=False, description="Calibrate on the labelled set shipped with thinkloop", examples=[True]
    )
    review_set: bool = Field(
        default=False,
        description="Calibrate on the key's project's review set (its teachers' decisions: "
        "GET /v1/reviews/set)",
        examples=[True],
    )
    alpha: float = Field(
        default=0.05,
        gt=0,
        lt=1,
        allow_inf_nan=False,
        description="The false accepts allowed among the versions the panel accepts itself",
        examples=[0.05],
    )
    delta: float = Field(
        default=0.1,
        gt=0,
        lt=1,
        allow_inf_nan=False,
        description="The chance allowed that the bound does not hold",
        examples=[0.1],
    )
    judge_model: _Name | None = Field(
        default=None, description="The panel to calibrate (default: settings)", examples=["rubric"]
    )
    split: Split = Field(
        default="heldout",
        description="The split the threshold is chosen on: heldout (the default, as the CLI), tune or all",
        examples=["heldout"],
    )
    policy: PolicyName | None = Field(
        default=None, description="Scoring policy (default: settings)", examples=["default"]
    )
    save: bool = Field(
        default=False,
        examples=[True],
        description="Save the bench as a validity record of this exact panel with the threshold and "
        "its coverage (as `judges calibrate --save`; a key with the validate or admin scope, 403 "
        "otherwise): the project's runs with a guarantee target escalate below it. Refused (422, "
        "nothing stored) as POST /v1/judges/validate refuses a record",
    )
    set_name: _Name | None = Field(
        default=None,
        description="The labelled set's name in the record (default: shipped, or items)",
        examples=["district-heldout-2026"],
    )

    @model_validator(mode="after")
    def _one_source(self) -> CalibrationRequest:
        if (self.items is not None) + self.builtin + self.review_set != 1:
            raise ValueError("send one of items, builtin: true or review_set: true")
        if self.review_set and self.set_name is not None:
            raise ValueError("a review set's name is 'reviews of <project>': send no set_name")
        return self

    def bench(self) -> ValidityRequest:
        """The bench this calibration judges: the same items, split and panel, no twins."""
        fields = ("items", "builtin", "review_set", "judge_model", "split", "policy", "save", "set_name")
        return ValidityRequest.model_construct(**{name: getattr(self, name) for name in fields})


class CalibrationStep(BaseModel):
    """One threshold the fixed-sequence scan tested, strict to lenient."""

    threshold: float = Field(description="The Q threshold tested", examples=[0.93])
    accepted: int = Field(description="Versions the panel accepts at Q ≥ threshold", examples=[41])
    flawed_accepted: int = Field(description="Flawed versions among them", examples=[0])
    bound: float = Field(
        description="The Clopper–Pearson upper bound of their false-accept rate at confidence 1 − delta",
        examples=[0.0546],
    )
    passed: bool = Field(
        description="Whether the bound is ≤ alpha; the scan stops at the first that is not", examples=[True]
    )


_STEP: dict[str, Any] = {
    "threshold": 0.93,
    "accepted": 41,
    "flawed_accepted": 0,
    "bound": 0.0546,
    "passed": True,
}


class CalibrationResult(BaseModel):
    """The least strict Q threshold meeting the target on the labelled set, the coverage it keeps
    and each step of the scan that found it (the CLI's `judges calibrate --format json`)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "judge_model": "rubric",
                    "policy": "default",
                    "split": "heldout",
                    "alpha": 0.05,
                    "delta": 0.1,
                    "threshold": 0.93,
                    "guaranteed": 0.0546,
                    "coverage": 0.68,
                    "accepted": 41,
                    "flawed_accepted": 0,
                    "sound": 60,
                    "flawed": 60,
                    "tested": 1,
                    "steps": [_STEP],
                    "record_id": None,
                    "panel_id": None,
                }
            ]
        }
    )

    judge_model: str = Field(description="The panel calibrated", examples=["rubric"])
    policy: str = Field(description="Its scoring policy", examples=["default"])
    split: str = Field(description="The split the threshold was chosen on", examples=["heldout"])
    alpha: float = Field(description="The false accepts allowed", examples=[0.05])
    delta: float = Field(description="The chance allowed that the bound does not hold", examples=[0.1])
    threshold: float | None = Field(
        description="The least strict Q threshold whose bound is ≤ alpha; null: none meets the target "
        "on this set (every acceptance escalates)",
        examples=[0.93],
    )
    guaranteed: float | None = Field(
        description="The bound on false accepts among the auto-accepted at that threshold (null: none)",
        examples=[0.0546],
    )
    coverage: float = Field(
        description="The share of sound versions still auto-accepted at the threshold", examples=[0.68]
    )
    accepted: int = Field(description="Versions auto-accepted at the threshold", examples=[41])
    flawed_accepted: int = Field(description="Flawed versions among them", examples=[0])
    sound: int = Field(description="Sound versions judged (decided)", examples=[60])
    flawed: int = Field(description="Flawed versions judged (decided)", examples=[60])
    tested: int = Field(description="Thresholds tested before the scan stopped", examples=[1])
    steps: list[CalibrationStep] = Field(
        description="Each threshold tested, strict to lenient (thresholds at which too few versions are "
        "accepted for any bound to pass are skipped, not tested)",
        examples=[[_STEP]],
    )
    record_id: str | None = Field(
        description="The validity record saved with the threshold (save: true); null: nothing saved",
        examples=["3f2c9a0b1d4e4f6a8b7c6d5e4f3a2b1c"],
    )
    panel_id: str | None = Field(
        description="The panel identity the saved record is of (null: nothing saved)",
        examples=["9a1b2c3d4e5f6a7b"],
    )
