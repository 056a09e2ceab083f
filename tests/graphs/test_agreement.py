"""Judge agreement statistics, each cross-checked against a second implementation or a worked example."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from graphs.analysis.agreement import (
    cohen_kappa,
    cohen_matrix,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    pass_rates,
)
from graphs.analysis.statistics import bootstrap_ci

votes_strategy = st.lists(st.lists(st.booleans(), min_size=7, max_size=7), min_size=3, max_size=40)


def as_votes(items: list[list[bool]]) -> dict[str, list[bool | None]]:
    return {f"j{k}": [item[k] for item in items] for k in range(7)}


def fleiss_by_hand(items: list[list[bool]]) -> float | None:
    """Fleiss (1971), written out: mean per-item pairwise agreement against squared category shares."""
    raters = len(items[0])
    passes = np.array([sum(item) for item in items], dtype=float)
    counts = np.column_stack([passes, raters - passes])
    p_item = ((counts * (counts - 1)).sum(axis=1)) / (raters * (raters - 1))
    expected = float(((counts.sum(axis=0) / counts.sum()) ** 2).sum())
    return None if expected == 1.0 else (float(p_item.mean()) - expected) / (1.0 - expected)


@settings(max_examples=60)
@given(votes_strategy)
def test_fleiss_matches_a_second_implementation(items: list[list[bool]]) -> None:
    ours = fleiss_kappa(as_votes(items))
    reference = fleiss_by_hand(items)
    table, _ = aggregate_raters(np.array(items, dtype=int), n_cat=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        statsmodels_value = sm_fleiss(table, method="fleiss")
    if ours is None:
        assert reference is None
    else:
        assert ours == pytest.approx(reference) == pytest.approx(statsmodels_value)


def test_krippendorff_alpha_matches_the_published_worked_example() -> None:
    # Krippendorff's canonical example (3 coders, 15 units, nominal data with missing values),
    # as worked in the literature and on Wikipedia: alpha = 0.691.
    rows = [
        [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
        [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
        [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
    ]
    import krippendorff

    data = np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float)
    assert krippendorff.alpha(reliability_data=data, level_of_measurement="nominal") == pytest.approx(
        0.691, abs=5e-4
    )


def krippendorff_by_hand(votes: dict[str, list[bool | None]]) -> float | None:
    """Nominal alpha from the coincidence matrix, written out (Krippendorff 2011, section 3)."""
    coincidence = np.zeros((2, 2))
    for item in zip(*votes.values(), strict=True):
        values = [int(v) for v in item if v is not None]
        m = len(values)
        if m < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincidence[a, b] += 1 / (m - 1)
    n = coincidence.sum()
    totals = coincidence.sum(axis=1)
    if n == 0 or min(totals) == 0:
        return None
    observed = coincidence[0, 1] + coincidence[1, 0]
    expected = 2 * totals[0] * totals[1] / (n - 1)
    return 1 - observed / expected


optional_votes = st.lists(
    st.lists(st.one_of(st.none(), st.booleans()), min_size=7, max_size=7), min_size=2, max_size=30
)


def as_optional(items: list[list[bool | None]]) -> dict[str, list[bool | None]]:
    return {f"j{k}": [item[k] for item in items] for k in range(7)}


@settings(max_examples=80)
@given(optional_votes)
def test_krippendorff_matches_the_coincidence_matrix(items: list[list[bool | None]]) -> None:
    ours, reference = krippendorff_alpha(as_optional(items)), krippendorff_by_hand(as_optional(items))
    if ours is None or reference is None:
        assert ours is None and reference is None
    else:
        assert ours == pytest.approx(reference)


def gwet_by_pairs(votes: dict[str, list[bool | None]]) -> float | None:
    """AC1 written another way: count agreeing ordered pairs of judges item by item."""
    agree, prevalence = [], []
    for item in zip(*votes.values(), strict=True):
        cast = [v for v in item if v is not None]
        if cast:
            prevalence.append(sum(cast) / len(cast))
        if len(cast) >= 2:
            pairs = [(a, b) for i, a in enumerate(cast) for j, b in enumerate(cast) if i != j]
            agree.append(sum(a == b for a, b in pairs) / len(pairs))
    if not agree:
        return None
    pi = sum(prevalence) / len(prevalence)
    chance = 2 * pi * (1 - pi)
    return None if chance >= 1 else (sum(agree) / len(agree) - chance) / (1 - chance)


@settings(max_examples=80)
@given(optional_votes)
def test_gwet_ac1_matches_a_pairwise_implementation(items: list[list[bool | None]]) -> None:
    ours, reference = gwet_ac1(as_optional(items)), gwet_by_pairs(as_optional(items))
    assert (ours is None and reference is None) or ours == pytest.approx(reference)


def test_gwet_ac1_two_raters_closed_form() -> None:
    # Two raters, 2x2 table a=both pass, b, c disagree, d=both fail (Gwet 2008, eq. for q=2):
    # Pa = (a+d)/n, pi = ((a+b)+(a+c))/(2n), Pe = 2 pi (1-pi).
    a, b, c, d = 80, 6, 4, 10
    first = [True] * a + [True] * b + [False] * c + [False] * d
    second = [True] * a + [False] * b + [True] * c + [False] * d
    n = a + b + c + d
    pa, pi = (a + d) / n, ((a + b) + (a + c)) / (2 * n)
    pe = 2 * pi * (1 - pi)
    assert gwet_ac1({"x": first, "y": second}) == pytest.approx((pa - pe) / (1 - pe))


def test_the_kappa_paradox_shows_in_fleiss_but_not_in_ac1() -> None:
    # Seven judges who pass 95 % of versions and disagree on a few: kappa is low, AC1 high.
    items = [[True] * 7 for _ in range(90)] + [[True] * 6 + [False] for _ in range(10)]
    votes = as_votes(items)
    fleiss, ac1 = fleiss_kappa(votes), gwet_ac1(votes)
    assert fleiss is not None and ac1 is not None
    assert fleiss < 0.0 < 0.9 < ac1


def test_pass_rates_ignore_abstentions() -> None:
    assert pass_rates({"a": [True, False, None, True], "b": [None, None]}) == {"a": 2 / 3, "b": None}


@settings(max_examples=60)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=50))
def test_cohen_matches_scikit_learn(pairs: list[tuple[bool, bool]]) -> None:
    first, second = [p[0] for p in pairs], [p[1] for p in pairs]
    ours = cohen_kappa(first, second)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # the undefined case is compared below
        reference = cohen_kappa_score(first, second, labels=[False, True])
    if ours is None:
        assert np.isnan(reference)
    else:
        assert ours == pytest.approx(reference)


def test_abstentions_are_left_out() -> None:
    votes: dict[str, list[bool | None]] = {"a": [True, False, None, True], "b": [True, False, True, None]}
    assert cohen_kappa(votes["a"], votes["b"]) == 1.0
    assert fleiss_kappa(votes) == 1.0  # only the two complete items count


def test_matrix_is_symmetric_with_unit_diagonal() -> None:
    votes: dict[str, list[bool | None]] = {
        "a": [True, False, True, False],
        "b": [True, False, False, False],
        "c": [False, True, False, True],
    }
    matrix = cohen_matrix(votes)
    assert matrix["a"]["a"] == 1.0 and matrix["a"]["b"] == matrix["b"]["a"]
    assert matrix["a"]["c"] == pytest.approx(-1.0)


def test_undefined_cases() -> None:
    assert fleiss_kappa({}) is None and cohen_kappa([], []) is None
    assert fleiss_kappa({"a": [True, True], "b": [True, True]}) is None  # no variance at all


def test_bootstrap_interval_brackets_the_mean_and_is_reproducible() -> None:
    values = [0.2, 0.4, 0.5, 0.55, 0.6, 0.7, 0.9, 0.35, 0.45, 0.65]
    low, high = bootstrap_ci(values) or (0.0, 0.0)
    assert low < float(np.mean(values)) < high
    assert bootstrap_ci(values) == (low, high)
    assert bootstrap_ci([1.0]) is None or bootstrap_ci([1.0]) == (1.0, 1.0)
    assert bootstrap_ci([]) is None
