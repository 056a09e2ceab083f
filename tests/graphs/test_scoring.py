"""Scoring policies: worked examples of the paper policy, properties of the default one."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphs.scoring import (
    UNIFORM_VARIANCE,
    Decision,
    ScoringPolicy,
    Vote,
    decide,
    gate,
    get_policy,
    is_pass,
    observed_agreement,
    score_round,
    shortfall_agreement,
)

PAPER = get_policy("think-paper")
DEFAULT = get_policy("default")


def votes(scores: Sequence[float | None], confidence: float = 80.0, failed: bool = True) -> list[Vote]:
    return [
        Vote(f"j{i}", s, None if s is None else confidence, failed=s is None and failed)
        for i, s in enumerate(scores)
    ]


def passing(m: int, n: int = 7, confidence: float = 80.0) -> list[Vote]:
    return votes([90.0] * m + [50.0] * (n - m), confidence)


class TestPaperPolicy:
    def test_all_pass_worked_example(self) -> None:
        # PR = 1, A = 1, C = 0.8 -> 0.5 + 0.3 + 0.16
        assert score_round(passing(7), PAPER).quality == 0.96

    def test_six_of_seven_worked_example(self) -> None:
        # PR = 6/7, A = (30 + 0) / 42, C = 0.8 -> 0.428571 + 0.214286 + 0.16 = 0.802857
        result = score_round(passing(6), PAPER)
        assert result.agreement == pytest.approx(30 / 42)
        assert result.quality == 0.803

    def test_is_not_monotone_zero_passing_beats_one(self) -> None:
        # The reference's observed agreement is 1 when all seven fail.
        assert score_round(passing(0), PAPER).quality == 0.46
        assert score_round(passing(1), PAPER).quality == 0.446

    def test_six_passing_can_never_reach_tau(self) -> None:
        assert score_round(passing(6, confidence=100.0), PAPER).quality == 0.843
        assert decide(score_round(passing(6, confidence=100.0), PAPER), 1, PAPER) is Decision.REVISE

    def test_abstention_counts_as_zero(self) -> None:
        result = score_round(votes([90.0] * 6 + [None]), PAPER)
        assert result.n_voting == 7 and result.n_passing == 6
        assert result.confidence == pytest.approx(6 * 0.8 / 7)
        assert decide(result, 1, PAPER) is Decision.REVISE  # the reference scores a failure: no error

    def test_decides_on_the_rounded_quality_as_the_reference_does(self) -> None:
        almost = votes([90.0] * 7, confidence=24.99)  # 0.8 + 0.2 * 0.2499 = 0.84998 -> 0.85
        assert score_round(almost, PAPER).quality == 0.85
        assert decide(score_round(almost, PAPER), 1, PAPER) is Decision.ACCEPTED

    def test_stops_at_tau_inclusive_but_counts_pass_strictly(self) -> None:
        policy = get_policy("think-paper", tau=0.96)
        result = score_round(passing(7), policy)
        assert decide(result, 1, policy) is Decision.ACCEPTED
        assert not is_pass(result.quality, policy, for_metrics=True)

    def test_three_evaluations_then_exhausted(self) -> None:
        result = score_round(passing(3), PAPER)
        assert decide(result, 2, PAPER) is Decision.REVISE
        assert decide(result, 3, PAPER) is Decision.EXHAUSTED

    def test_never_asks_for_review(self) -> None:
        split = votes([100.0] * 3 + [5.0] * 4, confidence=99.0)
        assert decide(score_round(split, PAPER), 2, PAPER, score_round(split, PAPER)) is Decision.REVISE


class TestDefaultPolicyExamples:
    """The audit's cases, by name."""

    def test_five_pass_two_fail_is_revised(self) -> None:
        result = score_round(votes([90.0] * 5 + [40.0] * 2, confidence=90.0), DEFAULT)
        assert decide(result, 1, DEFAULT) is Decision.REVISE

    def test_five_pass_two_malformed_is_not_accepted_and_scores_no_higher(self) -> None:
        failing = score_round(votes([90.0] * 5 + [40.0] * 2, confidence=90.0), DEFAULT)
        malformed = score_round(votes([90.0] * 5 + [None] * 2, confidence=90.0), DEFAULT)
        assert malformed.quality is not None and failing.quality is not None
        assert malformed.quality <= failing.quality
        assert decide(malformed, 1, DEFAULT) is Decision.ERROR  # the panel failed: not the model's fail

    def test_an_abstaining_judge_counts_as_not_passed(self) -> None:
        result = score_round(votes([100.0] * 6 + [None], confidence=100.0), DEFAULT)
        assert result.n_passing == 6 and result.pass_rate == pytest.approx(6 / 7)
        assert not is_pass(result.quality, DEFAULT)

    def test_decisions_use_the_exact_quality(self) -> None:
        almost = score_round(votes([90.0] * 7, confidence=24.99), DEFAULT)
        assert almost.quality == pytest.approx(0.84998)
        assert decide(almost, 1, DEFAULT) is Decision.REVISE

    def test_same_pass_rate_different_quality(self) -> None:
        # 6 of 7 pass in both; the seventh misses by 5 points in one panel and by 65 in the other.
        near = score_round(votes([95.0] * 6 + [80.0], confidence=90.0), DEFAULT)
        far = score_round(votes([95.0] * 6 + [20.0], confidence=90.0), DEFAULT)
        assert near.pass_rate == far.pass_rate == pytest.approx(6 / 7)
        assert near.agreement == pytest.approx(1 - (25 / 7) / UNIFORM_VARIANCE)  # 0.996
        assert far.agreement == pytest.approx(1 - (65**2 / 7) / UNIFORM_VARIANCE)  # 0.290
        assert near.agreement is not None
        assert near.quality == pytest.approx(0.5 * 6 / 7 + 0.3 * near.agreement + 0.2 * 6 * 0.9 / 7)
        assert decide(near, 1, DEFAULT) is Decision.ACCEPTED
        assert decide(far, 1, DEFAULT) is Decision.REVISE

    def test_unanimous_failure_earns_nothing(self) -> None:
        result = score_round(votes([0.0] * 7), DEFAULT)
        assert result.agreement == 0.0 and result.quality == 0.0

    def test_polarized_split_before_a_revision_is_revised(self) -> None:
        split = score_round(votes([100.0] * 3 + [10.0] * 4, confidence=95.0), DEFAULT)
        assert decide(split, 1, DEFAULT) is Decision.REVISE

    def test_split_that_persists_after_a_revision_needs_review(self) -> None:
        split = score_round(votes([100.0] * 3 + [10.0] * 4, confidence=95.0), DEFAULT)
        assert decide(split, 2, DEFAULT, previous=split) is Decision.NEEDS_REVIEW
        resolved = score_round(votes([100.0] * 7, confidence=95.0), DEFAULT)
        assert decide(split, 2, DEFAULT, previous=resolved) is Decision.REVISE

    def test_mild_or_unsure_splits_are_revised(self) -> None:
        mild = score_round(votes([100.0] * 3 + [67.0] * 4, confidence=95.0), DEFAULT)
        unsure = score_round(votes([100.0] * 3 + [10.0] * 4, confidence=40.0), DEFAULT)
        assert decide(mild, 2, DEFAULT, mild) is Decision.REVISE
        assert decide(unsure, 2, DEFAULT, unsure) is Decision.REVISE

    def test_no_quorum_from_failures_is_an_error(self) -> None:
        result = score_round(votes([90.0] * 4 + [None] * 3), DEFAULT)
        assert not result.valid and result.quality is None
        assert decide(result, 1, DEFAULT) is Decision.ERROR

    def test_no_quorum_from_declined_judges_needs_review(self) -> None:
        result = score_round(votes([90.0] * 4 + [None] * 3, failed=False), DEFAULT)
        assert decide(result, 1, DEFAULT) is Decision.NEEDS_REVIEW

    def test_per_judge_threshold(self) -> None:
        policy = get_policy("default", judge_thresholds={"j0": 95.0})
        assert not score_round(votes([90.0] * 7), policy).passes["j0"]

    def test_overrides_are_validated(self) -> None:
        with pytest.raises(ValueError, match="max_rounds"):
            get_policy("default", max_rounds=0)
        with pytest.raises(ValueError, match="unknown scoring policy"):
            get_policy("nope")

    def test_observed_agreement_of_the_reference(self) -> None:
        assert observed_agreement(0, 7) == 1.0 and observed_agreement(6, 7) == pytest.approx(30 / 42)


# Generators: panels of 7 with failed and declined judges, and policies with per-judge thresholds.
verdicts = st.one_of(
    st.tuples(st.integers(0, 100).map(float), st.integers(0, 100).map(float), st.just(False)),
    st.just((None, None, True)),  # a failed call
    st.just((None, None, False)),  # a judge that declined to score
)
panels = st.lists(verdicts, min_size=7, max_size=7)
thresholds = st.dictionaries(st.sampled_from([f"j{i}" for i in range(7)]), st.integers(1, 100).map(float))
policies = st.builds(
    lambda t, tau: get_policy("default", judge_thresholds=t, tau=tau),
    thresholds,
    st.sampled_from([0.5, 0.7, 0.85, 0.95]),
)


def as_votes(panel: list[tuple[float | None, float | None, bool]]) -> list[Vote]:
    return [Vote(f"j{i}", s, c, failed=f) for i, (s, c, f) in enumerate(panel)]


def replaced(panel: list[Vote], index: int, vote: Vote) -> list[Vote]:
    return [*panel[:index], vote, *panel[index + 1 :]]


def q_and_decision(panel: list[Vote], policy: ScoringPolicy) -> tuple[float | None, Decision]:
    result = score_round(panel, policy)
    return result.quality, decide(result, 1, policy)


def not_lower(after: float | None, before: float | None) -> bool:
    return before is None or (after is not None and after >= before - 1e-12)


@settings(max_examples=300)
@given(panels, st.integers(0, 6), policies, st.booleans())
def test_a_failing_vote_turned_abstention_never_raises_q_nor_gets_accepted(
    panel: list[tuple[float | None, float | None, bool]], index: int, policy: ScoringPolicy, failed: bool
) -> None:
    before = as_votes(panel)
    target = before[index]
    if target.score is None or target.score >= policy.threshold(target.judge):
        return
    after = replaced(before, index, Vote(target.judge, None, None, failed=failed))
    (q_before, d_before), (q_after, d_after) = q_and_decision(before, policy), q_and_decision(after, policy)
    assert not_lower(q_before, q_after) if q_after is not None else True
    if d_before is Decision.REVISE:
        assert d_after is not Decision.ACCEPTED


@settings(max_examples=300)
@given(panels, st.integers(0, 6), policies, st.integers(0, 100))
def test_an_abstention_turned_pass_never_lowers_q(
    panel: list[tuple[float | None, float | None, bool]], index: int, policy: ScoringPolicy, confidence: int
) -> None:
    before = as_votes(panel)
    target = before[index]
    if target.score is not None:
        return
    after = replaced(before, index, Vote(target.judge, 100.0, float(confidence)))
    assert not_lower(score_round(after, policy).quality, score_round(before, policy).quality)


@settings(max_examples=300)
@given(panels, st.integers(0, 6), policies, st.integers(0, 100))
def test_raising_any_score_never_lowers_q(
    panel: list[tuple[float | None, float | None, bool]], index: int, policy: ScoringPolicy, raise_by: int
) -> None:
    before = as_votes(panel)
    target = before[index]
    if target.score is None:
        return
    raised = Vote(target.judge, min(100.0, target.score + raise_by), target.confidence)
    assert not_lower(
        score_round(replaced(before, index, raised), policy).quality, score_round(before, policy).quality
    )


@settings(max_examples=200)
@given(panels, policies)
def test_a_round_with_a_failed_call_is_never_accepted_below_tau(
    panel: list[tuple[float | None, float | None, bool]], policy: ScoringPolicy
) -> None:
    result = score_round(as_votes(panel), policy)
    decision = decide(result, 1, policy)
    if decision is Decision.ACCEPTED:
        assert result.quality is not None and result.quality >= policy.tau
    if result.n_failed and decision is not Decision.ACCEPTED:
        assert decision is Decision.ERROR


@given(panels, st.sampled_from(["default", "think-paper"]))
def test_every_term_is_bounded(panel: list[tuple[float | None, float | None, bool]], name: str) -> None:
    result = score_round(as_votes(panel), get_policy(name))
    for value in (result.pass_rate, result.agreement, result.confidence, result.quality):
        assert value is None or 0.0 <= value <= 1.0


def test_shortfall_agreement_is_one_at_or_above_the_bar() -> None:
    assert shortfall_agreement(votes([85.0, 90.0, 100.0]), DEFAULT) == 1.0
    assert shortfall_agreement(votes([0.0, 100.0]), DEFAULT) == pytest.approx(max(0.0, 1 - (85**2 / 2) / 850))


@pytest.mark.parametrize("name", ["default", "think-paper"])
def test_a_verified_error_is_never_accepted_under_any_policy(name: str) -> None:
    policy = get_policy(name)
    assert gate(Decision.ACCEPTED, 1, policy, errors=1) is Decision.REVISE
    assert gate(Decision.ACCEPTED, policy.max_rounds, policy, errors=2) is Decision.EXHAUSTED
    assert gate(Decision.ACCEPTED, 1, policy, errors=0) is Decision.ACCEPTED
    assert gate(Decision.NEEDS_REVIEW, 1, policy, errors=1) is Decision.NEEDS_REVIEW
