"""The repair bench: run the loop on every flawed problem of a labelled set that has a corrected
version, with a given reviser, and classify each finished run (:mod:`agents.labelled.repair`).

Each problem is one run of the whole loop (judge, revise, judge again … until it passes or its
rounds run out), driven as every run is. What comes back is measured against the item's answer key:
repaired, accepted but wrong, givens changed, unverified, gave up — or undecided (the run ended in
no verdict of the panel), which is counted apart and enters no rate.

Rates are shares of the decided runs, each with its Wilson 95 % interval and n
(:func:`graphs.analysis.validity_metrics.share`), per reviser model, per reviser and flaw type.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from agents.labelled.labels import LabelledItem
from agents.labelled.repair import VERDICTS, Repair, RepairKey, classify
from agents.schemas import Problem
from graphs.analysis.validity_metrics import share
from graphs.result import RunResult

log = structlog.get_logger(__name__)

Drive = Callable[[Problem], Awaitable[RunResult]]
# The headline rates, each a share of the decided runs.
RATES = ("repaired", "accepted_but_wrong", "gave_up")


@dataclass(frozen=True)
class RepairRun:
    """One flawed problem's run with one reviser, classified against its answer key."""

    item: str
    split: str
    flaw_type: str
    reviser: str
    outcome: str
    rounds: int
    repair: Repair
    final: Problem
    stop_reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The run as JSON: what ``--json`` prints per problem."""
        return {
            "item": self.item,
            "split": self.split,
            "flaw_type": self.flaw_type,
            "reviser": self.reviser,
            "outcome": self.outcome,
            "rounds": self.rounds,
            "verdict": self.repair.verdict,
            "answer": self.repair.answer,
            "reasons": list(self.repair.reasons),
            "stop_reason": self.stop_reason,
            "final": self.final.model_dump(),
        }


def keyed(items: Sequence[LabelledItem]) -> tuple[list[tuple[LabelledItem, RepairKey]], list[str]]:
    """The flawed items a repair can be checked on (each with its key), and the ids of the flawed
    items that have no key (no corrected version, or none whose answer can be read)."""
    measured: list[tuple[LabelledItem, RepairKey]] = []
    unkeyed: list[str] = []
    for item in items:
        if item.kind != "flawed":
            continue
        key = RepairKey.of_item(item)
        if key is None:
            unkeyed.append(item.id)
        else:
            measured.append((item, key))
    return measured, unkeyed


def classify_result(key: RepairKey, result: RunResult) -> Repair:
    """A finished run classified against ``key``: its outcome and its last judged version."""
    return classify(key, str(result.outcome), result.final)


async def repair_bench(
    items: Sequence[LabelledItem], drive: Drive, reviser: str, *, concurrency: int = 4
) -> list[RepairRun]:
    """Run the loop (``drive``) on every keyed flawed item, ``concurrency`` at a time, and classify
    each run. A run that raised is that problem's undecided run, never the bench's crash."""
    slots = asyncio.Semaphore(concurrency)

    async def one(item: LabelledItem, key: RepairKey) -> RepairRun:
        async with slots:
            try:
                result = await drive(item.problem)
            except Exception as exc:
                log.exception("repair.run_failed", item=item.id)
                failed = Repair("undecided", (f"the run failed: {type(exc).__name__}: {exc}",))
                return RepairRun(
                    item.id, item.split, item.flaw_type, reviser, "error", 0, failed, item.problem
                )
        return RepairRun(
            item.id,
            item.split,
            item.flaw_type,
            reviser,
            str(result.outcome),
            len(result.rounds),
            classify_result(key, result),
            result.final,
            result.stop_reason,
        )

    measured, _ = keyed(items)
    return list(await asyncio.gather(*(one(item, key) for item, key in measured)))


def figures(runs: Sequence[RepairRun]) -> dict[str, Any]:
    """Counts by verdict, and each headline rate as a share of the decided runs (n, count, rate,
    Wilson 95 % low and high; ``excluded``: the undecided runs)."""
    decided = [r for r in runs if r.repair.decided]
    excluded = len(runs) - len(decided)
    counts = {verdict: sum(r.repair.verdict == verdict for r in runs) for verdict in VERDICTS}
    rates = {name: share([r.repair.verdict == name for r in decided], excluded) for name in RATES}
    return {"runs": len(runs), "decided": len(decided), "counts": counts, **rates}


def summarise(runs: Sequence[RepairRun]) -> dict[str, Any]:
    """Figures per reviser model, and per reviser and flaw type (flaw types in name order)."""
    revisers = sorted({r.reviser for r in runs})
    out: dict[str, Any] = {}
    for reviser in revisers:
        mine = [r for r in runs if r.reviser == reviser]
        flaws = sorted({r.flaw_type for r in mine})
        out[reviser] = {
            "overall": figures(mine),
            "by_flaw": {flaw: figures([r for r in mine if r.flaw_type == flaw]) for flaw in flaws},
        }
    return out
