"""`thinkloop batch items`: write a batch's per-item rows (and, for CSV, its manifest beside them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.batches.exports import item_export
from app.cli.batch_views import resolve
from app.cli.support import fail
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
        return ""
    _write(output, data, json.dumps(made.manifest, indent=2, default=str) + "\n" if fmt == "csv" else None)
    beside = f" (manifest: {sidecar(output)})" if fmt == "csv" else ""
    return f"wrote {len(made.rows)} item(s) of batch {batch.id} to {output}{beside}"


def _write(output: Path, data: bytes, manifest: str | None) -> None:
    try:
        output.write_bytes(data)
        if manifest is not None:
            sidecar(output).write_text(manifest, "utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}")
