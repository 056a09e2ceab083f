"""The refinement graph's state: a TypedDict whose list fields accumulate through reducers."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from pydantic import BaseModel, ConfigDict

from agents.schemas import CallFailure, JudgeName, JudgeResult, Problem, RevisionResult, SolverResult
from graphs.scoring import Decision, RoundScore


class RoundFigures(BaseModel):
    """A scored round's numbers and the decision taken on them."""

    model_config = ConfigDict(frozen=True)

    quality: float | None
    pass_rate: float | None
    agreement: float | None
    confidence: float | None
    n_voting: int
    n_passing: int
    n_failed: int = 0
    decision: str

    @classmethod
    def of(cls, score: RoundScore, decision: Decision) -> RoundFigures:
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


class RoundRecord(RoundFigures):
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
    solver: SolverResult | None = None

    def level_scores(self) -> dict[str, float | None]:
        """Each judge's score this round (None when it abstained)."""
        return {o.judge: (o.verdict.score if o.verdict else None) for o in self.outcomes}

    def failures(self) -> list[CallFailure]:
        """The failed judge calls of this round, in panel order."""
        return [o.failure for o in self.outcomes if o.failure is not None]


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
    ``solutions`` the solver's."""

    original: Problem
    current: Problem
    previous: Problem | None
    round: int
    outcomes: Annotated[list[JudgeResult], operator.add]
    solutions: Annotated[list[SolverResult], operator.add]
    rounds: Annotated[list[RoundRecord], operator.add]
    revisions: Annotated[list[RevisionResult], operator.add]
    decision: str
    stop_reason: str
    failure: CallFailure | None
