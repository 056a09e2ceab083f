"""How far the judges agree with each other across a batch (pure functions).

Each judged version is an item that every judge rated pass or fail (``None`` when it abstained).
Three chance-corrected coefficients are reported side by side, because with a high share of
passes Fleiss' κ collapses although the judges mostly agree (the kappa paradox: its expected
agreement grows with prevalence), while Gwet's AC1 does not; Krippendorff's α uses every vote,
also of items some judge abstained on.

- Fleiss' κ: statsmodels, over the items every judge voted on.
- Krippendorff's α (nominal): the ``krippendorff`` package, abstentions as missing values.
- Gwet's AC1 (Gwet 2008, multiple raters, missing values allowed): written here — no maintained
  Python package ships it with today's SciPy — and cross-checked in the tests against a second,
  pairwise implementation and the two-rater closed form.
Cohen's κ for every pair of judges, and each judge's pass rate, complete the picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
from numpy.typing import NDArray

Votes = Mapping[str, Sequence[bool | None]]  # judge → one vote per item, None when it abstained


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


def fleiss_kappa(votes: Votes) -> float | None:
    """Fleiss' κ over the items every judge voted on; None when undefined (no items, no variance)."""
    matrix = _complete_items(votes)
    if matrix.shape[0] == 0 or matrix.shape[1] < 2:
        return None
    passes = matrix.sum(axis=1)
    counts = np.column_stack([passes, matrix.shape[1] - passes])
    if counts[:, 0].sum() == 0 or counts[:, 1].sum() == 0:
        return None  # one category only: agreement by chance is certain, κ undefined
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    return float(sm_fleiss(counts, method="fleiss"))


def krippendorff_alpha(votes: Votes) -> float | None:
    """Krippendorff's α for nominal pass/fail votes, abstentions as missing; None when undefined."""
    judges = list(votes)
    if len(judges) < 2 or not votes[judges[0]]:
        return None
    data = np.array(
        [[np.nan if v is None else float(v) for v in votes[judge]] for judge in judges], dtype=float
    )
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = data[:, pairable]
    if values.size == 0 or len(set(values[~np.isnan(values)].tolist())) < 2:
        return None
    import krippendorff

    return float(krippendorff.alpha(reliability_data=values, level_of_measurement="nominal"))


def gwet_ac1(votes: Votes) -> float | None:
    """Gwet's AC1 for pass/fail votes of several judges, abstentions allowed; None when undefined.

    P_a: over items with at least two votes, the share of agreeing ordered pairs of votes.
    P_e = (1/(q−1)) Σ_k π_k (1 − π_k) with q = 2 categories and π_k the mean over items of each
    item's share of votes in category k.
    """
    items = list(zip(*votes.values(), strict=True)) if votes else []
    rated = [[v for v in item if v is not None] for item in items]
    rated = [item for item in rated if item]
    pairable = [item for item in rated if len(item) >= 2]
    if not pairable:
        return None
    agreement = []
    for item in pairable:
        r, passes = len(item), sum(item)
        agreement.append((passes * (passes - 1) + (r - passes) * (r - passes - 1)) / (r * (r - 1)))
    p_a = float(np.mean(agreement))
    pi_pass = float(np.mean([sum(item) / len(item) for item in rated]))
    categories = 2
    p_e = (pi_pass * (1 - pi_pass) + (1 - pi_pass) * pi_pass) / (categories - 1)
    if p_e >= 1.0:
        return None
    return (p_a - p_e) / (1 - p_e)


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


def _constant(judge: str, cast: Sequence[bool]) -> str | None:
    if cast and all(cast):
        return f"{judge} passed every version it voted on"
    if cast and not any(cast):
        return f"{judge} failed every version it voted on"
    return None


def cohen_undefined(left: str, right: str, votes: Votes) -> str | None:
    """Why Cohen's κ of two judges is undefined, or None when it is defined.

    κ compares agreement with the agreement expected from each judge's pass rate. A judge whose
    votes never vary (it passes, or fails, every version both voted on) makes that expectation equal
    to the observed agreement whatever the other does: the formula then gives 0 (or 0/0), which
    says nothing about agreement, so the report shows it as undefined instead.
    """
    both = zip(votes[left], votes[right], strict=True)
    pairs = [(a, b) for a, b in both if a is not None and b is not None]
    if not pairs:
        return f"no version that both {left} and {right} voted on"
    return _constant(left, [a for a, _ in pairs]) or _constant(right, [b for _, b in pairs])


def cohen_matrix(votes: Votes) -> dict[str, dict[str, float | None]]:
    """Pairwise Cohen's κ between every two judges (symmetric, 1.0 on the diagonal); None where it
    is undefined (``cohen_undefined_reasons`` says why)."""
    judges = list(votes)
    reasons = cohen_undefined_reasons(votes)
    matrix: dict[str, dict[str, float | None]] = {
        j: {j: None if j in reasons.get(j, {}) else 1.0} for j in judges
    }
    for left, right in combinations(judges, 2):
        kappa = None if right in reasons.get(left, {}) else cohen_kappa(votes[left], votes[right])
        matrix[left][right] = matrix[right][left] = kappa
    return matrix


def cohen_undefined_reasons(votes: Votes) -> dict[str, dict[str, str]]:
    """For every pair of judges (a judge with itself included) whose Cohen's κ is undefined, why:
    ``{judge: {other judge: reason}}``, symmetric; pairs with a defined κ are absent."""
    out: dict[str, dict[str, str]] = {}
    judges = list(votes)
    for index, left in enumerate(judges):
        for right in judges[index:]:
            reason = cohen_undefined(left, right, votes)
            if reason is not None:
                out.setdefault(left, {})[right] = reason
                out.setdefault(right, {})[left] = reason
    return out


def fleiss_undefined(votes: Votes) -> str | None:
    """Why Fleiss' κ is undefined (``fleiss_kappa`` returns None), or None when it is defined."""
    matrix = _complete_items(votes)
    if matrix.shape[1] < 2:
        return "fewer than two judges"
    if matrix.shape[0] == 0:
        return "no version that every judge voted on"
    if matrix.all():
        return "every judge passed every version that all of them voted on"
    if not matrix.any():
        return "every judge failed every version that all of them voted on"
    return None


def pass_rates(votes: Votes) -> dict[str, float | None]:
    """Each judge's share of passing votes over the items it voted on."""
    out: dict[str, float | None] = {}
    for judge, column in votes.items():
        cast = [v for v in column if v is not None]
        out[judge] = sum(cast) / len(cast) if cast else None
    return out
