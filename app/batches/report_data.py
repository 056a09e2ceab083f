"""The units a batch report is computed from: items with typed results, grouped by problem."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from app.batches.item_result import ItemResult
from app.models import BatchItem
from graphs.scoring import SCORED_OUTCOMES, Outcome

OUTCOME_KEYS = (*(o.value for o in Outcome), "unfinished")


@dataclass(frozen=True)
class Entry:
    """One item with its parsed result (None until it finishes, or when it failed before running)."""

    item: BatchItem
    result: ItemResult | None

    @property
    def scored(self) -> bool:
        """The item is the model's pass or failure."""
        return self.item.outcome in SCORED_OUTCOMES and self.result is not None


def entries_of(items: Sequence[BatchItem]) -> list[Entry]:
    """Items with their typed results."""
    return [Entry(i, ItemResult.model_validate(i.result) if i.result else None) for i in items]


def by_problem(entries: Sequence[Entry]) -> dict[str, list[ItemResult]]:
    """Scored results grouped by problem, in item order."""
    out: dict[str, list[ItemResult]] = {}
    for entry in entries:
        if entry.scored and entry.result is not None:
            out.setdefault(entry.item.problem_id, []).append(entry.result)
    return out


def problem_pass(results: Sequence[ItemResult]) -> float:
    """A problem's pass share over its scored repeats."""
    return fmean(1.0 if r.metrics["passed"] else 0.0 for r in results)


def problem_quality(results: Sequence[ItemResult]) -> float | None:
    """A problem's mean final AvgQualityScore (0-100) over its scored repeats."""
    values = [r.metrics["avg_quality_final"] for r in results if r.metrics["avg_quality_final"] is not None]
    return fmean(values) if values else None
