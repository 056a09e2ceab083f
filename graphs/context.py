"""What a refinement run depends on, passed through LangGraph's runtime context."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agents.identity import Warrants
from agents.judges import Judge
from agents.panel import Panel, offline_panel
from agents.reviser import Reviser
from agents.schemas import JudgeName
from agents.solver import Solver
from graphs.scoring import ScoringPolicy

if TYPE_CHECKING:
    from graphs.escalation import Guarantee


@dataclass(frozen=True)
class RunContext:
    """The panel (seven judges and, for a model-backed panel, a solver), the model under test, and
    the scoring policy. Build it from a panel with :meth:`of`, so that the solver is never left out.

    ``screen``: the panel is a screen (the offline panel): its pass is ``screened``, never
    ``accepted``. A context built by hand on the offline judges is a screen too (``__post_init__``),
    so no path turns the offline panel's pass into an acceptance.
    ``uncertified``: why this panel may not accept (the deployment requires a warrant it lacks);
    None: it may. A version it would accept then ends in ``needs_review`` with this cause.
    ``revise_retries``: how often the model under test is asked again when its reply is no revision
    (``graphs.revising``).
    ``warrants``: the records the panel may cite by the model id its endpoint reports; with them,
    whether the panel may accept is decided per round from the id its replies reported
    (:meth:`uncertified_by`), and ``uncertified`` is not read.
    ``guarantee``: an acceptance below the panel's calibrated threshold escalates
    (``graphs.escalation``).
    """

    judges: Mapping[JudgeName, Judge]
    reviser: Reviser
    policy: ScoringPolicy
    solver: Solver | None = None
    screen: bool = False
    uncertified: str | None = None
    warrants: Warrants | None = None
    revise_retries: int = 0  # how often a reply that is no revision is asked for again
    # The target and the calibrated thresholds an acceptance must reach (None: no target set).
    guarantee: Guarantee | None = None

    def __post_init__(self) -> None:
        if not self.screen and offline_panel(self.judges):
            object.__setattr__(self, "screen", True)  # frozen: set once, at construction

    @classmethod
    def of(
        cls,
        panel: Panel,
        policy: ScoringPolicy,
        *,
        warrants: Warrants | None = None,
        guarantee: Guarantee | None = None,
    ) -> RunContext:
        """The context of a run on ``panel`` under ``policy``."""
        return cls(
            judges=panel.judges,
            reviser=panel.reviser,
            policy=policy,
            solver=panel.solver,
            screen=panel.screen,
            warrants=warrants,
            revise_retries=panel.reviser_retries,
            guarantee=guarantee,
        )

    def uncertified_by(self, reported_model: str | None) -> str | None:
        """Why the panel, its endpoint having reported ``reported_model`` this round, may not accept."""
        return self.warrants.uncertified(reported_model) if self.warrants is not None else self.uncertified
