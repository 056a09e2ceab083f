"""The labelled validity set: the flaw taxonomy and the format of a labelled item.

A labelled item is a problem with its flaws (each of a type from :data:`TAXONOMY`, with the Bloom
judges that should catch it and the evidence), usually a corrected version, and which split it
belongs to: ``tune`` (anything may be tuned on it) or ``heldout`` (kept out of all tuning, and
reported apart). A ``control`` is a sound problem with no flaw.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agents.schemas import JudgeName, Problem, QuestionText, SolutionText

# type → (what it is, the judges that should catch it)
TAXONOMY: dict[str, tuple[str, tuple[JudgeName, ...]]] = {
    "false_proportionality": (
        "a quantity that does not scale is scaled (a song's length by the choir's size)",
        ("evaluate", "analyze", "holistic"),
    ),
    "arithmetic_symbolic": ("a wrong result in a computation written in symbols", ("apply", "holistic")),
    "arithmetic_worded": ("a wrong result in a computation written in words", ("apply", "holistic")),
    "wrong_operation": ("the right numbers combined with the wrong operation", ("apply", "analyze")),
    "missing_data": ("a quantity the answer needs is never given", ("understand", "evaluate")),
    "missing_or_multiple_questions": (
        "no question at all, or several where one task is expected",
        ("understand",),
    ),
    "contradictory_data": ("the given data contradict each other", ("evaluate", "analyze")),
    "irrelevant_data_used": ("a distractor quantity is used in the computation", ("analyze", "apply")),
    "unit_mismatch": ("units mixed without conversion, or converted wrongly", ("apply", "holistic")),
    "fractional_count": ("a non-whole number of indivisible things", ("evaluate", "apply")),
    "answer_mismatch": ("a consistent solution to a different question", ("apply", "understand", "holistic")),
    "impossible_quantity": ("a quantity the real world does not allow", ("evaluate", "holistic")),
    "percent_or_fraction_base": ("a percentage or fraction of the wrong whole", ("apply", "analyze")),
    "injected_instruction": ("text aimed at the grader or a model", ("remember", "understand", "holistic")),
}
FlawType = Literal[
    "false_proportionality",
    "arithmetic_symbolic",
    "arithmetic_worded",
    "wrong_operation",
    "missing_data",
    "missing_or_multiple_questions",
    "contradictory_data",
    "irrelevant_data_used",
    "unit_mismatch",
    "fractional_count",
    "answer_mismatch",
    "impossible_quantity",
    "percent_or_fraction_base",
    "injected_instruction",
]


class Flaw(BaseModel):
    """One labelled flaw."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: FlawType = Field(
        description="The flaw's type, from the taxonomy (false_proportionality, arithmetic_worded, …)"
    )
    levels: list[JudgeName] = Field(min_length=1, description="the judges that should catch it")
    evidence: str = Field(
        min_length=1, max_length=1000, description="Where and why it is a flaw, in a sentence"
    )
    category: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="The source's own name for the flaw (a benchmark's category), beside its taxonomy type",
        examples=["missing key information"],
    )


# Where labels came from: the set thinkloop ships, a public benchmark, the user's own, or a
# project's teachers' reviews (a record's and a warrant's source kind too).
SourceKind = Literal["shipped", "benchmark", "own", "reviews"]


class Source(BaseModel):
    """Where an item comes from, so that figures can be given per source."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(
        min_length=1, max_length=100, description="The set's name, e.g. a benchmark's", examples=["UMWP"]
    )
    kind: SourceKind = Field(
        description="shipped (written for thinkloop), benchmark (a public benchmark), own (the user's) or "
        "reviews (a project's teachers' decisions)",
        examples=["benchmark"],
    )
    licence: str | None = Field(
        default=None,
        max_length=200,
        description="The licence its items are under (SPDX id where one exists)",
        examples=["CC-BY-SA-4.0"],
    )


class LabelledItem(BaseModel):
    """A problem with its labels: strict, as every request body is (a grade "5" is refused, not read
    as 5), so a file and the API take the same items."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(min_length=1, max_length=100, description="A unique id within the set")
    split: Literal["tune", "heldout"] = Field(
        description="tune (may be tuned on) or heldout (kept out of all tuning, reported apart)"
    )
    kind: Literal["flawed", "control"] = Field(
        description="flawed (with flaws) or control (a sound problem, no flaws)"
    )
    question: QuestionText = Field(description="The problem's question")
    solution: SolutionText = Field(description="Its stated solution")
    flaws: list[Flaw] = Field(default_factory=list, description="The labelled flaws of a flawed item")
    corrected: Problem | None = Field(
        default=None, description="A sound version of a flawed item, which should be accepted"
    )
    answer: str | None = Field(
        default=None, description="The correct final answer, for people reading the set"
    )
    grade: int | None = Field(default=None, ge=1, le=13, description="School grade it is written for, 1–13")
    pair: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="A flawed item and the sound original it was made from share this id",
        examples=["umwp-pair-1"],
    )
    source: Source | None = Field(
        default=None,
        description="Where the item comes from (None: not said)",
        examples=[{"name": "UMWP", "kind": "benchmark", "licence": "CC-BY-SA-4.0"}],
    )

    @model_validator(mode="after")
    def _consistent(self) -> LabelledItem:
        if self.kind == "flawed" and not self.flaws:
            raise ValueError("a flawed item needs at least one flaw")
        if self.kind == "control" and (self.flaws or self.corrected):
            raise ValueError("a control has no flaws and no corrected version")
        return self

    @property
    def problem(self) -> Problem:
        """The item's problem as submitted."""
        return Problem(question=self.question, solution=self.solution)

    @property
    def flaw_type(self) -> str:
        """The first flaw's type, or 'control'."""
        return self.flaws[0].type if self.flaws else "control"


class LabelsError(ValueError):
    """The labelled file cannot be used; the message names the line."""


def read_labelled(path: Path) -> list[LabelledItem]:
    """Every item of a labelled JSONL file (one object per line), or a clear error by line."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelsError(f"cannot read {path}: {exc}") from exc
    items: list[LabelledItem] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            items.append(LabelledItem.model_validate(json.loads(line)))
        except ValidationError as exc:
            raise LabelsError(f"{path}:{number}: {_first_error(exc)}") from exc
        except ValueError as exc:
            raise LabelsError(f"{path}:{number}: invalid JSON ({exc})") from exc
    return check_labelled(items, str(path))


def _first_error(exc: ValidationError) -> str:
    """Where and what the first problem of an item is (pydantic's own first line names no field)."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def check_labelled(items: list[LabelledItem], source: str) -> list[LabelledItem]:
    """``items`` if they make a set (at least one, ids unique); else a LabelsError naming ``source``."""
    if not items:
        raise LabelsError(f"{source}: no labelled items")
    repeated = sorted(name for name, n in Counter(item.id for item in items).items() if n > 1)
    if repeated:
        raise LabelsError(f"{source}: item ids are not unique ({', '.join(repeated[:5])})")
    return items


def contradictions(items: list[LabelledItem]) -> list[str]:
    """Where the labels contradict themselves: each version (question and solution, compared with
    whitespace collapsed) labelled both flawed and sound, as ``"a (flawed) = b (corrected)"``."""
    sound: dict[tuple[str, str], str] = {}
    for item in items:
        if item.kind == "control":
            sound.setdefault(_text(item.problem), f"{item.id} (control)")
        elif item.corrected is not None:
            sound.setdefault(_text(item.corrected), f"{item.id} (corrected)")
    return [
        f"{item.id} (flawed) = {sound[_text(item.problem)]}"
        for item in items
        if item.kind == "flawed" and _text(item.problem) in sound
    ]


def _text(problem: Problem) -> tuple[str, str]:
    """A version's text as compared for contradictions: runs of whitespace are one space."""
    return " ".join(problem.question.split()), " ".join(problem.solution.split())
