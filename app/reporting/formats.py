"""A batch report in the format asked for."""

from __future__ import annotations

import json
from typing import Any

from app.reporting.text import to_csv, to_markdown

REPORT_FORMATS = ("md", "json", "csv", "html")


def render_report(report: dict[str, Any], fmt: str) -> str:
    """The report in one of ``REPORT_FORMATS``."""
    if fmt == "json":
        return json.dumps(report, indent=2, default=str)
    if fmt == "html":
        from app.reporting.html import to_html  # matplotlib loads only when a page is drawn

        return to_html(report)
    return to_csv(report) if fmt == "csv" else to_markdown(report)
