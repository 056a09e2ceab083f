"""Cells a spreadsheet would run, made inert for CSV exports.

Spreadsheets (Excel, LibreOffice, Google Sheets) read a cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return as a formula, and a dataset's text (an external id, a flaw label,
an endpoint's error message) reaches the exports unchanged: ``=HYPERLINK(…)`` or ``=cmd|…`` would
run on the reader's machine. Such a text cell is written with a leading apostrophe (OWASP's advice
for CSV injection), which every spreadsheet shows as text and which a program reading the CSV can
strip. Numbers are left as they are (a negative score is a number, not a formula), and JSONL and
Parquet are typed, so they carry the text exactly.

A cell is also a formula when it starts with spaces before one of those characters, or with a
full-width ``＝ ＋ － ＠`` (which some spreadsheets and input methods read as the ASCII ones). And a
line break inside a cell starts a new row for any reader that does not honour CSV quoting (a
carriage return alone did, before the writers ended rows with CRLF and so quoted every field holding
one), so an apostrophe also follows every CR or LF inside a text cell: whichever way the file is
split into lines, no line starts with a live formula. The writers end rows with ``\\r\\n`` (RFC 4180),
which makes Python's csv module quote every field holding a CR or an LF.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
# Read as formula starts once leading blanks are skipped: the ASCII ones and their full-width forms.
_FORMULA_CHARS = ("=", "+", "-", "@", "＝", "＋", "－", "＠")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# The line terminator of every CSV export (``csv.writer(lineterminator=CSV_LINE_END)``).
CSV_LINE_END = "\r\n"


def formula_like(text: str) -> bool:
    """Whether a spreadsheet could read ``text`` as a formula."""
    return text.startswith(FORMULA_STARTS) or text.lstrip().startswith(_FORMULA_CHARS)


def inert(value: Any) -> Any:
    """``value``, with an apostrophe in front when it is text a spreadsheet would read as a formula,
    and after every line break inside it."""
    if not isinstance(value, str):
        return value
    text = _LINE_BREAK.sub(lambda m: m.group(0) + "'", value)
    return "'" + text if formula_like(value) else text


def inert_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A CSV row with every cell made inert."""
    return {name: inert(value) for name, value in row.items()}
