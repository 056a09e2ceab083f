"""Rich rendering of the reproduced paper tables."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.table import Table

from app.reproduce import Comparison, table2_comparisons
from graphs.paper_tables import LEVELS, PaperTables


def _mark(comparison: Comparison, digits: int = 2) -> str:
    ours = "—" if comparison.ours is None else f"{comparison.ours:.{digits}f}"
    return f"{ours}  (paper {comparison.paper:.2f}) {'✓' if comparison.matches else '✗'}"


def render(console: Console, tables: Mapping[str, PaperTables]) -> int:
    """Print Table 1 and Table 2; returns how many Table 2 values match the paper."""
    table1 = Table(title="Table 1: final score per Bloom level (↑ change from the previous round)")
    table1.add_column("Model")
    for level in LEVELS:
        table1.add_column(level.capitalize(), justify="right")
    table1.add_column("Avg.", justify="right")
    for model, t in tables.items():
        cells = [f"{t.level_scores[lvl]:.2f} ({t.level_change[lvl]:+.2f})" for lvl in LEVELS]
        table1.add_row(model, *cells, f"{t.level_average:.2f}")
    table1.caption = (
        "Paper values for Table 1 are not bundled; these are the reference analysis's definitions."
    )
    console.print(table1)

    comparisons = table2_comparisons(tables)
    table2 = Table(title="Table 2: RoundsToPass and AvgQualityScore beside the paper")
    columns = (
        "Model",
        "RoundsToPass (passers only)",
        "AvgQualityScore",
        "95% CI",
        "±",
        "pass rate",
        "judges' κ",
    )
    for column in columns:
        table2.add_column(column, justify="left" if column == "Model" else "right")
    matched = 0
    for model, t in tables.items():
        rounds, quality = comparisons[model]
        matched += rounds.matches + quality.matches
        interval = "—" if t.avg_quality_ci is None else f"{t.avg_quality_ci[0]:.1f}–{t.avg_quality_ci[1]:.1f}"
        kappa = "—" if t.judges_fleiss_kappa is None else f"{t.judges_fleiss_kappa:.3f}"
        share = f"{100 * t.pass_rate:.1f}% of {t.n_problems}"
        table2.add_row(
            model, _mark(rounds), _mark(quality), interval, f"{t.quality_change:+.2f}", share, kappa
        )
    table2.caption = (
        f"{matched} of {2 * len(tables)} Table 2 values match the paper. 95% CI: BCa bootstrap of "
        "AvgQualityScore; judges' κ: Fleiss' κ of the seven pass/fail votes over every judged version."
    )
    console.print(table2)
    return matched
