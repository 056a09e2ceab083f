"""Typed events the refinement graph emits on LangGraph's custom stream (one discriminated union)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agents.llm.calls import CallFailure, Usage
from agents.schemas import JudgeName, JudgeResult, Problem, SolverResult
from graphs.state import Round, RoundFigures


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class RoundStarted(_Event):
    """A problem version is about to be judged."""

    type: Literal["round.started"] = "round.started"
    round: int
    problem: Problem


class JudgeVerdict(_Event):
    """One judge finished (``abstained`` when no usable verdict came back)."""

    type: Literal["judge.verdict"] = "judge.verdict"
    round: int
    judge: JudgeName
    score: int | None
    confidence: int | None
    rationale: str | None
    own_answer: str | None = Field(default=None, description="The judge's own answer to the question")
    abstained: bool
    abstain_reason: str | None = None
    failure: CallFailure | None = None
    reasoning: str = ""
    model: str
    usage: Usage = Field(default_factory=Usage)

    # What the verdict says, beside its headline (who judged, the score, the confidence, whether it
    # abstained, the model and the call's usage). Its judgement row keeps the one durable copy: a
    # stored event holds the headline once its row is stored, and readers join the text back.
    TEXT: ClassVar[tuple[str, ...]] = ("rationale", "own_answer", "abstain_reason", "failure", "reasoning")

    @classmethod
    def headline(cls, data: dict[str, Any]) -> dict[str, Any]:
        """A stored event's data without the text its judgement row keeps."""
        return {key: value for key, value in data.items() if key not in cls.TEXT}

    @classmethod
    def joined(cls, headline: dict[str, Any], text: dict[str, Any]) -> dict[str, Any]:
        """A stored headline whole again, with ``text`` as its judgement row keeps it (a verdict
        without an answer of its own said ``""``; the row keeps none), in the live event's order."""
        if text.get("own_answer") is None and not headline.get("abstained"):
            text = text | {"own_answer": ""}
        merged = headline | text
        ordered = {key: merged[key] for key in cls.model_fields if key in merged}
        return ordered | {key: value for key, value in merged.items() if key not in ordered}

    @classmethod
    def cut(cls, data: dict[str, Any], text: dict[str, Any] | None) -> dict[str, Any] | None:
        """The headline to store in place of a stored event's ``data``, when joining it back with
        its row's ``text`` gives ``data`` exactly, key order included; None: keep it whole."""
        if text is None or not all(key in data for key in cls.TEXT):
            return None
        headline = cls.headline(data)
        return headline if list(cls.joined(headline, text).items()) == list(data.items()) else None

    @classmethod
    def of(cls, outcome: JudgeResult) -> JudgeVerdict:
        """The event of a judge's outcome (as it happens, or rebuilt from a stored round)."""
        verdict = outcome.verdict
        return cls(
            round=outcome.round,
            judge=outcome.judge,
            score=verdict.score if verdict else None,
            confidence=verdict.confidence if verdict else None,
            rationale=verdict.rationale if verdict else None,
            own_answer=verdict.own_answer if verdict else None,
            abstained=verdict is None,
            abstain_reason=outcome.abstain_reason,
            failure=outcome.failure,
            reasoning=outcome.reasoning,
            model=outcome.model,
            usage=outcome.usage,
        )


class RoundScored(RoundFigures):
    """The round's composite score and the decision taken on it, with the gate's evidence
    (``verification``) and the solver's answer or failed call (``solver``; see ``Round``)."""

    type: Literal["round.scored"] = "round.scored"
    round: int
    verification: list[str] = Field(default_factory=list)
    unverified: list[str] = Field(default_factory=list, description="Steps read but not checkable")
    solver: SolverResult | None = None
    unchanged: bool = Field(default=False, description="No revision: the version it was to revise, again")

    @classmethod
    def of_round(cls, record: Round) -> RoundScored:
        """The event of a scored round, rebuilt from it (``graphs.replay``; the same as ``score``'s)."""
        figures = record.model_dump(include=set(RoundFigures.model_fields))
        return cls(
            round=record.round,
            verification=record.verification,
            unverified=record.unverified,
            solver=record.solver,
            unchanged=record.unchanged,
            **figures,
        )


class RoundEscalated(_Event):
    """One step of an acceptance's escalation (``graphs.escalation``): stage 0 is the run's panel,
    whose acceptance fell below its calibrated threshold; each next stage a stronger panel's verdict
    on the same version; the last, when none accepted it, the person it goes to."""

    type: Literal["round.escalated"] = "round.escalated"
    round: int
    stage: int = Field(description="0: the run's panel; 1, 2…: the stronger panels in order")
    panel: str = Field(description="The judge model of the stage, or 'a person' at the end")
    quality: float | None = Field(description="Q the stage's panel gave the version (null: none)")
    threshold: float | None = Field(description="The stage's calibrated threshold (null: none)")
    decision: str = Field(description="escalated, accepted, needs_review, revise or exhausted")
    reason: str
    usage: Usage = Field(
        default_factory=Usage,
        description="What the stage's judge calls cost (none at stage 0 and at a person): charged to the "
        "run, its project's and key's ledgers and /metrics like the run's own judges",
    )


class ReviserThinking(_Event):
    """A piece of the reviser's think-aloud, as it is produced."""

    type: Literal["reviser.thinking"] = "reviser.thinking"
    round: int
    delta: str


class RevisionProposed(_Event):
    """The reviser's new version (or why there is none). ``unchanged``: the version it returned is
    the one it was asked to revise, up to whitespace — no revision, the model's failure (``note``)."""

    type: Literal["revision.proposed"] = "revision.proposed"
    round: int
    problem: Problem | None
    error: str | None = None
    failure: CallFailure | None = None
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    unchanged: bool = False
    note: str | None = None
    not_revised: list[str] = Field(
        default_factory=list,
        description="Why each attempt of the model under test that did not revise was refused, in order",
    )
    givens_changed: list[str] = Field(
        default_factory=list,
        description="Quantities the question gives that this revision changed, added or removed",
    )


class RunFinished(_Event):
    """The loop ended; the metrics are the run's. An ``error`` run has no score: its quality and
    metric fields are null and ``stop_reason`` (with ``failure``) says why."""

    type: Literal["run.finished"] = "run.finished"
    outcome: str
    stop_reason: str
    rounds: int
    final_quality: float | None
    rounds_to_pass: int | None
    avg_quality_final: float | None
    avg_quality_all_steps: float | None
    failure: CallFailure | None = None


RunEvent = Annotated[
    RoundStarted
    | JudgeVerdict
    | RoundScored
    | RoundEscalated
    | ReviserThinking
    | RevisionProposed
    | RunFinished,
    Field(discriminator="type"),
]
RUN_EVENT_ADAPTER: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)
