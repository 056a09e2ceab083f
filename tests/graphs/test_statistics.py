"""Report statistics, each cross-checked against a second implementation or a closed form."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from graphs.analysis.statistics import (
    bootstrap_ci,
    holm,
    kaplan_meier,
    mcnemar_exact,
    paired_difference,
    wilson_interval,
)


def wilson_by_hand(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_matches_the_closed_form_and_scipy(case: tuple[int, int]) -> None:
    successes, n = case
    ours = wilson_interval(successes, n)
    assert ours == pytest.approx(wilson_by_hand(successes, n))
    scipy_ci = stats.binomtest(successes, n).proportion_ci(method="wilson")
    assert ours == pytest.approx((scipy_ci.low, scipy_ci.high))


def test_wilson_is_not_degenerate_at_the_edges() -> None:
    # BCa on 0/1 data gave 0.0-41.7 for 1 of 12; Wilson keeps a sensible lower bound above 0.
    low, high = wilson_interval(1, 12) or (0.0, 0.0)
    assert 0.0 < low < 1 / 12 < high < 0.4
    assert wilson_interval(0, 0) is None


@settings(max_examples=60)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_mcnemar_exact_is_the_binomial_test_on_discordant_pairs(pairs: list[tuple[bool, bool]]) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    result = mcnemar_exact(a, b)
    assert result is not None
    discordant = result.a_only + result.b_only
    expected = 1.0 if discordant == 0 else stats.binomtest(result.a_only, discordant, 0.5).pvalue
    assert result.p_value == pytest.approx(min(1.0, expected))


def holm_by_hand(p_values: list[float]) -> list[float]:
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12))
def test_holm_matches_the_step_down_procedure(p_values: list[float]) -> None:
    assert holm(p_values) == pytest.approx(holm_by_hand(p_values))


def test_holm_matches_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    p_values = [0.01, 0.04, 0.03, 0.5, 0.002, 0.04, 0.9, 0.2]
    assert holm(p_values) == pytest.approx(list(multipletests(p_values, method="holm")[1]))


def wilcoxon_by_enumeration(differences: list[float]) -> float:
    """Exact two-sided signed-rank p-value by listing every sign assignment (no ties, no zeros)."""
    ranks = stats.rankdata([abs(d) for d in differences])
    observed = sum(r for r, d in zip(ranks, differences, strict=True) if d > 0)
    total = sum(ranks)
    sums = [
        sum(r for r, s in zip(ranks, signs, strict=True) if s)
        for signs in itertools.product([0, 1], repeat=len(ranks))
    ]
    extreme = min(observed, total - observed)
    tail = sum(1 for s in sums if s <= extreme) / len(sums)
    return min(1.0, 2 * tail)


def test_paired_difference_p_value_matches_exact_enumeration() -> None:
    differences = [3.5, -1.0, 7.25, 2.0, 9.5, -0.5, 4.0, 6.75]
    result = paired_difference(differences)
    assert result is not None and result.pairs == 8 and result.mean == pytest.approx(np.mean(differences))
    assert result.p_value == pytest.approx(wilcoxon_by_enumeration(differences))
    low, high = result.ci95 or (0.0, 0.0)
    assert low < result.mean < high


def test_paired_difference_of_nothing_is_zero_with_p_one() -> None:
    result = paired_difference([0.0, 0.0, 0.0])
    assert result is not None and (result.mean, result.p_value) == (0.0, 1.0)
    assert paired_difference([]) is None


def test_duplicated_repeats_do_not_narrow_the_cluster_interval() -> None:
    # Identical repeats copied three times: resampling items would narrow the interval by about
    # sqrt(3); one value per problem keeps it where it belongs.
    problems = [55.0, 62.0, 70.0, 71.0, 80.0, 84.0, 90.0, 93.0, 60.0, 77.0]
    items = [q for q in problems for _ in range(3)]
    per_problem = bootstrap_ci(problems) or (0.0, 0.0)
    per_item = bootstrap_ci(items) or (0.0, 0.0)
    assert per_item[1] - per_item[0] < 0.75 * (per_problem[1] - per_problem[0])


def lifelines_fit(rounds: list[int | None], limit: int):
    from lifelines import KaplanMeierFitter

    durations = [r if r is not None else limit for r in rounds]
    observed = [r is not None for r in rounds]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return KaplanMeierFitter().fit(durations, observed)


@settings(max_examples=40)
@given(st.lists(st.one_of(st.none(), st.integers(1, 4)), min_size=3, max_size=60))
def test_kaplan_meier_matches_lifelines(rounds: list[int | None]) -> None:
    limit = 4
    ours = kaplan_meier(rounds, limit)
    assert ours is not None
    fit = lifelines_fit(rounds, limit)
    for point in ours.curve:
        assert point.not_passed == pytest.approx(float(fit.survival_function_at_times(point.round).iloc[0]))
    if ours.passed and ours.passed < len(rounds):
        band = fit.confidence_interval_survival_function_
        for point in ours.curve:
            at = band[band.index <= point.round].iloc[-1]
            if point.low is not None and point.high is not None and 0 < point.not_passed < 1:
                assert point.low == pytest.approx(float(at.iloc[0]), abs=1e-6)
                assert point.high == pytest.approx(float(at.iloc[1]), abs=1e-6)


def test_kaplan_meier_median_and_its_interval_match_lifelines() -> None:
    from lifelines.utils import median_survival_times

    rounds: list[int | None] = [1] * 6 + [2] * 9 + [3] * 5 + [None] * 10
    ours = kaplan_meier(rounds, 3)
    assert ours is not None and ours.median == 2
    fit = lifelines_fit(rounds, 3)
    assert fit.median_survival_time_ == 2
    interval = median_survival_times(fit.confidence_interval_)
    low, high = float(interval.iloc[0, 0]), float(interval.iloc[0, 1])
    assert ours.median_ci95 == (int(low), None if math.isinf(high) else int(high))


def test_kaplan_meier_never_passing_has_no_median() -> None:
    ours = kaplan_meier([None, None, None], 3)
    assert ours is not None and ours.median is None and all(p.not_passed == 1.0 for p in ours.curve)
