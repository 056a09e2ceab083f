"""The units a batch report is computed from: items with typed results, grouped by problem."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from agents.labelled.repair import RepairKey
from agents.outcome import SCORED_OUTCOMES, Outcome
from app.models import BatchItem
from app.reporting.answer_keys import answer_keys
from app.reporting.item_result import ItemResult, item_results
from graphs.analysis.statistics import wilson_interval

OUTCOME_KEYS = (*(o.value for o in Outcome), "unfinished")


@dataclass(frozen=True)
class Entry:
    """One item with its parsed result (None until it finishes, or when it failed before running)."""

    item: BatchItem
    result: ItemResult | None
    key: RepairKey | None = None  # its dataset row's answer key (app.reporting.answer_keys), if any

    @property
    def scored(self) -> bool:
        """The item is the model's pass or failure."""
        return self.item.outcome in SCORED_OUTCOMES and self.result is not None


async def load_entries(session: AsyncSession, items: Sequence[BatchItem]) -> list[Entry]:
    """Items with their typed results, read from their runs' rows (``item_results``), and the
    answer key each one's dataset row carries."""
    results = await item_results(session, items)
    keys = await answer_keys(session, items)
    return [Entry(i, results.get(i.id) if i.id is not None else None, keys.get(i.problem_id)) for i in items]


def by_problem(entries: Sequence[Entry]) -> dict[str, list[ItemResult]]:
    """Scored results grouped by problem, in item order."""
    out: dict[str, list[ItemResult]] = {}
    for entry in entries:
        if entry.scored and entry.result is not None:
            out.setdefault(entry.item.problem_id, []).append(entry.result)
    return out


def problem_pass(results: Sequence[ItemResult]) -> float:
    """A problem's pass share over its scored repeats."""
    return fmean(1.0 if r.figures["passed"] else 0.0 for r in results)


def problem_quality(results: Sequence[ItemResult]) -> float | None:
    """A problem's mean final AvgQualityScore (0-1) over its scored repeats."""
    values = [r.figures["avg_quality_final"] for r in results if r.figures["avg_quality_final"] is not None]
    return fmean(values) if values else None


def outcome_counts(entries: Sequence[Entry]) -> dict[str, int]:
    """Items by outcome ('unfinished' until they end), and the total."""
    counts = Counter(e.item.outcome or "unfinished" for e in entries)
    return {key: counts.get(key, 0) for key in OUTCOME_KEYS} | {"total": len(entries)}


def pass_summary(problems: dict[str, list[ItemResult]]) -> dict[str, Any]:
    """Scored items and problems, and the pass rate over problems with its Wilson 95% interval."""
    shares = [problem_pass(results) for results in problems.values()]
    return {
        "scored_items": sum(len(results) for results in problems.values()),
        "problems": len(problems),
        "pass_rate": fmean(shares) if shares else None,
        "pass_rate_ci95": wilson_interval(sum(shares), len(shares)),
    }
