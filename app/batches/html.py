"""The batch report as one self-contained HTML page with its plots (autoescaped Jinja2)."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template, select_autoescape

from agents.schemas import JUDGES
from app.batches import plots
from graphs.paper_tables import LEVELS


@cache
def _template() -> Template:
    environment = Environment(
        loader=PackageLoader("app.batches", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
    )
    return environment.get_template("report.html.j2")


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _ci(interval: Any, scale: float = 1.0) -> str:
    return "—" if not interval else f"{scale * interval[0]:.1f}–{scale * interval[1]:.1f}"


def to_html(report: dict[str, Any]) -> str:
    """Summary, Table 1, agreement and feedback-vs-control tables, and three figures."""
    rows = report["rows"]
    figures = {
        "radar": plots.bloom_radar(rows),
        "quality": plots.quality_by_round(rows),
        "rounds": plots.rounds_to_pass(rows),
    }
    return _template().render(
        **report, figures=figures, levels=LEVELS, judges=JUDGES, num=_num, pct=_pct, ci=_ci
    )
