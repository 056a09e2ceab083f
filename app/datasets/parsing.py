"""Reading problem sets: our JSONL and CSV schema, and the THiNK reference's CSV layout.

Every row is validated on its own; a bad row is reported with its line number, never dropped
silently. Rows with the same content (whitespace-normalised question and solution) are kept once.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from app.problems import ProblemInputError, content_hash, make_problem

DatasetFormat = Literal["jsonl", "csv", "think-csv"]
MAX_DATASET_BYTES = 10 * 1024 * 1024
MAX_DATASET_ROWS = 10_000
THINK_COLUMNS = ("ID", "question", "solution", "mathConcept1", "Difficulty", "Grade")
_THINK_META = ("Figure", "mathConcept1", "mathConcept2", "mathConcept3", "Difficulty", "Grade", "Resource")


class DatasetError(ValueError):
    """The file as a whole cannot be read (too large, not UTF-8, no header...)."""


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
    header = next(csv.reader(io.StringIO(text.split("\n", 1)[0])), [])
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
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            yield number, RowError(number, f"invalid JSON: {exc.msg} (column {exc.colno})")
            continue
        if not isinstance(value, dict):
            yield number, RowError(number, "expected a JSON object")
            continue
        yield number, value


def _csv(text: str, *, think: bool) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    required = THINK_COLUMNS if think else ("question",)
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


def _has_nul(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return isinstance(value, str) and "\x00" in value


def _row(line: int, record: dict[str, Any], fmt: DatasetFormat) -> DatasetRow | RowError:
    if _has_nul(record):
        return RowError(line, "the row contains a NUL (U+0000) character")
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
