"""A batch's per-item rows as JSONL, CSV or Parquet, each carrying the batch's manifest:

- JSONL: the first line is ``{"manifest": {...}}``; every other line is one item.
- Parquet: the manifest is the file's schema metadata, key ``thinkloop.manifest`` (JSON).
- CSV: rows only; the manifest goes beside it (``FILE.manifest.json`` from the CLI; over HTTP at
  ``/v1/batches/{id}/manifest``, named by the response's ``Link`` header).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from app.reporting.cells import CSV_LINE_END, inert_row
from app.reporting.item_rows import FLOAT_COLUMNS, INTEGER_COLUMNS, ITEM_COLUMNS

ITEM_FORMATS = ("jsonl", "csv", "parquet")
MEDIA_TYPES = {
    "jsonl": "application/jsonl",
    "csv": "text/csv; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}
PARQUET_MANIFEST_KEY = b"thinkloop.manifest"
TIME_COLUMNS = frozenset({"started_at", "finished_at"})


def export_items(rows: Sequence[dict[str, Any]], manifest: dict[str, Any], fmt: str) -> bytes:
    """The rows in ``fmt`` (one of ``ITEM_FORMATS``), with the manifest where that format keeps it."""
    if fmt == "jsonl":
        return to_jsonl(rows, manifest)
    if fmt == "csv":
        return to_csv(rows)
    if fmt == "parquet":
        return to_parquet(rows, manifest)
    raise ValueError(f"unknown format {fmt!r}; choose {', '.join(ITEM_FORMATS)}")


def to_jsonl(rows: Sequence[dict[str, Any]], manifest: dict[str, Any]) -> bytes:
    """The manifest line, then one line per item."""
    lines = [json.dumps({"manifest": manifest}, ensure_ascii=False, default=str)]
    lines += [json.dumps(row, ensure_ascii=False) for row in rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


def to_csv(rows: Sequence[dict[str, Any]]) -> bytes:
    """A header of ``ITEM_COLUMNS`` and one line per item; an empty cell is a missing value, and a
    text cell a spreadsheet would run as a formula starts with an apostrophe (``cells.inert``)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=ITEM_COLUMNS, lineterminator=CSV_LINE_END)
    writer.writeheader()
    writer.writerows(inert_row(row) for row in rows)
    return buffer.getvalue().encode("utf-8")


def to_parquet(rows: Sequence[dict[str, Any]], manifest: dict[str, Any]) -> bytes:
    """One typed column per field (integers, floats, a boolean ``passed``, UTC timestamps, strings),
    the manifest in the schema metadata. pyarrow loads only here."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    fields, arrays = [], []
    for name in ITEM_COLUMNS:
        values = [row[name] for row in rows]
        kind = _arrow_type(pa, name)
        if name in TIME_COLUMNS:
            values = [datetime.fromisoformat(v) if v else None for v in values]
        fields.append(pa.field(name, kind))
        arrays.append(pa.array(values, type=kind))
    metadata = {PARQUET_MANIFEST_KEY: json.dumps(manifest, default=str).encode("utf-8")}
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=metadata))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def _arrow_type(pa: Any, name: str) -> Any:
    if name in INTEGER_COLUMNS:
        return pa.int64()
    if name in FLOAT_COLUMNS:
        return pa.float64()
    if name == "passed":
        return pa.bool_()
    if name in TIME_COLUMNS:
        return pa.timestamp("us", tz="UTC")
    return pa.string()
