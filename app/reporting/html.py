"""The batch report as one self-contained HTML page with its plots (autoescaped Jinja2)."""

from __future__ import annotations

import base64
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template, select_autoescape

from agents.schemas import JUDGES
from app.reporting import figures
from app.reporting.batch import DEFINITIONS
from app.reporting.corrected_text import corrected_cell, decisive_cell, ppi_cell, summary
from app.reporting.data import OUTCOME_KEYS
from app.reporting.manifest import manifest_lines
from app.reporting.text import (
    ci,
    cited_line,
    f,
    kappa,
    median_rounds,
    p_value,
    pass_cell,
    repeats_line,
    undefined_lines,
    words,
)
from graphs.analysis.paper_tables import LEVELS


@cache
def _template() -> Template:
    environment = Environment(
        loader=PackageLoader("app.reporting", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
    )
    return environment.get_template("report.html.j2")


# What each figure shows, for people who cannot see it (alt) and for everyone (caption).
ALT = {
    "comparison": "Dot-and-whisker plot: pass rate and final AvgQualityScore per model and arm, 95% CIs",
    "levels": "Small multiples: mean final score per Bloom level and the holistic judge, per model and arm",
    "rounds": "Kaplan-Meier curves: share of problems not yet passed after each round, with 95% bands",
    "agreement": "Heatmap per arm: Cohen's kappa between every two judges",
    "flaws": "Dot-and-whisker plot: pass rate per labelled flaw type, per model and arm, with 95% intervals",
    "paired": "Slope chart: each problem's final quality under the control and under the loop",
}
CAPTIONS = {
    "comparison": "Over scored items; Wilson intervals for pass rates, BCa bootstrap over problems for Q.",
    "levels": "Mean final-round score (0–100) of each judge; dashed: a judge's pass mark θ = 85.",
    "rounds": "Censored at each arm's round limit; shaded: 95% confidence bands.",
    "agreement": "Cohen's κ of pass/fail between judges over the arm's unique judged versions.",
    "flaws": "Per flaw label of the dataset (metadata.flaw), over scored items.",
    "paired": "Problems scored in both arms; Δ is the mean paired difference with its BCa interval.",
}


CSS_PX_PER_INCH = 96  # every figure at the same scale in the page


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def to_html(report: dict[str, Any]) -> str:
    """Outcomes, errors, scored statistics, by flaw type, Table 1, comparisons, agreement, and the
    figures the report has data for (vector SVG, naming the batch in their metadata)."""
    about = figures.provenance(report)
    drawn = [
        {
            "name": name,
            "alt": ALT[name],
            "caption": CAPTIONS[name],
            "svg": base64.b64encode(figures.svg(figure, about).encode()).decode("ascii"),
            "width": round(figure.get_figwidth() * CSS_PX_PER_INCH),
            "height": round(figure.get_figheight() * CSS_PX_PER_INCH),
        }
        for name, figure in figures.draw(report).items()
    ]
    return _template().render(
        # reports stored before a section or its definitions have none
        **report
        | {"by_flaw": report.get("by_flaw") or [], "definitions": DEFINITIONS}
        | {"correction": report.get("correction")},  # reports stored before the correction have none
        correction_summary=summary(report),
        corrected_cell=corrected_cell,
        ppi_cell=ppi_cell,
        decisive_cell=decisive_cell,
        manifest_lines=manifest_lines(report["manifest"]) if report.get("manifest") else [],
        figures=drawn,
        levels=LEVELS,
        judges=JUDGES,
        outcome_keys=OUTCOME_KEYS,
        repeats_line=repeats_line(report["repeats"]),
        num=f,
        pct=_pct,
        ci=ci,
        p_value=p_value,
        median_rounds=median_rounds,
        pass_cell=pass_cell,
        words=words(report),
        cited_line=cited_line,
        warrant_rows=_warrant_rows(report),
        kappa=kappa,
        undefined_lines=undefined_lines,
    )


def _warrant_rows(report: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The rows with accepted items, each with its warrants (reports stored before warrants have none)."""
    rows = [(row, row.get("warrants") or {}) for row in report["rows"]]
    return [(row, w) for row, w in rows if w.get("valid") or w.get("none")]
