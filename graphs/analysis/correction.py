"""Pass rates corrected for the judges' measured error (pure functions, NumPy; PPI through ``ppi_py``).

A pass is the panel's "sound" verdict on an item's final version. What a researcher wants is the
share of final versions that *are* sound (θ). A panel validated on labelled problems (a validity
record) passed a share ``s`` of the sound versions (its specificity on sound problems: the
sensitivity of a pass for "sound") and a share ``f`` of the flawed ones (its false-accept rate), so
an observed pass rate ``p`` is ``θ·s + (1 − θ)·f`` and, while ``s > f``,

    θ = (p − f) / (s − f)  =  (p + Sp − 1) / (Se + Sp − 1)  with Se = s, Sp = 1 − f

(Rogan & Gladen 1978), clipped to [0, 1]. When ``s ≤ f`` the panel tells sound from flawed no better
than chance and nothing can be corrected.

The interval is a *parametric bootstrap* that carries both sources of error: each draw resamples
the batch's passes (Binomial(n, p)), the record's false accepts (Binomial(n_flawed, f)) and its sound
versions passed (Binomial(n_sound, s)), and computes θ from the three. Each is drawn from its
Agresti–Coull-adjusted share ((k + z²/2) / (n + z²)), not the raw one: a record that let 0 of 30
flawed problems through would otherwise bootstrap a false-accept rate that never varies, and the
interval would forget the calibration's uncertainty exactly where it is largest. The interval is
the percentile interval of the draws, clipped to [0, 1]. Draws in which the panel looks no better
than chance (``s* ≤ f*``) have no θ; they are counted (``chance``), half of them put at each end of
[0, 1]: when they are more than half of the tails' share the interval is all of [0, 1]. The draws
are seeded, so a report is reproducible. The simulation tests (tests/graphs/test_correction.py)
check that the interval covers the true θ at least 93 % of the time.

Prediction-powered inference (Angelopoulos et al. 2023) estimates the same θ from teachers' labels
on a subset of the batch's own items and the panel's verdicts on all of them; ``ppi_py`` computes
it (loaded only when a batch has labels: it brings numba).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

Interval = tuple[float, float]
RESAMPLES = 4000
CONFIDENCE = 0.95
SEED = 0
_CHUNK = 250_000  # draws (simulated batches × resamples) held in memory at once
Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Calibration:
    """A validity record's counts: ``false_accepts`` of ``flawed`` flawed problems passed, and
    ``sound_passed`` of ``sound`` sound versions passed."""

    false_accepts: int
    flawed: int
    sound_passed: int
    sound: int

    @property
    def false_accept_rate(self) -> float:
        """The share of flawed problems the panel passed."""
        return self.false_accepts / self.flawed

    @property
    def specificity(self) -> float:
        """The share of sound versions the panel passed."""
        return self.sound_passed / self.sound


@dataclass(frozen=True)
class Corrected:
    """A pass rate and its correction: the estimate (clipped to [0, 1]; None when the panel is no
    better than chance), the interval, the share of bootstrap draws in which the panel looked no
    better than chance, and whether that share could reverse an order of two corrected rates."""

    raw: float
    estimate: float | None
    ci95: Interval
    chance: float
    could_swap: bool


def rogan_gladen(p: ArrayLike, false_accept: ArrayLike, specificity: ArrayLike) -> Floats:
    """θ = (p − f) / (s − f), clipped to [0, 1]; NaN where ``s ≤ f`` (no better than chance)."""
    p_, f_, s_ = (np.asarray(x, dtype=float) for x in (p, false_accept, specificity))
    youden = s_ - f_
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(youden > 0, (p_ - f_) / np.where(youden > 0, youden, 1.0), np.nan)
    return np.clip(theta, 0.0, 1.0)


def _z(confidence: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(0.5 + confidence / 2))


def _adjusted(k: Floats, n: Floats, z: float) -> Floats:
    """The Agresti–Coull share a bootstrap draws from: (k + z²/2) / (n + z²)."""
    return (k + z * z / 2) / (n + z * z)


def corrected_intervals(
    passes: ArrayLike,
    n: ArrayLike,
    false_accepts: ArrayLike,
    flawed: ArrayLike,
    sound_passed: ArrayLike,
    sound: ArrayLike,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[Floats, Floats, Floats]:
    """Vectorised parametric-bootstrap intervals of θ, one per element of the broadcast inputs
    (``passes`` may be fractional: a mean over repeats). Returns (low, high, chance share)."""
    arrays = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (passes, n, false_accepts, flawed)))
    arrays += np.broadcast_arrays(np.asarray(sound_passed, dtype=float), np.asarray(sound, dtype=float))
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    k, size, kf, nf, ks, ns = (np.broadcast_to(a, shape).ravel() for a in arrays)
    rng, z, alpha = np.random.default_rng(seed), _z(confidence), 1 - confidence
    lows, highs, chances = np.empty(k.size), np.empty(k.size), np.empty(k.size)
    step = max(1, _CHUNK // resamples)
    for start in range(0, k.size, step):
        part = slice(start, start + step)
        draws = [
            rng.binomial(
                m[part, None].astype(np.int64),
                _adjusted(x[part], m[part], z)[:, None],
                (len(x[part]), resamples),
            )
            / m[part, None]
            for x, m in ((k, size), (kf, nf), (ks, ns))
        ]
        theta = rogan_gladen(*draws)
        chance = np.isnan(theta)
        # a draw with no θ widens both tails: half of them at 0, half at 1
        theta[chance] = np.tile([0.0, 1.0], chance.sum() // 2 + 1)[: chance.sum()]
        lows[part], highs[part] = np.quantile(theta, [alpha / 2, 1 - alpha / 2], axis=1)
        chances[part] = chance.mean(axis=1)
    return lows.reshape(shape), highs.reshape(shape), chances.reshape(shape)


def corrected_rate(
    passes: float,
    n: int,
    calibration: Calibration,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Corrected | None:
    """``passes`` of ``n`` corrected for the panel's error measured in ``calibration`` (None without
    items or without a measured rate)."""
    if n <= 0 or calibration.flawed <= 0 or calibration.sound <= 0:
        return None
    c = calibration
    low, high, chance = corrected_intervals(
        passes,
        n,
        c.false_accepts,
        c.flawed,
        c.sound_passed,
        c.sound,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    estimate = float(rogan_gladen(passes / n, c.false_accept_rate, c.specificity))
    return Corrected(
        raw=passes / n,
        estimate=None if np.isnan(estimate) else estimate,
        ci95=(float(low), float(high)),
        chance=float(chance),
        # a panel no better than chance in more than the tails' share of the draws may reverse the
        # order of two rates it corrected (θ falls as p rises once s < f)
        could_swap=bool(chance > (1 - confidence) / 2),
    )


@dataclass(frozen=True)
class PredictionPowered:
    """A prediction-powered estimate of the share truly sound: from ``labelled`` items a teacher
    decided (and the panel judged) and ``unlabelled`` items the panel alone judged."""

    estimate: float
    ci95: Interval
    labelled: int
    unlabelled: int


def prediction_powered(
    labels: Sequence[bool],
    predicted: Sequence[bool],
    unlabelled: Sequence[bool],
    confidence: float = CONFIDENCE,
) -> PredictionPowered | None:
    """PPI (``ppi_py.ppi_mean_ci``, its power-tuned form) of the share of items truly sound:
    ``labels`` the teachers' sound/flawed on the labelled items, ``predicted`` the panel's pass on
    those same items, ``unlabelled`` its pass on the others. None with fewer than two labels or no
    unlabelled item."""
    if len(labels) < 2 or not unlabelled:
        return None
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate  # numba: loaded only when labels exist

    y, y_hat, rest = (np.asarray(v, dtype=float) for v in (labels, predicted, unlabelled))
    estimate = float(np.ravel(ppi_mean_pointestimate(y, y_hat, rest))[0])
    low, high = (float(np.ravel(b)[0]) for b in ppi_mean_ci(y, y_hat, rest, alpha=1 - confidence))
    return PredictionPowered(
        estimate=min(1.0, max(0.0, estimate)),
        ci95=(max(0.0, low), min(1.0, high)),
        labelled=len(y),
        unlabelled=len(rest),
    )
