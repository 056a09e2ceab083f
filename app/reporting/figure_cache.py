"""The figures a batch's report draws, kept once drawn: a figure is rendered once per state of its
batch (its status and every item's status, attempts and end), so the viewer's six figures, or a
page reloaded, cost one drawing each, and a batch that moves on is drawn afresh.

In-process and bounded (least recently used out first); a cached "no data" (None) is kept too.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from threading import Lock

from app.models import Batch, BatchItem

CAPACITY = 96  # entries: 16 batches' six figures in one format


@dataclass(frozen=True)
class Cached:
    body: bytes | None  # None: the report has no data for the figure


class FigureCache:
    """Rendered figures by (batch state, name, format)."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, str, str], Cached] = OrderedDict()
        self._lock = Lock()

    @staticmethod
    def state(batch: Batch, items: Sequence[BatchItem]) -> str:
        """A digest of everything the report reads that can change: the batch's status and end,
        and each item's status, attempts and end (a rerun or resumed item changes it)."""
        digest = hashlib.sha256(f"{batch.id}|{batch.status}|{batch.finished_at}".encode())
        for item in items:
            digest.update(f"|{item.id}:{item.status}:{item.attempts}:{item.finished_at}".encode())
        return digest.hexdigest()

    def get(self, state: str, name: str, fmt: str) -> Cached | None:
        with self._lock:
            found = self._entries.get((state, name, fmt))
            if found is not None:
                self._entries.move_to_end((state, name, fmt))
            return found

    def put(self, state: str, name: str, fmt: str, body: bytes | None) -> None:
        with self._lock:
            self._entries[(state, name, fmt)] = Cached(body)
            self._entries.move_to_end((state, name, fmt))
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
