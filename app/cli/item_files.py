"""`thinkloop batch items|report`: write a batch's per-item rows or its report to a file (for CSV,
its manifest beside it as FILE.manifest.json), or to stdout (for CSV, a note on stderr saying where
the manifest is)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.batches.exports import item_export
from app.cli.batch_views import resolve
from app.cli.support import err, fail
from app.db import short_session


def sidecar(output: Path) -> Path:
    """Where a CSV export's manifest goes: ``FILE.manifest.json``."""
    return output.with_name(output.name + ".manifest.json")


async def export(
    sessions: async_sessionmaker[AsyncSession], given: str, fmt: str, output: Path | None
) -> str:
    """Write the export to ``output`` (or stdout); what was written, in a line."""
    async with short_session(sessions) as session:
        batch = await resolve(session, given)
        made = await item_export(session, batch)
    data = made.render(fmt)
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        if fmt == "csv":
            note_no_manifest(f"thinkloop batch items {batch.id[:12]} --format csv -o FILE", "jsonl")
        return ""
    _write(output, data, json.dumps(made.manifest, indent=2, default=str) + "\n" if fmt == "csv" else None)
    beside = f" (manifest: {sidecar(output)})" if fmt == "csv" else ""
    return f"wrote {len(made.rows)} item(s) of batch {batch.id} to {output}{beside}"


def note_no_manifest(with_output: str, carrying: str) -> None:
    """Say on stderr where the manifest is when CSV went to stdout (a CSV cannot carry it)."""
    err.print(
        f"note: CSV on stdout has no manifest. `{with_output}` writes it beside the file as "
        f"FILE.manifest.json; `--format {carrying}` carries it; GET /v1/batches/{{id}}/manifest serves it.",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def write_report(text: str, fmt: str, output: Path, manifest: dict[str, object] | None) -> str:
    """Write a report to ``output`` (a CSV with its manifest beside it); what was written, in a line."""
    extra = json.dumps(manifest or {}, indent=2, default=str) + "\n" if fmt == "csv" else None
    _write(output, text.encode(), extra)
    beside = f" (manifest: {sidecar(output)})" if fmt == "csv" else ""
    return f"wrote the report to {output}{beside}"


def _write(output: Path, data: bytes, manifest: str | None) -> None:
    try:
        output.write_bytes(data)
        if manifest is not None:
            sidecar(output).write_text(manifest, "utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}")
