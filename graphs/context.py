"""What a refinement run depends on, passed through LangGraph's runtime context."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.judges import Judge
from agents.reviser import Reviser
from agents.schemas import JudgeName
from graphs.scoring import ScoringPolicy


@dataclass(frozen=True)
class RunContext:
    """The panel (seven judges), the model under test, and the scoring policy."""

    judges: Mapping[JudgeName, Judge]
    reviser: Reviser
    policy: ScoringPolicy
