"""An acceptance below the calibrated threshold escalates: to a stronger panel, then to review; each
step is a round.escalated event and is kept on the round (scripted judges: pure graph behaviour)."""

from __future__ import annotations

from agents.rubric.panel import RubricReviser
from agents.schemas import JUDGES
from graphs.context import RunContext
from graphs.escalation import BELOW, Guarantee, Stage
from graphs.events import RoundEscalated, RunEvent
from graphs.scoring import get_policy
from tests.helpers.driving import drive
from tests.helpers.problems import ORCHESTRA
from tests.helpers.scripted_panels import ScriptedJudge

POLICY = get_policy("default")


def steady(score: int, confidence: int, model: str = "scripted") -> ScriptedJudge:
    """A judge that gives every version the same score and confidence."""
    return ScriptedJudge(lambda _: (score, confidence), model)


def context(guarantee: Guarantee | None) -> RunContext:
    # 90 with confidence 60: every judge passes, Q = 0.5 + 0.3 + 0.2 * 0.6 = 0.92 ≥ τ (0.85)
    judges = dict.fromkeys(JUDGES, steady(90, 60))
    return RunContext(judges=judges, reviser=RubricReviser(), policy=POLICY, guarantee=guarantee)


def stage(name: str, score: int, confidence: int, threshold: float | None) -> Stage:
    return Stage(name, dict.fromkeys(JUDGES, steady(score, confidence, name)), POLICY, threshold)


async def run(guarantee: Guarantee | None) -> tuple[object, list[RunEvent]]:
    events: list[RunEvent] = []
    result = await drive(ORCHESTRA, context(guarantee), on_event=events.append)
    return result, events


def steps(events: list[RunEvent]) -> list[RoundEscalated]:
    return [e for e in events if isinstance(e, RoundEscalated)]


async def test_without_a_target_nothing_escalates() -> None:
    result, events = await run(None)
    assert result.outcome == "accepted" and steps(events) == []  # type: ignore[attr-defined]


async def test_below_the_threshold_goes_to_the_stronger_panel_then_to_review() -> None:
    stronger = stage("strong", 95, 80, 0.99)  # Q 0.96: it would accept, below its own 0.99
    result, events = await run(Guarantee(0.05, 0.1, 0.95, (stronger,)))
    assert result.outcome == "needs_review"  # type: ignore[attr-defined]
    assert BELOW in result.stop_reason  # type: ignore[attr-defined]
    cascade = steps(events)
    assert [(s.stage, s.panel, s.decision) for s in cascade] == [
        (0, "the run's panel", "escalated"),
        (1, "strong", "escalated"),
        (2, "a person", "needs_review"),
    ]
    assert cascade[0].quality is not None and cascade[0].quality < 0.95 and cascade[1].threshold == 0.99
    kinds = [e.type for e in events]
    assert kinds.index("round.escalated") < kinds.index("round.scored")
    assert [s["stage"] for s in result.rounds[0].escalations] == [0, 1, 2]  # type: ignore[attr-defined]


async def test_a_stronger_panel_above_its_threshold_accepts() -> None:
    result, events = await run(Guarantee(0.05, 0.1, 0.95, (stage("strong", 95, 80, 0.9),)))
    assert result.outcome == "accepted"  # type: ignore[attr-defined]
    assert [s.decision for s in steps(events)] == ["escalated", "accepted"]


async def test_a_stronger_panel_that_refuses_decides_the_round() -> None:
    result, events = await run(Guarantee(0.05, 0.1, 0.95, (stage("strong", 30, 90, 0.9),)))
    assert [s.decision for s in steps(events)][:2] == ["escalated", "revise"]
    assert result.rounds[0].decision == "revise"  # type: ignore[attr-defined]


async def test_above_the_threshold_the_panel_accepts_itself() -> None:
    result, events = await run(Guarantee(0.05, 0.1, 0.9, ()))
    assert result.outcome == "accepted" and steps(events) == []  # type: ignore[attr-defined]
