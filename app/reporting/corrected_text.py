"""How a report's corrected pass rates are worded (Markdown, HTML, the comparisons' column)."""

from __future__ import annotations

from typing import Any


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def interval(bounds: Any) -> str:
    """``41.2–63.0%``; an em dash for none."""
    return "—" if not bounds else f"{100 * bounds[0]:.1f}–{100 * bounds[1]:.1f}%"


def corrected_rows(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(model, arm) → its corrected figures (reports stored before the correction have none)."""
    rows = (report.get("correction") or {}).get("rows") or []
    return {(row["model"], row["arm"]): row for row in rows}


def corrected_cell(row: dict[str, Any]) -> str:
    """``60.3% (41.2–63.0%)``, or why there is no estimate."""
    if row["corrected"] is None:
        return "no better than chance" if row.get("could_swap") else "—"
    return f"{_pct(row['corrected'])} ({interval(row['corrected_ci95'])})"


def ppi_cell(row: dict[str, Any]) -> str:
    """``58.0% (47.1–68.9%), 40 labelled``; ``3 labelled (too few)``; an em dash without labels."""
    ppi = row.get("ppi")
    if not ppi:
        return "—"
    if ppi["estimate"] is None:
        return f"{ppi['labelled']} labelled (no estimate)"
    return f"{_pct(ppi['estimate'])} ({interval(ppi['ci95'])}), {ppi['labelled']} labelled"


def record_line(record: dict[str, Any]) -> str:
    """The record's counts the correction rests on."""
    return (
        f"record {record['record_id']}: {record['false_accepts']} of {record['flawed']} flawed problems "
        f"passed (false-accept rate f), {record['sound_passed']} of {record['sound']} sound versions "
        f"passed (s), set {record.get('set')}"
    )


def summary(report: dict[str, Any]) -> str:
    """One sentence: corrected by which record and how, or uncorrected and why."""
    found = report.get("correction") or {}
    if found.get("status") == "corrected":
        return (
            f"Pass rates corrected for the panel's measured error: {record_line(found['record'])}. "
            f"Method: {found['method']}."
        )
    return f"The pass rates are uncorrected: {found.get('reason')}."


def corrected_lines(report: dict[str, Any]) -> list[str]:
    """The Markdown section: each model and arm's pass rate raw, corrected and prediction-powered."""
    found = report.get("correction")
    if not found:
        return []
    head = ["model", "arm", "problems", "pass rate (raw)", "corrected (95 %)", "PPI (95 %)"]
    rows = [
        [r["model"], r["arm"], str(r["problems"]), _pct(r["pass_rate"]), corrected_cell(r), ppi_cell(r)]
        for r in found["rows"]
    ]
    lines = ["", "## Pass rates corrected for the judges' error", "", summary(report), ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    if any(r.get("ppi") for r in found["rows"]):
        lines += ["", f"PPI: {found['ppi_method']}; at least {found['ppi_min_labels']} labelled runs."]
    return lines


def decisive_cell(comparison: dict[str, Any]) -> str:
    """``62.0% / 40.1%: decisive: …`` or ``uncorrected``."""
    found = comparison.get("corrected")
    if not found:
        return "uncorrected"
    return f"{_pct(found['a'])} / {_pct(found['b'])}: {found['verdict']}"
