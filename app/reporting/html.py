"""The batch report as one self-contained HTML page with its plots (autoescaped Jinja2)."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template, select_autoescape

from agents.schemas import JUDGES
from app.reporting import plots
from app.reporting.data import OUTCOME_KEYS
from app.reporting.manifest import manifest_lines
from app.reporting.text import ci, f, median_rounds, p_value, pass_cell, repeats_line
from graphs.paper_tables import LEVELS


@cache
def _template() -> Template:
    environment = Environment(
        loader=PackageLoader("app.reporting", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
    )
    return environment.get_template("report.html.j2")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def to_html(report: dict[str, Any]) -> str:
    """Outcomes, errors, scored statistics, by flaw type, Table 1, comparisons, agreement, and three
    figures."""
    rows = report["rows"]
    figures = {
        "radar": plots.bloom_radar(rows),
        "quality": plots.quality_by_round(rows),
        "rounds": plots.time_to_pass(rows),
    }
    return _template().render(
        **report | {"by_flaw": report.get("by_flaw") or []},  # reports stored before the section
        manifest_lines=manifest_lines(report["manifest"]) if report.get("manifest") else [],
        figures=figures,
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
    )
