"""Rich rendering of the reproduced paper tables, every value marked against the paper's."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.table import Table

from app.reporting.paper.reproduce import Comparison, comparisons, paper_values, tally
from graphs.paper_tables import LEVELS, PaperTables


def _mark(comparison: Comparison, signed: bool = False) -> str:
    spec = "+.2f" if signed else ".2f"
    ours = "—" if comparison.ours is None else format(comparison.ours, spec)
    if comparison.paper is None:
        return f"{ours} ·"
    return f"{ours} {'✓' if comparison.matches else f'✗ (paper {comparison.paper:{spec}})'}"


def render(console: Console, tables: Mapping[str, PaperTables]) -> dict[str, int]:
    """Print Table 1, Table 2 and the paper's contradictions; returns the tally of marks."""
    rows = comparisons(tables)
    table1 = Table(title="Table 1: final score per Bloom level (change from the previous round)")
    table1.add_column("Model")
    for level in LEVELS:
        table1.add_column(level.capitalize(), justify="right")
    table1.add_column("Avg. (plain mean)", justify="right")
    for model, row in rows.items():
        cells = [
            f"{_mark(row[f'{lvl}.score'])}\n({_mark(row[f'{lvl}.change'], signed=True)})" for lvl in LEVELS
        ]
        table1.add_row(model, *cells, _mark(row["avg"]))
    console.print(table1)

    table2 = Table(title="Table 2: RoundsToPass, AvgQualityScore and ± beside the paper")
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
    for model, t in tables.items():
        row = rows[model]
        interval = "—" if t.avg_quality_ci is None else f"{t.avg_quality_ci[0]:.1f}–{t.avg_quality_ci[1]:.1f}"
        kappa = "—" if t.judges_fleiss_kappa is None else f"{t.judges_fleiss_kappa:.3f}"
        share = f"{100 * t.pass_rate:.1f}% of {t.n_problems}"
        table2.add_row(
            model,
            _mark(row["rounds_to_pass"]),
            _mark(row["avg_quality_score"]),
            interval,
            _mark(row["plus_minus"], signed=True),
            f"{t.avg_quality_all_steps:.2f}",
            share,
            kappa,
        )
    marks = tally(rows)
    table2.caption = (
        f"✓ {marks['match']} values match the paper, ✗ {marks['differ']} differ, · {marks['not_bundled']} "
        "have no bundled paper value (app/reporting/paper/think_paper_values.json). 95% CI: BCa bootstrap of "
        "AvgQualityScore (final round; 'all steps' is the text's definition); judges' κ: "
        "Fleiss' κ of the seven pass/fail votes over every judged version."
    )
    console.print(table2)
    console.print("[bold]Where the paper contradicts itself or its code[/bold]")
    for note in paper_values()["contradictions"]:
        console.print(f"- {note}", markup=False, highlight=False)
    return marks
