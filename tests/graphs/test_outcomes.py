"""How a run ends: the offline screen, the warrant hook, a degenerate panel, an unchanged revision,
and an error run without scores (scripted judges and reviser: pure graph behaviour)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from agents.judges import JudgeRequest
from agents.llm.models import ModelRegistry
from agents.panel import PanelFactory
from agents.schemas import (
    JUDGES,
    JudgeResult,
    Problem,
)
from graphs.context import RunContext
from graphs.events import JudgeVerdict, RevisionProposed, RunEvent, RunFinished
from graphs.scoring import SCREENED_REASON, Decision, certify, get_policy
from tests.helpers.driving import drive
from tests.helpers.loop import EchoReviser, Verdict, context_of, passing, run
from tests.helpers.problems import ORCHESTRA


def split(judge: str, round_no: int) -> Verdict:
    """A confident, polarized 3-4 split (the policy sends it to review if it persists)."""
    return (100, 95, f"{judge} passes it") if judge in JUDGES[:3] else (5, 95, f"{judge} refuses it")


# --- the screen and the warrant hook ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "screen", "uncertified", "expected"),
    [
        (Decision.ACCEPTED, True, None, Decision.SCREENED),
        (Decision.ACCEPTED, True, "panel not certified: no record", Decision.SCREENED),
        (Decision.ACCEPTED, False, "panel not certified: no record", Decision.NEEDS_REVIEW),
        (Decision.ACCEPTED, False, None, Decision.ACCEPTED),
        *((d, True, "x", d) for d in Decision if d is not Decision.ACCEPTED),
    ],
)
def test_only_an_acceptance_is_certified(
    decision: Decision, screen: bool, uncertified: str | None, expected: Decision
) -> None:
    assert certify(decision, screen=screen, uncertified=uncertified)[0] is expected


async def test_the_offline_panel_from_the_factory_is_a_screen_and_its_pass_is_screened() -> None:
    async with PanelFactory(ModelRegistry({}), {}) as factory:
        panel = factory.build("rubric", "rubric")
        context = RunContext.of(panel, get_policy("default"))
        result, events = await run(
            context,
            Problem(question="Ann has 3 apples and buys 4 more. How many?", solution="3 + 4 = 7 apples."),
        )
    assert panel.screen and context.screen
    assert result.outcome == "screened" and result.stop_reason == SCREENED_REASON
    assert result.rounds[-1].decision == "screened"
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.outcome == "screened"
    assert result.scored and result.metrics is not None and result.metrics["passed"]


def test_a_context_built_by_hand_on_the_offline_judges_is_a_screen(
    rubric_context: Callable[..., RunContext],
) -> None:
    assert rubric_context().screen
    assert not context_of(passing).screen


async def test_an_acceptance_without_the_required_warrant_ends_in_review_with_its_cause() -> None:
    cause = "panel not certified: no validity record at or below 10 % false accepts"
    result, events = await run(context_of(passing, uncertified=cause))
    assert result.outcome == "needs_review" and result.stop_reason == cause
    assert isinstance(events[-1], RunFinished) and events[-1].stop_reason == cause
    # Sent to review, it reports no pass anywhere, whatever Q reached.
    assert result.metrics is not None and result.metrics["passed"] is False
    assert result.metrics["rounds_to_pass"] is None and events[-1].rounds_to_pass is None
    certified, _ = await run(context_of(passing))
    assert certified.outcome == "accepted"


async def test_the_warrant_rule_leaves_a_refusal_alone() -> None:
    result, _ = await run(
        context_of(lambda j, r: (40, 90, f"{j} refuses"), uncertified="panel not certified")
    )
    assert result.outcome == "exhausted" and result.stop_reason.startswith("max_rounds reached")


# --- a degenerate panel -------------------------------------------------------------------------


async def test_seven_identical_rationales_are_abstentions_and_the_run_ends_in_error() -> None:
    copied = "Step 1:   40 × 120 / 60 = 80 minutes."
    result, events = await run(
        context_of(lambda j, r: (90 if j == "apply" else 20, 80, copied.upper() if j == "apply" else copied))
    )
    assert result.outcome == "error" and result.metrics is None
    assert result.stop_reason.startswith("the panel gave no usable verdict")
    assert "degenerate: every judge wrote the same rationale" in result.stop_reason
    first = result.rounds[0]
    assert first.decision == "error" and all(o.verdict is None for o in first.outcomes)
    assert all(o.abstain_reason and o.abstain_reason.startswith("degenerate") for o in first.outcomes)
    assert all(copied in o.raw_outputs[0] or copied.upper() in o.raw_outputs[0] for o in first.outcomes)
    raw = [e for e in events if isinstance(e, JudgeVerdict)]
    assert len(raw) == 7 and all(e.score is not None and not e.abstained for e in raw)
    assert len(result.revisions) == 0  # the model under test is not asked to revise for the panel's failure


@pytest.mark.parametrize("policy", ["default", "think-paper"])
async def test_a_panel_of_zeros_with_zero_confidence_is_no_verdict_under_any_policy(policy: str) -> None:
    result, events = await run(context_of(lambda j, r: (0, 0, f"{j} looked at it"), policy=policy))
    assert result.outcome == "error", result.stop_reason
    assert "degenerate: every judge gave score 0 with confidence 0" in result.stop_reason
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.final_quality is None


async def test_a_panel_that_truly_refuses_with_zero_scores_but_some_confidence_is_scored() -> None:
    result, _ = await run(context_of(lambda j, r: (0, 70, f"{j}: the premise is impossible")))
    assert result.outcome == "exhausted"


# --- an unchanged revision ----------------------------------------------------------------------


async def test_an_unchanged_revision_is_a_failed_attempt_and_the_run_is_exhausted_not_sent_to_review() -> (
    None
):
    echo = EchoReviser()
    result, events = await run(context_of(split, reviser=echo, revise_retries=1))
    assert result.outcome == "exhausted", result.stop_reason
    assert result.stop_reason.startswith("the model under test did not revise (2 attempt(s))")
    assert "unchanged" in result.stop_reason
    assert len(result.rounds) == 1 and echo.calls == [1, 1]  # asked again once, never judged
    proposed = [e for e in events if isinstance(e, RevisionProposed)]
    assert len(proposed) == 1 and proposed[0].unchanged and len(proposed[0].not_revised) == 2
    assert proposed[0].note and proposed[0].note.startswith("the model under test did not revise")
    assert result.scored and result.metrics is not None and not result.metrics["passed"]


async def test_a_real_revision_that_stays_split_still_goes_to_review() -> None:
    result, events = await run(context_of(split))
    assert result.outcome == "needs_review" and result.stop_reason == "judges stay split after a revision"
    assert not any(e.unchanged for e in events if isinstance(e, RevisionProposed))


async def test_the_control_arm_flags_an_unchanged_revision_and_scores_it() -> None:
    events: list[RunEvent] = []
    result = await drive(
        ORCHESTRA, context_of(split, reviser=EchoReviser()), arm="control", on_event=events.append
    )
    assert result.outcome == "exhausted" and result.rounds[0].unchanged
    assert "no revision" in result.stop_reason
    proposed = [e for e in events if isinstance(e, RevisionProposed)]
    assert len(proposed) == 1 and proposed[0].unchanged


# --- an error run has no score ------------------------------------------------------------------


async def test_an_error_run_carries_no_score_like_field() -> None:
    def one_fails(judge: str, round_no: int) -> Verdict:
        return passing(judge, round_no)

    context = context_of(one_fails)
    broken = dict(context.judges)

    @dataclass
    class Failing:
        async def assess(self, request: JudgeRequest) -> JudgeResult:
            from agents.llm.calls import CallFailure

            failure = CallFailure(
                kind="endpoint", model="m", exception="APIConnectionError", message="refused"
            )
            return JudgeResult(
                judge=request.judge, round=request.round, failure=failure, model="m", prompt_version="t"
            )

    broken["apply"] = Failing()
    result, events = await run(RunContext(judges=broken, reviser=context.reviser, policy=context.policy))
    assert result.outcome == "error" and result.rounds[0].quality is not None  # Q was computed...
    assert result.metrics is None  # ...but the run reports no score
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.final_quality, finished.rounds_to_pass, finished.avg_quality_final) == (None, None, None)
    assert finished.avg_quality_all_steps is None and finished.failure is not None
