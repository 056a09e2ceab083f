"""Cells a spreadsheet would run, made inert for CSV exports.

Spreadsheets (Excel, LibreOffice, Google Sheets) read a cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return as a formula, and a dataset's text (an external id, a flaw label,
an endpoint's error message) reaches the exports unchanged: ``=HYPERLINK(…)`` or ``=cmd|…`` would
run on the reader's machine. Such a text cell is written with a leading apostrophe (OWASP's advice
for CSV injection), which every spreadsheet shows as text and which a program reading the CSV can
strip. Numbers are left as they are (a negative score is a number, not a formula), and JSONL and
Parquet are typed, so they carry the text exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def inert(value: Any) -> Any:
    """``value``, with an apostrophe in front when it is text a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def inert_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A CSV row with every cell made inert."""
    return {name: inert(value) for name, value in row.items()}
