"""The verifier's chain gate in the loop: a stale total or an answer copied from a middle step is
never accepted whatever the panel says; the screen passes only a chain it has checked whole (an
unverified step refuses for it, named as its evidence); the trace names unverified steps and the
givens a revision changed."""

from __future__ import annotations

from dataclasses import dataclass

from agents.reviser import RevisionRequest, ThinkingSink
from agents.schemas import Problem, RevisionResult
from graphs.events import RevisionProposed, RoundScored
from graphs.scoring import Decision
from tests.helpers.loop import EchoReviser, context_of, passing, run

STALE = Problem(
    question="Ravi buys 14 pens at $8.65 each and pays $12 for postage. How much does he pay in all?",
    solution="14 × 8.65 = 121.1. 120.10 + 12 = 132.10, so he pays $132.10.",
)
COPIED = Problem(
    question="A shop has 4 boxes of 15 rolls. It sells 22 rolls. How many rolls are left?",
    solution="4 × 15 = 60. 60 − 22 = 38. There are 60 rolls left.",
)
PROSE_SPAN = Problem(
    question="A film starts at 8:40 and ends at 10:15. How long is the film?",
    solution="From 8:40 to 10:15 is 1 hour 25 minutes.",
)
SOUND = Problem(
    question="Ravi buys 14 pens at $8.65 each and pays $12 for postage. How much does he pay in all?",
    solution="14 × 8.65 = 121.10. 121.10 + 12 = 133.10, so he pays $133.10.",
)


async def test_a_correction_not_carried_to_its_later_use_is_never_accepted() -> None:
    result, events = await run(context_of(passing), STALE)
    first = result.rounds[0]
    assert first.decision != Decision.ACCEPTED
    assert any("120.10" in line for line in first.verification)
    scored = [e for e in events if isinstance(e, RoundScored)]
    assert scored[0].verification == first.verification


async def test_a_final_answer_copied_from_a_middle_step_is_never_accepted() -> None:
    result, _ = await run(context_of(passing), COPIED)
    assert result.rounds[0].decision != Decision.ACCEPTED
    assert result.rounds[0].verification


async def test_a_wrong_clock_span_in_prose_is_never_accepted() -> None:
    result, _ = await run(context_of(passing), PROSE_SPAN)
    assert result.rounds[0].decision != Decision.ACCEPTED
    assert any("1 hour 35 minutes" in line for line in result.rounds[0].verification)


async def test_a_sound_chain_is_accepted_by_a_passing_panel() -> None:
    result, _ = await run(context_of(passing), SOUND)
    assert result.rounds[0].decision == Decision.ACCEPTED
    assert result.rounds[0].verification == []
    assert result.rounds[0].unverified == []


UNREAD = Problem(
    question="Lena and Omar collect shells on the beach. How many shells does Omar have?",
    solution="Omar has twice as many as Lena, which is 30 shells.",
)


async def test_a_model_panel_never_accepts_an_answer_resting_on_an_unverified_step() -> None:
    """The final answer is the value the unread relation states: the round ends needs_review, the
    step named as its cause, whatever the judges said."""
    result, events = await run(context_of(passing), UNREAD)
    first = result.rounds[0]
    assert first.unverified, "the relation with no referent is read but cannot be checked"
    assert first.decision == Decision.NEEDS_REVIEW and result.outcome == Decision.NEEDS_REVIEW
    assert result.stop_reason.startswith("the final answer depends on a step the verifier could not check")
    assert first.unverified[0] in result.stop_reason
    scored = [e for e in events if isinstance(e, RoundScored)]
    assert scored[0].unverified == first.unverified


CARRIED = Problem(
    question="Lena and Omar collect shells. Mia has 15 shells. How many do Omar and Mia have together?",
    solution="Omar has twice as many as Lena, which is 30 shells. Together 30 + 15 = 45 shells.",
)


async def test_an_answer_computed_from_an_unverified_step_is_held_for_review() -> None:
    """45 is checked, but it adds the 30 that nothing checked: traced back through the chain."""
    result, _ = await run(context_of(passing), CARRIED)
    assert result.rounds[0].decision == Decision.NEEDS_REVIEW
    assert "twice as many as Lena" in result.stop_reason


ASIDE = Problem(
    question="Lena and Omar collect shells. Mia has 4 bags of 5 shells. How many shells does Mia have?",
    solution="Omar has twice as many as Lena, which is 30 shells. Mia has 4 × 5 = 20 shells.",
)


async def test_an_unverified_step_the_answer_does_not_rest_on_is_named_and_not_held() -> None:
    result, _ = await run(context_of(passing), ASIDE)
    first = result.rounds[0]
    assert first.unverified and first.decision == Decision.ACCEPTED


async def test_the_screen_never_passes_a_version_with_an_unverified_step() -> None:
    result, events = await run(context_of(passing, screen=True), UNREAD)
    first = result.rounds[0]
    assert first.unverified and first.decision not in (Decision.ACCEPTED, Decision.SCREENED)
    assert first.verification == first.unverified  # the step is the gate's evidence, as written
    assert first.verification[0].startswith("unverified: Omar has twice as many as Lena")
    assert result.stop_reason.startswith("the stated solution has a step the screen could not check")
    scored = [e for e in events if isinstance(e, RoundScored)]
    assert scored[0].verification == first.verification and scored[0].unverified == first.unverified


async def test_the_screen_passes_a_chain_it_has_checked_whole() -> None:
    result, _ = await run(context_of(passing, screen=True), SOUND)
    first = result.rounds[0]
    assert first.decision == Decision.SCREENED and first.verification == first.unverified == []


@dataclass
class GivenChanger(EchoReviser):
    """A model under test that 'repairs' by changing a quantity the question gives."""

    async def revise(self, request: RevisionRequest, on_thinking: ThinkingSink) -> RevisionResult:
        problem = Problem(
            question=request.current.question.replace("14 pens", "12 pens"),
            solution="12 × 8.65 = 103.80. 103.80 + 12 = 115.80, so he pays $115.80.",
        )
        return RevisionResult(round=request.round, problem=problem, model="changer", prompt_version="t")


async def test_the_trace_names_the_givens_a_revision_changed() -> None:
    context = context_of(
        lambda judge, round_no: (10, 90, f"{judge}: the total is wrong"), reviser=GivenChanger()
    )
    _, events = await run(context, STALE)
    proposed = [e for e in events if isinstance(e, RevisionProposed)]
    assert proposed
    assert proposed[0].givens_changed == ["given '14 pens' became '12 pens'"]
