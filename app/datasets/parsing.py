"""Reading problem sets: our JSONL and CSV schema, and the THiNK reference's CSV layout.

Every row is validated on its own; a bad row is reported with its line number, never dropped
silently. Rows with the same content (whitespace-normalised question and solution) are kept once.
A row the JSON parser itself refuses (nested thousands deep, a number past Python's digit limit) is
a bad row like any other, never a crash; text the database cannot hold (NUL, lone surrogates) too.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from app.problems import ProblemInputError, content_hash, make_problem
from app.text import depth, first_unstorable

DatasetFormat = Literal["jsonl", "csv", "think-csv"]
MAX_DATASET_BYTES = 10 * 1024 * 1024
MAX_DATASET_ROWS = 10_000
MAX_ROW_DEPTH = 32  # arrays and objects inside one another; a problem row needs three or four
THINK_COLUMNS = ("ID", "question", "solution", "mathConcept1", "Difficulty", "Grade")
_THINK_META = ("Figure", "mathConcept1", "mathConcept2", "mathConcept3", "Difficulty", "Grade", "Resource")


class DatasetError(ValueError):
    """The file as a whole cannot be read (too large, not UTF-8, no header...)."""


class _RowRefused(ValueError):
    """Raised while parsing one JSONL row: the row is bad for the reason given."""


@dataclass(frozen=True)
class DatasetRow:
    """A valid problem and where it came from."""

    line: int
    external_id: str | None
    question: str
    solution: str
    metadata: dict[str, str]
    content_hash: str


@dataclass(frozen=True)
class RowError:
    """A rejected row: its first line and why."""

    line: int
    message: str


MAX_LISTED_ISSUES = 100  # a hostile 10,000-row file must not make a 10,000-entry answer


def listed(rows: list[RowError]) -> list[dict[str, Any]]:
    """The first rows of a list of issues, as ``{"line", "message"}`` (what answers and rows keep)."""
    return [{"line": r.line, "message": r.message} for r in rows[:MAX_LISTED_ISSUES]]


@dataclass
class ParsedDataset:
    """What a file yielded: valid rows, rejected rows, and duplicates folded into earlier rows."""

    format: DatasetFormat
    rows: list[DatasetRow] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    duplicates: list[RowError] = field(default_factory=list)
    warnings: list[RowError] = field(default_factory=list)


def detect_format(filename: str, text: str) -> DatasetFormat:
    """By extension, and for CSV by the header: the THiNK layout has 'LaTeX question' and 'ID'."""
    if filename.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    try:
        header = next(csv.reader(io.StringIO(text.split("\n", 1)[0])), [])
    except csv.Error:  # an unreadable first line: _csv says so with its line number
        header = []
    return "think-csv" if "ID" in header and "LaTeX question" in header else "csv"


def decode(data: bytes) -> str:
    """UTF-8 text (a BOM is dropped); DatasetError when too large or not UTF-8."""
    if len(data) > MAX_DATASET_BYTES:
        raise DatasetError(f"the file is larger than {MAX_DATASET_BYTES // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"the file is not UTF-8 text (byte {exc.start})") from exc


def parse_dataset(data: bytes, filename: str, fmt: DatasetFormat | None = None) -> ParsedDataset:
    """Validate every row of a problem file."""
    text = decode(data)
    chosen = fmt or detect_format(filename, text)
    parsed = ParsedDataset(chosen)
    records = _jsonl(text) if chosen == "jsonl" else _csv(text, think=chosen == "think-csv")
    seen: dict[str, int] = {}
    questions: dict[str, int] = {}
    for line, record in records:
        if len(parsed.rows) + len(parsed.errors) + len(parsed.duplicates) >= MAX_DATASET_ROWS:
            raise DatasetError(f"more than {MAX_DATASET_ROWS} rows; split the file")
        if isinstance(record, RowError):
            parsed.errors.append(record)
            continue
        row = _row(line, record, chosen)
        if isinstance(row, RowError):
            parsed.errors.append(row)
        elif row.content_hash in seen:
            parsed.duplicates.append(RowError(line, f"same problem as line {seen[row.content_hash]}"))
        else:
            seen[row.content_hash] = line
            parsed.rows.append(row)
            parsed.warnings += _warnings(row, questions)
    return parsed


def _warnings(row: DatasetRow, questions: dict[str, int]) -> list[RowError]:
    """Kept rows that look wrong: a repeated question, or THiNK metadata in the wrong column."""
    found = []
    key = " ".join(row.question.split()).lower()
    if key in questions:
        found.append(RowError(row.line, f"same question as line {questions[key]}, with a different solution"))
    else:
        questions[key] = row.line
    grade = row.metadata.get("Grade", "")
    if "://" in grade or len(grade) > 20:
        found.append(
            RowError(row.line, "the Grade column holds a long text or a URL: columns may be shifted")
        )
    return found


def _jsonl(text: str) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    # Lines end at "\n" only: str.splitlines() would also cut at U+2028 and U+2029, which JSON
    # allows raw inside a string (and at U+0085, form feeds...), splitting one row into two bad ones.
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        value = _json_row(raw.removesuffix("\r"))
        if isinstance(value, str):
            yield number, RowError(number, value)
        elif not isinstance(value, dict):
            yield number, RowError(number, "expected a JSON object")
        else:
            yield number, value


def _json_row(raw: str) -> object:
    """A row's JSON value, or why it cannot be read (a str)."""
    try:
        value = json.loads(raw, parse_int=_integer)
    except json.JSONDecodeError as exc:
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    except _RowRefused as exc:
        return str(exc)
    except RecursionError:  # the parser's own guard, thousands of levels down
        return _TOO_DEEP
    return _TOO_DEEP if depth(value) > MAX_ROW_DEPTH else value


_TOO_DEEP = f"the row is nested too deeply (more than {MAX_ROW_DEPTH} levels of arrays and objects)"


def _integer(digits: str) -> int:
    """``int(digits)``, refusing a number past Python's int-to-text limit with a message for people."""
    limit = sys.get_int_max_str_digits()
    if limit and len(digits.lstrip("-")) > limit:
        raise _RowRefused(f"a number is longer than {limit} digits")
    return int(digits)


def _csv(text: str, *, think: bool) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        yield from _csv_records(reader, THINK_COLUMNS if think else ("question",))
    except csv.Error as exc:  # e.g. a field over the reader's limit: the reader cannot go on
        start = reader.line_num + 1  # the failed record's first line: the last one read ended before it
        raise DatasetError(f"the CSV record at line {start} cannot be read: {exc}") from exc


def _csv_records(
    reader: csv.DictReader[str], required: tuple[str, ...]
) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    missing = [c for c in required if c not in (reader.fieldnames or [])]
    if missing:
        raise DatasetError(f"the header lacks column(s): {', '.join(missing)}")
    start = 2
    for record in reader:
        if None in record:  # more cells than header columns
            yield start, RowError(start, "more cells than the header has columns")
        else:
            yield start, record
        start = reader.line_num + 1


def _row(line: int, record: dict[str, Any], fmt: DatasetFormat) -> DatasetRow | RowError:
    if (reason := first_unstorable(record)) is not None:
        return RowError(line, f"the row {reason}")
    question, solution = record.get("question"), record.get("solution") or ""
    try:
        problem = make_problem(question, solution)
    except ProblemInputError as exc:
        return RowError(line, str(exc))
    if fmt == "think-csv":
        external_id = str(record.get("ID") or "").strip() or None
        metadata = {k: str(record[k]).strip() for k in _THINK_META if record.get(k)}
    else:
        external_id = str(record["id"]) if record.get("id") not in (None, "") else None
        nested = record.get("metadata")
        if nested is not None and not isinstance(nested, dict):
            return RowError(line, "metadata must be an object")
        metadata = _metadata(record, nested or {})
    return DatasetRow(
        line,
        external_id,
        problem.question,
        problem.solution,
        metadata,
        content_hash(problem.question, problem.solution),
    )


def _metadata(record: dict[str, Any], nested: dict[str, Any]) -> dict[str, str]:
    extra = {k: v for k, v in record.items() if k not in ("id", "question", "solution", "metadata")}
    merged = {**extra, **nested}
    return {str(k): str(v) for k, v in merged.items() if v not in (None, "")}
