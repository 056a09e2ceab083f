"""Scoring policies: worked examples of the paper policy, properties of the default one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphs.scoring import (
    Decision,
    Vote,
    decide,
    directional_kappa,
    get_policy,
    observed_agreement,
    score_round,
)

PAPER = get_policy("think-paper")
DEFAULT = get_policy("default")


def votes(scores: list[float | None], confidence: float = 80.0) -> list[Vote]:
    return [Vote(f"j{i}", s, None if s is None else confidence) for i, s in enumerate(scores)]


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

    def test_stops_at_tau_inclusive_but_counts_pass_strictly(self) -> None:
        from graphs.scoring import is_pass

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
        assert decide(score_round(split, PAPER), 1, PAPER) is Decision.REVISE


class TestDefaultPolicy:
    def test_unanimous_failure_earns_no_agreement(self) -> None:
        result = score_round(passing(0), DEFAULT)
        assert result.agreement == 0.0 and result.quality == 0.0

    def test_directional_kappa_values(self) -> None:
        assert directional_kappa(7, 7) == 1.0
        assert directional_kappa(6, 7) == pytest.approx(2 * 30 / 42 - 1)
        assert directional_kappa(3, 7) == 0.0
        assert observed_agreement(0, 7) == 1.0

    def test_abstentions_are_excluded(self) -> None:
        result = score_round(votes([90.0] * 6 + [None]), DEFAULT)
        assert (result.n_voting, result.n_passing, result.pass_rate) == (6, 6, 1.0)

    def test_without_quorum_round_is_invalid_not_failed(self) -> None:
        result = score_round(votes([90.0] * 4 + [None] * 3), DEFAULT)
        assert not result.valid and result.quality is None
        assert decide(result, 1, DEFAULT) is Decision.NEEDS_REVIEW

    def test_confident_polarized_split_needs_review(self) -> None:
        split = votes([100.0] * 3 + [10.0] * 4, confidence=95.0)
        assert decide(score_round(split, DEFAULT), 1, DEFAULT) is Decision.NEEDS_REVIEW

    def test_mild_split_is_revised(self) -> None:
        mild = votes([100.0] * 3 + [67.0] * 4, confidence=95.0)
        assert decide(score_round(mild, DEFAULT), 1, DEFAULT) is Decision.REVISE

    def test_unsure_split_is_revised(self) -> None:
        unsure = votes([100.0] * 3 + [10.0] * 4, confidence=40.0)
        assert decide(score_round(unsure, DEFAULT), 1, DEFAULT) is Decision.REVISE

    def test_per_judge_threshold(self) -> None:
        policy = get_policy("default", judge_thresholds={"j0": 95.0})
        assert not score_round(votes([90.0] * 7), policy).passes["j0"]

    def test_overrides_are_validated(self) -> None:
        with pytest.raises(ValueError, match="max_rounds"):
            get_policy("default", max_rounds=0)
        with pytest.raises(ValueError, match="unknown scoring policy"):
            get_policy("nope")


score_values = st.one_of(st.none(), st.integers(0, 100).map(float))
panels = st.lists(st.tuples(score_values, st.integers(0, 100).map(float)), min_size=7, max_size=7)


def as_votes(panel: list[tuple[float | None, float]]) -> list[Vote]:
    return [Vote(f"j{i}", s, c if s is not None else None) for i, (s, c) in enumerate(panel)]


@given(panels, st.sampled_from(["default", "think-paper"]))
def test_every_term_is_bounded(panel: list[tuple[float | None, float]], name: str) -> None:
    result = score_round(as_votes(panel), get_policy(name))
    for value in (result.pass_rate, result.agreement, result.confidence, result.quality):
        assert value is None or 0.0 <= value <= 1.0


@given(panels, st.integers(0, 6))
def test_default_one_more_passing_judge_never_lowers_quality(
    panel: list[tuple[float | None, float]], index: int
) -> None:
    before = as_votes(panel)
    target = before[index]
    if target.score is None or target.score >= 85:
        return
    after = [*before[:index], Vote(target.judge, 85.0, target.confidence), *before[index + 1 :]]
    q_before, q_after = score_round(before, DEFAULT).quality, score_round(after, DEFAULT).quality
    if q_before is not None:
        assert q_after is not None and q_after >= q_before


@given(panels, st.integers(0, 6), st.integers(0, 100))
def test_default_raising_any_score_never_lowers_quality(
    panel: list[tuple[float | None, float]], index: int, raise_by: int
) -> None:
    before = as_votes(panel)
    target = before[index]
    if target.score is None:
        return
    raised = Vote(target.judge, min(100.0, target.score + raise_by), target.confidence)
    after = [*before[:index], raised, *before[index + 1 :]]
    q_before, q_after = score_round(before, DEFAULT).quality, score_round(after, DEFAULT).quality
    if q_before is not None:
        assert q_after is not None and q_after >= q_before
