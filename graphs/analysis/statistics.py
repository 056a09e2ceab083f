"""Inference for batch reports: intervals, paired tests and time-to-pass curves (pure functions).

Each statistic but one comes from a maintained library — statsmodels (Wilson intervals, exact
McNemar), SciPy (BCa bootstrap, Wilcoxon signed-rank, Kaplan-Meier through ``stats.ecdf``) — and
the tests cross-check each against a second implementation. Holm's step-down is three lines of
NumPy here: statsmodels' ``multipletests(method="holm")`` runs a full ``gc.collect()`` on every
call, 0.05 s on a small heap and 0.5 s with three million objects alive, which stalled a report in
a long-running process (and the test suite's property test for a quarter of an hour). SciPy and statsmodels
load when a statistic is first computed, not when a command starts.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Interval = tuple[float, float]


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> Interval | None:
    """Wilson score interval for a proportion (``successes`` may be fractional: a mean over repeats)."""
    if n <= 0:
        return None
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    return float(low), float(high)


def bootstrap_ci(
    values: Sequence[float],
    statistic: Callable[[NDArray[np.float64]], float] = np.mean,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval | None:
    """A BCa bootstrap interval for ``statistic`` of ``values`` (None with fewer than two values).

    Pass one value per *problem* (its mean over repeats): resampling problems with their repeats
    kept together is the cluster bootstrap, the right unit when repeats are correlated.
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2 or np.all(data == data[0]):
        return (float(data[0]), float(data[0])) if data.size else None
    from scipy import stats

    result = stats.bootstrap(
        (data,),
        statistic,
        confidence_level=confidence,
        n_resamples=resamples,
        random_state=np.random.default_rng(seed),
        method="BCa",
    )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):  # BCa degenerates on near-constant data
        return float(np.min(data)), float(np.max(data))
    return low, high


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test of paired pass/fail: ``a_only`` passed under A only, ``b_only`` under B only."""

    pairs: int
    a_only: int
    b_only: int
    p_value: float


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemar | None:
    """The exact (binomial) McNemar test on paired outcomes; None without pairs."""
    if not a:
        return None
    from statsmodels.stats.contingency_tables import mcnemar

    both = sum(x and y for x, y in zip(a, b, strict=True))
    a_only = sum(x and not y for x, y in zip(a, b, strict=True))
    b_only = sum(y and not x for x, y in zip(a, b, strict=True))
    neither = len(a) - both - a_only - b_only
    result = mcnemar([[both, a_only], [b_only, neither]], exact=True)
    return McNemar(len(a), a_only, b_only, float(result.pvalue))


@dataclass(frozen=True)
class PairedDifference:
    """Mean of paired differences (A − B), its BCa bootstrap interval and a Wilcoxon p-value."""

    pairs: int
    mean: float
    ci95: Interval | None
    p_value: float


def paired_difference(differences: Sequence[float], seed: int = 0) -> PairedDifference | None:
    """Bootstrap the mean of per-problem differences; test it with the Wilcoxon signed-rank test."""
    if not differences:
        return None
    data = np.asarray(differences, dtype=float)
    if np.all(data == 0):
        return PairedDifference(len(data), 0.0, (0.0, 0.0), 1.0)
    from scipy import stats

    p_value = float(stats.wilcoxon(data, zero_method="wilcox").pvalue) if data.size >= 2 else 1.0
    return PairedDifference(len(data), float(data.mean()), bootstrap_ci(data.tolist(), seed=seed), p_value)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (family-wise error across the comparisons given)."""
    if not p_values:
        return []
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    # the k-th smallest of n is multiplied by n − k + 1; adjusted values never decrease, cap 1
    stepped = np.minimum(1.0, np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1)))
    adjusted = np.empty_like(stepped)
    adjusted[order] = stepped
    return [float(x) for x in adjusted]


@dataclass(frozen=True)
class CurvePoint:
    """Share of items not yet passed after ``round`` evaluations, with its 95 % band."""

    round: int
    not_passed: float
    low: float | None
    high: float | None


@dataclass(frozen=True)
class TimeToPass:
    """Kaplan-Meier estimate of rounds to pass, censored at the arm's own round limit."""

    items: int
    passed: int
    limit: int
    curve: list[CurvePoint]
    median: int | None
    median_ci95: tuple[int | None, int | None] | None


def kaplan_meier(rounds: Sequence[int | None], limit: int) -> TimeToPass | None:
    """Rounds to pass as a time-to-event outcome: ``None`` is an item censored at ``limit``.

    The median is the first round by which half the items have passed (None: not reached within
    the limit); its interval inverts the log-log pointwise band (Brookmeyer-Crowley style): from
    the first round whose lower band falls to 0.5 to the first whose upper band does.
    """
    if not rounds:
        return None
    passed = [r for r in rounds if r is not None]
    curve = _km_curve(passed, len(rounds) - len(passed), limit)
    median = next((p.round for p in curve if p.not_passed <= 0.5), None)
    low = next((p.round for p in curve if p.low is not None and p.low <= 0.5), None)
    high = next((p.round for p in curve if p.high is not None and p.high <= 0.5), None)
    return TimeToPass(len(rounds), len(passed), limit, curve, median, (low, high) if median else None)


def _km_curve(passed: Sequence[int], censored: int, limit: int) -> list[CurvePoint]:
    if not passed:
        return [CurvePoint(r, 1.0, None, None) for r in range(1, limit + 1)]
    from scipy import stats

    data = stats.CensoredData(uncensored=list(passed), right=[limit] * censored)
    survival = stats.ecdf(data).sf
    with warnings.catch_warnings():
        # SciPy warns where the log-log band is undefined (S = 0 or 1); those points come back NaN
        # and are reported as "no bound" below.
        warnings.simplefilter("ignore", RuntimeWarning)
        band = survival.confidence_interval(confidence_level=0.95, method="log-log")
    points = []
    for r in range(1, limit + 1):
        low, high = float(band.low.evaluate(r)), float(band.high.evaluate(r))
        points.append(
            CurvePoint(
                r,
                float(survival.evaluate(r)),
                None if math.isnan(low) else low,
                None if math.isnan(high) else high,
            )
        )
    return points
