"""A batch's items as a file (JSONL, CSV or Parquet) with its manifest: what the API's export route
and `thinkloop batch items` both return."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.batches import repository as repo
from app.datasets import repository as datasets_repo
from app.models import Batch
from app.reporting.item_export import export_items
from app.reporting.item_result import item_results
from app.reporting.item_rows import item_rows
from app.reporting.manifest import complete_manifest, served_by


@dataclass(frozen=True)
class ItemExport:
    """The rows, the manifest, and how many items there are."""

    rows: list[dict[str, Any]]
    manifest: dict[str, Any]

    def render(self, fmt: str) -> bytes:
        """The file's bytes in ``fmt`` (jsonl, csv or parquet)."""
        return export_items(self.rows, self.manifest, fmt)


async def item_export(session: AsyncSession, batch: Batch) -> ItemExport:
    """Every item of the batch as a row, in item order, and the batch's completed manifest."""
    items = await repo.items(session, batch.id)
    external = await repo.external_ids(session, batch.dataset_id)
    flaws = await datasets_repo.flaw_labels(session, batch.dataset_id)
    results = await item_results(session, items)
    manifest = complete_manifest(batch, items, await served_by(session, items))
    return ItemExport(item_rows(items, results, external, flaws), manifest)
