"""How often the corrected pass rate's interval covers the truth, over a grid of settings.

Each setting is a true share sound θ, a batch size n, a record's flawed and sound counts, and the
panel's false-accept rate f and share of sound versions passed s. Each simulated batch draws the
record's counts and the batch's passes as Bernoulli verdicts of a panel with those rates, and asks
``graphs.analysis.correction.corrected_intervals`` for its interval. Printed: the coverage's minimum, 5th
percentile and mean over the grid, the worst setting, and the mean width. The tests check four of
these settings (tests/graphs/test_correction.py); this shows the rest.

    uv run --frozen python bench/correction_coverage.py               # 324 settings × 400 batches
    uv run --frozen python bench/correction_coverage.py --batches 1000
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from graphs.analysis.correction import corrected_intervals

THETAS = (0.05, 0.3, 0.6, 0.95)
SIZES = (40, 150, 500)
RECORDS = ((30, 20), (120, 70), (400, 300))  # (flawed, sound)
FALSE_ACCEPTS = (0.02, 0.1, 0.25)
SOUND_PASSED = (0.75, 0.92, 0.99)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=400, help="simulated batches per setting")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap draws per interval")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    grid = list(itertools.product(THETAS, SIZES, RECORDS, FALSE_ACCEPTS, SOUND_PASSED))
    coverage, widths = [], []
    for theta, n, (flawed, sound), f, s in grid:
        truly = rng.binomial(n, theta, args.batches)
        passes = rng.binomial(truly, s) + rng.binomial(n - truly, f)
        false_accepts, passed = rng.binomial(flawed, f, args.batches), rng.binomial(sound, s, args.batches)
        low, high, _ = corrected_intervals(
            passes, n, false_accepts, flawed, passed, sound, resamples=args.resamples
        )
        coverage.append(float(np.mean((low <= theta) & (theta <= high))))
        widths.append(float(np.mean(high - low)))
    found = np.asarray(coverage)
    worst = grid[int(found.argmin())]
    print(f"{len(grid)} settings × {args.batches} simulated batches, {args.resamples} draws per interval")
    fifth = np.quantile(found, 0.05)
    print(f"coverage: min {found.min():.3f}, 5th percentile {fifth:.3f}, mean {found.mean():.3f}")
    print(f"worst setting (θ, n, (flawed, sound), f, s): {worst}")
    print(f"mean width: {np.mean(widths):.3f}")


if __name__ == "__main__":
    main()
