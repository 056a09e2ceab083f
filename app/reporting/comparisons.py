"""Paired comparisons on the same problems: the loop against its control, and every two models.

Pairs are problems scored under both A and B. Pass/fail: the exact McNemar test (a problem passes
when at least half its scored repeats pass). Quality: the per-problem difference of the mean final
AvgQualityScore, with a BCa bootstrap interval over problems and a Wilcoxon signed-rank p-value.
Both p-values are Holm-adjusted across every comparison of the report. When the batch's panel has
a validity record, each comparison's pass rates are also corrected for the panel's measured error
(``app.reporting.corrected``), and the comparison is *decisive* only when the two corrected intervals
do not overlap and the panel is clearly better than chance (else the correction could swap the order).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from app.reporting.corrected import corrected_figure
from app.reporting.data import Entry, by_problem, problem_pass, problem_quality
from graphs.analysis.correction import Calibration
from graphs.analysis.statistics import holm, mcnemar_exact, paired_difference

Groups = dict[tuple[str, str], list[Entry]]


def comparisons(
    groups: Groups, arms: Sequence[str], calibration: Calibration | None = None
) -> list[dict[str, Any]]:
    """Loop vs control for each model, then every pair of models within each arm, Holm-adjusted;
    each with its pass rates corrected by ``calibration`` (None: ``corrected`` is null)."""
    pairs: list[tuple[str, tuple[str, str], tuple[str, str]]] = []
    models = list(dict.fromkeys(model for model, _ in groups))
    if "control" in arms:
        pairs += [("loop_vs_control", (m, "loop"), (m, "control")) for m in models]
    for arm in arms:
        pairs += [("models", (a, arm), (b, arm)) for a, b in combinations(models, 2)]
    rows = [_compare(kind, a, b, groups) for kind, a, b in pairs]
    _adjust(rows, "mcnemar_p")
    _adjust(rows, "delta_p")
    for row in rows:
        row["corrected"] = corrected_comparison(row, calibration)
    return rows


def corrected_comparison(row: dict[str, Any], calibration: Calibration | None) -> dict[str, Any] | None:
    """Both sides' pass rates corrected, and whether the comparison is decisive once they are: not
    when the corrected intervals overlap, nor when the panel may be no better than chance (a
    correction by such a panel reverses orders). None without a record or without pairs."""
    n = row["problems"]
    if calibration is None or not n:
        return None
    a = corrected_figure(row["pass_rate_a"] * n, n, calibration)
    b = corrected_figure(row["pass_rate_b"] * n, n, calibration)
    if a is None or b is None:
        return None
    (a_low, a_high), (b_low, b_high) = a["corrected_ci95"], b["corrected_ci95"]
    if a["could_swap"] or b["could_swap"]:
        decisive, why = (
            False,
            "not decisive: the panel may be no better than chance, so the correction could swap the order",
        )
    elif a_low <= b_high and b_low <= a_high:
        decisive, why = False, "not decisive: the corrected intervals overlap"
    else:
        higher = row["a"] if a_low > b_high else row["b"]
        decisive, why = True, f"decisive: {higher}'s corrected interval lies wholly above the other's"
    return {
        "a": a["corrected"],
        "a_ci95": a["corrected_ci95"],
        "b": b["corrected"],
        "b_ci95": b["corrected_ci95"],
        "decisive": decisive,
        "verdict": why,
    }


def _compare(kind: str, a: tuple[str, str], b: tuple[str, str], groups: Groups) -> dict[str, Any]:
    return compare(kind, f"{a[0]}/{a[1]}", groups.get(a, []), f"{b[0]}/{b[1]}", groups.get(b, []))


def compare(
    kind: str, a: str, a_entries: Sequence[Entry], b: str, b_entries: Sequence[Entry]
) -> dict[str, Any]:
    """One paired comparison of two sides' items (of one batch or two) on the problems both scored,
    without the Holm adjustment, which only a family of comparisons has."""
    left, right = by_problem(a_entries), by_problem(b_entries)
    shared = [p for p in left if p in right]
    a_pass = [problem_pass(left[p]) >= 0.5 for p in shared]
    b_pass = [problem_pass(right[p]) >= 0.5 for p in shared]
    qualities = [
        (qa, qb)
        for p in shared
        if (qa := problem_quality(left[p])) is not None and (qb := problem_quality(right[p])) is not None
    ]
    deltas = [qa - qb for qa, qb in qualities]
    test, difference = mcnemar_exact(a_pass, b_pass), paired_difference(deltas)
    return {
        "kind": kind,
        "a": a,
        "b": b,
        "problems": len(shared),
        "pass_rate_a": sum(a_pass) / len(shared) if shared else None,
        "pass_rate_b": sum(b_pass) / len(shared) if shared else None,
        "a_only": test.a_only if test else 0,
        "b_only": test.b_only if test else 0,
        "mcnemar_p": test.p_value if test else None,
        "delta_avg_quality": difference.mean if difference else None,
        "delta_ci95": difference.ci95 if difference else None,
        "delta_p": difference.p_value if difference else None,
        "pairs": [[round(qa, 4), round(qb, 4)] for qa, qb in qualities],  # per problem: (A, B) quality
    }


def _adjust(rows: list[dict[str, Any]], key: str) -> None:
    present = [row for row in rows if row[key] is not None]
    for row, adjusted in zip(present, holm([row[key] for row in present]), strict=True):
        row[f"{key}_holm"] = adjusted
    for row in rows:
        row.setdefault(f"{key}_holm", None)
