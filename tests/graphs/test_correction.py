"""Corrected pass rates: Rogan–Gladen's estimate, and every interval a batch report prints covering
the truth at its nominal rate over simulated batches (scripted panels of known error rates, batches
of known true pass rates). With 1,000 simulated batches the Monte Carlo error of a 95 % coverage is
about 0.7 points, so each test asks for at least 93 %."""

from __future__ import annotations

import numpy as np
import pytest

from graphs.analysis.correction import (
    Calibration,
    corrected_intervals,
    corrected_rate,
    prediction_powered,
    rogan_gladen,
)
from graphs.analysis.statistics import kaplan_meier, wilson_interval

BATCHES = 1000
FLOOR = 0.93

# (true share sound θ, problems in the batch, flawed and sound problems of the record, the panel's
# false-accept rate on flawed problems, its share of sound versions passed)
SCENARIOS = [
    (0.6, 200, 120, 70, 0.10, 0.90),  # a shipped-size record, a mid-size batch
    (0.3, 60, 40, 21, 0.05, 0.95),  # small everything: zero false accepts are common
    (0.9, 500, 300, 200, 0.25, 0.80),  # a lenient panel on a strong model
    (0.05, 150, 30, 20, 0.02, 0.99),  # near the floor: the clip matters
]


def test_rogan_gladen_inverts_the_panels_error() -> None:
    # θ = 0.6 seen through s = 0.9, f = 0.1: p = 0.6·0.9 + 0.4·0.1 = 0.58
    assert float(rogan_gladen(0.58, 0.1, 0.9)) == pytest.approx(0.6)
    assert float(rogan_gladen(0.05, 0.1, 0.9)) == 0.0  # below the false-accept rate: clipped
    assert float(rogan_gladen(0.95, 0.1, 0.9)) == 1.0
    assert np.isnan(rogan_gladen(0.5, 0.6, 0.6))  # no better than chance: nothing to correct


@pytest.mark.parametrize(("theta", "n", "n_flawed", "n_sound", "f", "s"), SCENARIOS)
def test_the_corrected_interval_covers_the_true_pass_rate(
    theta: float, n: int, n_flawed: int, n_sound: int, f: float, s: float
) -> None:
    """Each simulated batch: the panel's record drawn from Bernoulli verdicts on labelled problems,
    the batch's passes from Bernoulli verdicts on versions of which θ are sound."""
    rng = np.random.default_rng(55)
    sound = rng.binomial(n, theta, BATCHES)
    passes = rng.binomial(sound, s) + rng.binomial(n - sound, f)
    false_accepts, sound_passed = rng.binomial(n_flawed, f, BATCHES), rng.binomial(n_sound, s, BATCHES)
    low, high, _ = corrected_intervals(
        passes, n, false_accepts, n_flawed, sound_passed, n_sound, resamples=1000, seed=1
    )
    covered = float(np.mean((low <= theta) & (theta <= high)))
    assert covered >= FLOOR, covered


def test_the_raw_wilson_interval_would_miss_what_the_correction_covers() -> None:
    """The reason for the correction: Wilson's interval covers the *panel's* pass rate, not θ."""
    theta, n, f, s = 0.3, 200, 0.25, 0.85  # the panel passes 43 %
    rng = np.random.default_rng(7)
    passes = rng.binomial(n, theta * s + (1 - theta) * f, 200)
    covered = [lo <= theta <= hi for lo, hi in (wilson_interval(k, n) or (0, 0) for k in passes)]
    assert np.mean(covered) < 0.05


@pytest.mark.parametrize(("p", "n"), [(0.5, 40), (0.1, 60), (0.9, 200), (0.03, 300)])
def test_the_wilson_interval_covers_the_panels_pass_rate(p: float, n: int) -> None:
    rng = np.random.default_rng(52)
    counts = rng.binomial(n, p, BATCHES)
    # the interval of a count depends on the count alone: compute each distinct one once
    bounds = {int(k): wilson_interval(int(k), n) for k in np.unique(counts)}
    covered = np.mean([bounds[int(k)][0] <= p <= bounds[int(k)][1] for k in counts])  # type: ignore[index]
    assert covered >= FLOOR, covered


@pytest.mark.parametrize(("hazard", "n", "limit"), [(0.35, 40, 3), (0.2, 80, 5)])
def test_the_kaplan_meier_band_covers_the_share_not_yet_passed(hazard: float, n: int, limit: int) -> None:
    """Rounds to pass drawn as geometric (each round passes with ``hazard``), censored at the
    round limit; the printed 95 % band at each round before the limit covers the true share
    not yet passed, (1 − hazard)^round."""
    rng = np.random.default_rng(54)
    rounds = rng.geometric(hazard, (BATCHES, n))
    seen: dict[tuple[int, ...], list[tuple[float | None, float | None]]] = {}
    hits = np.zeros(limit - 1)
    for batch in rounds:
        key = tuple(int((batch == r).sum()) for r in range(1, limit + 1))  # the curve depends on these
        if key not in seen:
            survival = kaplan_meier([int(r) if r <= limit else None for r in batch], limit)
            assert survival is not None
            seen[key] = [(p.low, p.high) for p in survival.curve]
        for r in range(1, limit):
            low, high = seen[key][r - 1]
            truth = (1 - hazard) ** r
            hits[r - 1] += (0.0 if low is None else low) <= truth <= (1.0 if high is None else high)
    assert (hits / BATCHES >= FLOOR).all(), hits / BATCHES


def test_the_prediction_powered_interval_covers_the_share_truly_sound() -> None:
    """Teachers label 60 of a batch's 400 items at random; the panel errs at known rates."""
    theta, n, labelled, f, s = 0.55, 400, 60, 0.15, 0.85
    rng = np.random.default_rng(23)
    covered = 0
    for _ in range(BATCHES):
        truth = rng.random(n) < theta
        passed = np.where(truth, rng.random(n) < s, rng.random(n) < f)
        found = prediction_powered(
            truth[:labelled].tolist(), passed[:labelled].tolist(), passed[labelled:].tolist()
        )
        assert found is not None
        covered += found.ci95[0] <= theta <= found.ci95[1]
    assert covered / BATCHES >= FLOOR, covered / BATCHES


def test_a_corrected_rate_names_its_estimate_interval_and_whether_it_could_swap() -> None:
    good = corrected_rate(58, 100, Calibration(false_accepts=12, flawed=120, sound_passed=63, sound=70))
    assert good is not None and good.raw == 0.58 and good.estimate == pytest.approx(0.6)
    assert good.ci95[0] < 0.6 < good.ci95[1] and not good.could_swap and good.chance == 0.0
    # 3 of 5 flawed and 3 of 5 sound passed: the panel may well be no better than chance
    weak = corrected_rate(58, 100, Calibration(3, 5, 3, 5))
    assert weak is not None and weak.estimate is None and weak.could_swap and weak.ci95 == (0.0, 1.0)
    assert corrected_rate(0, 0, Calibration(1, 10, 9, 10)) is None
    # seeded: the same figures every time
    assert corrected_rate(58, 100, Calibration(12, 120, 63, 70)) == good


def test_prediction_powered_needs_labels_and_unlabelled_items() -> None:
    assert prediction_powered([True], [True], [True, False]) is None
    assert prediction_powered([True, False], [True, False], []) is None
