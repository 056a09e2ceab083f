"""Judge agreement across a batch and bootstrap confidence intervals (pure functions).

Fleiss' κ treats each judged version as an item rated pass/fail by the seven judges; Cohen's κ
compares two judges' pass/fail votes on the items both judged. Both are computed here with numpy
(and cross-checked in the tests against statsmodels and scikit-learn).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

import numpy as np
from numpy.typing import NDArray

Votes = Mapping[str, Sequence[bool | None]]  # judge → one vote per item, None when it abstained


def fleiss_kappa(votes: Votes) -> float | None:
    """Fleiss' κ over the items every judge voted on; None when undefined (no items, no variance)."""
    matrix = _complete_items(votes)
    if matrix.shape[0] == 0 or matrix.shape[1] < 2:
        return None
    raters = matrix.shape[1]
    passes = matrix.sum(axis=1)
    counts = np.column_stack([passes, raters - passes]).astype(float)
    p_item = ((counts * (counts - 1)).sum(axis=1)) / (raters * (raters - 1))
    p_category = counts.sum(axis=0) / counts.sum()
    expected = float((p_category**2).sum())
    if expected == 1.0:
        return None
    return (float(p_item.mean()) - expected) / (1.0 - expected)


def _complete_items(votes: Votes) -> NDArray[np.int_]:
    judges = list(votes)
    if not judges:
        return np.zeros((0, 0), dtype=int)
    n_items = len(votes[judges[0]])
    rows = [
        [int(bool(votes[j][i])) for j in judges]
        for i in range(n_items)
        if all(votes[j][i] is not None for j in judges)
    ]
    return np.array(rows, dtype=int).reshape(len(rows), len(judges))


def cohen_kappa(first: Sequence[bool | None], second: Sequence[bool | None]) -> float | None:
    """Cohen's κ of two judges over the items both voted on; None when undefined."""
    pairs = [(a, b) for a, b in zip(first, second, strict=True) if a is not None and b is not None]
    if not pairs:
        return None
    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    observed = float((a == b).mean())
    expected = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    if expected == 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def cohen_matrix(votes: Votes) -> dict[str, dict[str, float | None]]:
    """Pairwise Cohen's κ between every two judges (symmetric, 1.0 on the diagonal)."""
    judges = list(votes)
    matrix: dict[str, dict[str, float | None]] = {j: {j: 1.0} for j in judges}
    for left, right in combinations(judges, 2):
        kappa = cohen_kappa(votes[left], votes[right])
        matrix[left][right] = matrix[right][left] = kappa
    return matrix


def bootstrap_ci(
    values: Sequence[float],
    statistic: Callable[[NDArray[np.float64]], float] = np.mean,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """A BCa bootstrap interval for ``statistic`` of ``values`` (None with fewer than two values)."""
    data = np.asarray(values, dtype=float)
    if data.size < 2 or np.all(data == data[0]):
        return (float(data[0]), float(data[0])) if data.size else None
    from scipy import stats  # imported here: it costs seconds at start-up for every other command

    result = stats.bootstrap(
        (data,),
        statistic,
        confidence_level=confidence,
        n_resamples=resamples,
        random_state=np.random.default_rng(seed),
        method="BCa",
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
