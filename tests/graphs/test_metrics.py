"""RoundsToPass and AvgQualityScore as the paper's text and the reference code define them."""

from __future__ import annotations

import pytest

from graphs.metrics import RoundMeasures, run_metrics
from graphs.scoring import get_policy

PAPER = get_policy("think-paper")


def scored(
    round_no: int, quality: float | None, levels: dict[str, float | None] | None = None
) -> RoundMeasures:
    return RoundMeasures(round_no, quality, levels or {})


def test_passing_run_reports_first_round_above_tau() -> None:
    metrics = run_metrics([scored(1, 0.5), scored(2, 0.9), scored(3, 0.95)], PAPER)
    assert metrics.rounds_to_pass == 2 and metrics.passed
    assert metrics.avg_quality_final == 0.95
    assert metrics.avg_quality_all_steps == pytest.approx((0.5 + 0.9 + 0.95) / 3, abs=1e-4)
    assert metrics.quality_change == pytest.approx(0.05)


def test_paper_counts_pass_strictly_above_tau() -> None:
    metrics = run_metrics([scored(1, 0.85)], PAPER)
    assert not metrics.passed and metrics.rounds_to_pass is None


def test_non_passer_is_censored_not_dropped() -> None:
    metrics = run_metrics([scored(1, 0.4), scored(2, 0.6), scored(3, 0.7)], PAPER)
    assert metrics.rounds_to_pass is None and metrics.rounds_to_pass_censored == 4


def test_level_change_is_final_minus_previous() -> None:
    rounds = [
        scored(1, 0.4, {"remember": 10.0, "apply": None}),
        scored(2, 0.6, {"remember": 90.0, "apply": 80.0}),
    ]
    metrics = run_metrics(rounds, PAPER)
    assert metrics.level_final == {"remember": 90.0, "apply": 80.0}
    assert metrics.level_change == {"remember": 80.0, "apply": None}


def test_invalid_rounds_are_left_out_of_quality() -> None:
    metrics = run_metrics([scored(1, None), scored(2, 0.6)], get_policy("default"))
    assert metrics.avg_quality_all_steps == 0.6 and metrics.quality_change is None
