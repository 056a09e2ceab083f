"""Judge agreement statistics, cross-checked against statsmodels and scikit-learn."""

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

from graphs.agreement import bootstrap_ci, cohen_kappa, cohen_matrix, fleiss_kappa

votes_strategy = st.lists(st.lists(st.booleans(), min_size=7, max_size=7), min_size=3, max_size=40)


def as_votes(items: list[list[bool]]) -> dict[str, list[bool | None]]:
    return {f"j{k}": [item[k] for item in items] for k in range(7)}


@settings(max_examples=60, deadline=None)
@given(votes_strategy)
def test_fleiss_matches_statsmodels(items: list[list[bool]]) -> None:
    ours = fleiss_kappa(as_votes(items))
    table, _ = aggregate_raters(np.array(items, dtype=int), n_cat=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        reference = sm_fleiss(table, method="fleiss")
    if ours is None:
        assert np.isnan(reference) or np.isinf(reference)
    else:
        assert ours == pytest.approx(reference)


@settings(max_examples=60, deadline=None)
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
