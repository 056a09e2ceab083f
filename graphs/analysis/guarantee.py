"""Acceptance with a guarantee: the least strict Q threshold whose false accepts are ≤ α with
confidence 1 − δ, chosen on a labelled set (pure functions; the idea of Jung et al., "Trust or
Escalate", ICLR 2025: selective evaluation with fixed-sequence testing).

A version the panel would accept is *auto-accepted* only when its Q reaches the threshold; the rest
are escalated (a stronger panel, then a person). The risk guarded is the share of flawed versions
among the auto-accepted ones.

The scan: thresholds of a grid fixed in advance (Q from 1 down to 0 in steps of ``step``), strict to
lenient. At each, the labelled versions the panel accepts with Q ≥ t are counted (n) with the flawed
among them (k), and the exact Clopper–Pearson upper bound of k/n at confidence 1 − δ is compared with
α. The scan keeps every threshold that passes and stops at the first that fails (fixed-sequence
testing: each test at level δ, no correction needed, because a later threshold is tested only if
every earlier one passed). A threshold at which fewer versions are accepted than could ever pass
(``n < min_accepted(α, δ)``: even 0 flawed of n leaves the bound above α) is skipped, not failed;
that choice reads the counts only, never the labels.

Assumption: the versions judged at run time are exchangeable with the labelled ones (drawn from the
same population, judged by the same panel). With fewer labelled versions, the threshold is stricter
or there is none (every acceptance is escalated).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray


@cache
def clopper_pearson_upper(k: int, n: int, delta: float) -> float:
    """The exact one-sided upper bound of a binomial rate at confidence 1 − δ (1 when n is 0)."""
    if n == 0 or k >= n:
        return 1.0
    from scipy.stats import beta

    return float(beta.ppf(1 - delta, k + 1, n - k))


def min_accepted(alpha: float, delta: float) -> int:
    """The fewest accepted versions with which any threshold can pass: 0 flawed of n gives the bound
    1 − δ^(1/n), at most α once n ≥ ln δ / ln(1 − α). ``log1p`` keeps ln(1 − α) nonzero for an α
    too small for 1 − α to differ from 1; where the quotient overflows, no count is enough."""
    least = math.log(delta) / math.log1p(-alpha)
    return math.ceil(least) if math.isfinite(least) else sys.maxsize


@dataclass(frozen=True)
class ScanStep:
    """One threshold the fixed-sequence scan tested: the versions the panel accepts at Q ≥ it, the
    flawed among them, their Clopper–Pearson upper bound and whether it is ≤ α (the scan stops at
    the first that is not)."""

    threshold: float
    accepted: int
    flawed_accepted: int
    bound: float
    passed: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "accepted": self.accepted,
            "flawed_accepted": self.flawed_accepted,
            "bound": self.bound,
            "passed": self.passed,
        }


@dataclass(frozen=True)
class Calibration:
    """The chosen threshold (None: none passed, escalate every acceptance), what it guarantees and
    what it keeps: the bound on false accepts among the auto-accepted (``guaranteed``), their count
    and the flawed among them, and the coverage (the share of sound versions still auto-accepted)."""

    alpha: float
    delta: float
    threshold: float | None
    guaranteed: float | None
    accepted: int
    flawed_accepted: int
    coverage: float
    sound: int
    flawed: int
    tested: int  # thresholds tested before the scan stopped
    steps: tuple[ScanStep, ...] = ()  # each threshold tested, strict to lenient

    def as_dict(self) -> dict[str, Any]:
        """The JSON a validity record keeps, with the scan's steps."""
        return {
            "score": "quality",
            "alpha": self.alpha,
            "delta": self.delta,
            "threshold": self.threshold,
            "guaranteed": self.guaranteed,
            "accepted": self.accepted,
            "flawed_accepted": self.flawed_accepted,
            "coverage": self.coverage,
            "sound": self.sound,
            "flawed": self.flawed,
            "tested": self.tested,
            "steps": [step.as_dict() for step in self.steps],
        }


def grid(step: float = 0.01) -> list[float]:
    """The thresholds, strict to lenient: 1, 1 − step, …, 0 (fixed before any data is seen)."""
    count = round(1 / step)
    return [round(1 - i * step, 10) for i in range(count + 1)]


def calibrate(
    quality: Sequence[float | None],
    flawed: Sequence[bool],
    passed: Sequence[bool],
    alpha: float,
    delta: float,
    step: float = 0.01,
) -> Calibration:
    """The least strict threshold whose Clopper–Pearson bound on false accepts is ≤ α (see the
    module's docstring); each version given by its Q, its label and whether the panel accepted it."""
    q = np.array([-1.0 if x is None else x for x in quality])
    bad, ok = np.asarray(flawed, dtype=bool), np.asarray(passed, dtype=bool)
    chosen: tuple[float, float, int, int] | None = None
    least = min_accepted(alpha, delta)
    steps: list[ScanStep] = []
    for t in grid(step):
        accepted = ok & (q >= t - 1e-12)
        n, k = int(accepted.sum()), int((accepted & bad).sum())
        if n < least:
            continue
        bound = clopper_pearson_upper(k, n, delta)
        steps.append(ScanStep(t, n, k, bound, bound <= alpha))
        if bound > alpha:
            break
        chosen = (t, bound, n, k)
    sound, tested = int((~bad).sum()), len(steps)
    if chosen is None:
        return Calibration(alpha, delta, None, None, 0, 0, 0.0, sound, int(bad.sum()), tested, tuple(steps))
    t, bound, n, k = chosen
    kept = int((ok & (q >= t - 1e-12) & ~bad).sum())
    coverage = kept / sound if sound else 0.0
    return Calibration(alpha, delta, t, bound, n, k, coverage, sound, int(bad.sum()), tested, tuple(steps))


def auto_accepts(
    quality: NDArray[np.float64], passed: NDArray[np.bool_], threshold: float | None
) -> NDArray[np.bool_]:
    """Which versions a calibrated panel accepts itself (the others it would accept are escalated)."""
    if threshold is None:
        return np.zeros_like(passed, dtype=bool)
    return passed & (quality >= threshold - 1e-12)
