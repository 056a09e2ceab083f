"""The refinement graph's state: a TypedDict whose list fields accumulate through reducers."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from agents.llm.calls import CallFailure
from agents.schemas import JudgeName, JudgeResult, Problem, RevisionResult, SolverResult
from graphs.scoring import Decision, PanelScore


class RoundFigures(BaseModel):
    """A scored round's numbers and the decision taken on them."""

    model_config = ConfigDict(frozen=True)

    quality: float | None = Field(description="The composite quality Q, 0–1 (null: the round had no quorum)")
    pass_rate: float | None = Field(description="Share of the seven judges that passed the version, 0–1")
    agreement: float | None = Field(description="How closely the panel agrees the version meets the bar, 0–1")
    confidence: float | None = Field(
        description="The passing judges' confidence, averaged over all seven, 0–1"
    )
    n_voting: int = Field(description="Judges with a verdict")
    n_passing: int = Field(description="Judges whose score reached their threshold")
    n_failed: int = Field(
        default=0, description="Judges whose call failed (abstentions that are not the judge's choice)"
    )
    decision: str = Field(
        description="What the loop did next: accepted, screened, revise, exhausted, needs_review or error"
    )

    @classmethod
    def of(cls, score: PanelScore, decision: Decision) -> RoundFigures:
        """The figures of a pure-function score."""
        return cls(
            quality=score.quality,
            pass_rate=score.pass_rate,
            agreement=score.agreement,
            confidence=score.confidence,
            n_voting=score.n_voting,
            n_passing=score.n_passing,
            n_failed=score.n_failed,
            decision=decision.value,
        )


class Round(RoundFigures):
    """One evaluated version: the seven outcomes, the composite score and the decision.

    ``verification`` is the gate's evidence: every line is an error that refuses acceptance — a
    computation of the stated solution found wrong, or (``solver: ...``) a final answer that differs
    from the one the solver found for the question alone. ``solver`` is that solver's call as made
    (None when no solver ran: the offline panel, or a policy without the gate); a solver call that
    failed shows its cause there and adds no line: it is neither a pass nor a fail of the version.
    """

    round: int
    problem: Problem
    outcomes: list[JudgeResult]
    verification: list[str] = []
    unverified: list[str] = Field(
        default_factory=list,
        description="Steps of the stated solution the verifier read but could not check (named, "
        "never passed as checked; for the offline screen each is also gate evidence)",
    )
    solver: SolverResult | None = None
    unchanged: bool = Field(
        default=False,
        description="No revision: this version is the one the model under test was asked to revise "
        "(up to whitespace); the model's failure, never a reason to send the run to review",
    )

    escalations: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Each step of the acceptance's escalation (round.escalated events), in order; "
        "empty when the round was not escalated",
    )

    def level_scores(self) -> dict[str, float | None]:
        """Each judge's score this round (None when it abstained)."""
        return {o.judge: (o.verdict.score if o.verdict else None) for o in self.outcomes}

    def failures(self) -> list[CallFailure]:
        """The failed judge calls of this round, in panel order."""
        return [o.failure for o in self.outcomes if o.failure is not None]


RoundRecord = Round  # its old name, which checkpoints of runs in flight across the rename carry


class JudgeTask(TypedDict):
    """What one judge node receives through ``Send``."""

    judge: JudgeName
    round: int
    problem: Problem
    reference: Problem | None


class SolveTask(TypedDict):
    """What the solver node receives through ``Send``: the version whose question it solves."""

    round: int
    problem: Problem


class RefinementState(TypedDict, total=False):
    """The run so far. ``outcomes`` gathers the parallel judges' results of every round,
    ``solutions`` the solver's. ``arm``: "control" enters through one blind revision of
    ``original`` and judges it once (the zero-shot control arm); anything else is the loop."""

    arm: str
    original: Problem
    current: Problem
    previous: Problem | None
    round: int
    outcomes: Annotated[list[JudgeResult], operator.add]
    solutions: Annotated[list[SolverResult], operator.add]
    rounds: Annotated[list[Round], operator.add]
    revisions: Annotated[list[RevisionResult], operator.add]
    decision: str
    stop_reason: str
    failure: CallFailure | None
