"""Table 1 and Table 2 as the THiNK reference analysis defines them, on hand-computed examples."""

from __future__ import annotations

import pytest

from agents.schemas import JUDGES
from graphs.analysis.paper_tables import ReferenceRound, paper_tables


def row(problem: str, round_no: int, score: float, confidence: float = 80.0) -> ReferenceRound:
    return ReferenceRound(problem, round_no, dict.fromkeys(JUDGES, score), confidence)


# All seven at 90 with confidence 80: Q = 0.96 (a pass). All at 50: Q = 0.46 (0 passing, A = 1).
ROWS = [
    row("a", 1, 50),
    row("a", 2, 90),  # passes in round 2
    row("b", 1, 50),
    row("b", 2, 50),
    row("b", 3, 50),  # never passes
    row("c", 1, 90),  # passes at once; one round only, so not in Table 1 or ±
]


def test_table2_drops_non_passers_from_rounds_to_pass_but_reports_pass_rate() -> None:
    tables = paper_tables(ROWS)
    assert tables.n_problems == 3 and tables.n_passed == 2
    assert tables.rounds_to_pass == 1.5
    assert tables.pass_rate == pytest.approx(2 / 3)
    assert tables.avg_quality_score == pytest.approx(100 * (0.96 + 0.46 + 0.96) / 3)
    assert tables.quality_change == pytest.approx(100 * (0.5 + 0.0) / 2)


def test_table1_sums_final_rounds_of_multi_round_problems_over_all_problems() -> None:
    tables = paper_tables(ROWS)
    assert tables.level_scores["remember"] == pytest.approx((90 + 50) / 3)
    assert tables.level_change["create"] == pytest.approx((40 + 0) / 3)
    assert tables.level_average == pytest.approx((90 + 50) / 3)


def test_pass_is_strictly_above_tau_and_last_repeated_row_wins() -> None:
    # 7 × 85 with confidence 25 gives Q = 0.5 + 0.3 + 0.05 = 0.85: not a pass (Q must exceed τ).
    at_tau = paper_tables([row("x", 1, 85, confidence=25)])
    assert at_tau.n_passed == 0 and at_tau.rounds_to_pass is None
    superseded = paper_tables([row("x", 1, 50), row("x", 1, 90)])
    assert superseded.n_passed == 1 and superseded.avg_quality_score == pytest.approx(96.0)


def test_no_rows_is_an_error() -> None:
    with pytest.raises(ValueError, match="no rounds"):
        paper_tables([])


def test_judge_agreement_and_interval_are_reported() -> None:
    tables = paper_tables([*ROWS, row("d", 1, 90), row("e", 1, 50)])
    assert tables.judges_fleiss_kappa == pytest.approx(1.0)  # every version is all-pass or all-fail
    assert tables.avg_quality_ci is not None
    low, high = tables.avg_quality_ci
    assert low <= tables.avg_quality_score <= high
