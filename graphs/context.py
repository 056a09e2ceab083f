"""What a refinement run depends on, passed through LangGraph's runtime context."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.judges import Judge
from agents.panel import Panel
from agents.reviser import Reviser
from agents.schemas import JudgeName
from agents.solver import Solver
from graphs.scoring import ScoringPolicy


@dataclass(frozen=True)
class RunContext:
    """The panel (seven judges and, for a model-backed panel, a solver), the model under test, and
    the scoring policy. Build it from a panel with :meth:`of`, so that the solver is never left out."""

    judges: Mapping[JudgeName, Judge]
    reviser: Reviser
    policy: ScoringPolicy
    solver: Solver | None = None
    # Set by the app when a warrant is required and the panel has none good enough: an acceptance
    # then ends needs_review, with this as its stop reason ("panel not certified: …").
    uncertified: str | None = None

    @classmethod
    def of(cls, panel: Panel, policy: ScoringPolicy) -> RunContext:
        """The context of a run on ``panel`` under ``policy``."""
        return cls(judges=panel.judges, reviser=panel.reviser, policy=policy, solver=panel.solver)
