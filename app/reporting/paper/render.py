"""Rich rendering of the reproduced paper tables: every printed cell beside ours, with its mark."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.table import Table

from app.reporting.paper.reproduce import AVERAGE, MODELS, Cell, cells, paper_values, tally
from graphs.analysis.paper_tables import LEVELS, PaperTables

SYMBOLS = {"match": "✓", "differs": "✗", "paper inconsistent": "!", "not computed": "·"}
LEGEND = (
    "✓ match: ours, rounded to two decimals, is the printed value (a change by its magnitude: the "
    "paper's arrows were lost in extraction); ✗ differs; ! paper inconsistent: the printed value "
    "contradicts the paper's own numbers (listed below); · not computed from these files."
)


def _cell(cell: Cell, spec: str = ".2f") -> str:
    ours = "—" if cell.ours is None else format(cell.ours, ("+" + spec) if cell.magnitude else spec)
    symbol = SYMBOLS[cell.mark]
    return f"{ours} {symbol}" if cell.mark == "match" else f"{ours} {symbol} paper {cell.paper:.2f}"


def render(console: Console, tables: Mapping[str, PaperTables]) -> dict[str, int]:
    """Print every printed cell of Table 1 and Table 2 with its mark, then where the paper contradicts
    itself; returns the tally of marks."""
    marked = cells(tables)
    by_key = {(c.table, c.row, c.column): c for c in marked}
    rows = [*MODELS, AVERAGE]  # every printed row, computed or not

    title = "Table 1: final score per Bloom level (paper's definition), and its last-round change"
    table1 = Table(title=title)
    table1.add_column("Model")
    for level in (*LEVELS, "avg"):
        table1.add_column("Avg." if level == "avg" else level.capitalize(), justify="right")
    for row in rows:
        cells1 = [
            f"{_cell(by_key[(1, row, f'{lvl}.score')])}\n{_cell(by_key[(1, row, f'{lvl}.change')])}"
            for lvl in (*LEVELS, "avg")
        ]
        table1.add_row(row, *cells1)
    table1.caption = (
        "Each cell: the level score (problems with two or more rounds, summed, over all problems; a "
        "round-1 pass counts 0), then its change from the previous round. Avg.: the plain mean of the "
        "six levels; Average: the plain mean of the seven models."
    )
    console.print(table1)

    table2 = Table(title="Table 2: RoundsToPass, AvgQualityScore and its change")
    columns = (
        "Model",
        "RoundsToPass (passers only)",
        "AvgQualityScore",
        "change (0-1)",
        "all steps",
        "95% CI",
        "pass rate",
        "judges' κ",
    )
    for column in columns:
        table2.add_column(column, justify="left" if column == "Model" else "right")
    for row in rows:
        t = tables.get(row)
        share = "—" if t is None else f"{100 * t.pass_rate:.1f}% of {t.n_problems}"
        all_steps = "—" if t is None else f"{t.avg_quality_all_steps:.2f}"
        interval = "—" if t is None or t.avg_quality_ci is None else "{:.1f}–{:.1f}".format(*t.avg_quality_ci)
        kappa = "—" if t is None else "undefined"
        if t is not None and t.judges_fleiss_kappa is not None:
            kappa = f"{t.judges_fleiss_kappa:.3f}"
        table2.add_row(
            row,
            _cell(by_key[(2, row, "rounds_to_pass")]),
            _cell(by_key[(2, row, "avg_quality_score")]),
            _cell(by_key[(2, row, "change")], ".4f"),
            all_steps,
            interval,
            share,
            kappa,
        )
    table2.caption = (
        "all steps: AvgQualityScore as the paper's text defines it (each problem's mean Q over its "
        "rounds); 95% CI: BCa bootstrap of AvgQualityScore; pass rate: final-round Q > 0.85; judges' κ: "
        "Fleiss' κ of the seven pass/fail votes over every judged version. None is printed in the paper."
    )
    console.print(table2)

    marks = tally(marked)
    console.print(
        f"{marks['match']} cells match, {marks['differs']} differ, {marks['paper inconsistent']} are "
        f"inconsistent within the paper, {marks['not computed']} not computed (of {len(marked)} printed).",
        highlight=False,
    )
    console.print(LEGEND, highlight=False)
    console.print("[bold]Where the paper contradicts itself[/bold]")
    for c in marked:
        if c.inconsistency:
            line = f"- Table {c.table}, {c.row}, {c.column}: {c.inconsistency}"
            console.print(line, markup=False, highlight=False)
    console.print("[bold]Where the paper contradicts its code[/bold]")
    for note in paper_values()["contradictions"]:
        console.print(f"- {note}", markup=False, highlight=False)
    return marks
