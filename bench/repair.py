"""The repair bench: how often a reviser repairs a flawed problem, verified against its answer key.

For every flawed problem of a labelled set that has a corrected version, the whole loop runs once
per reviser (judge, revise, judge again … until the panel passes a version or the rounds run out),
each run driven by the service's executor on a temporary store. A run counts as **repaired** only
when its final version passed the panel, the verifier checked its chain, its answer equals the
corrected version's (after converting units) and its givens are the original's or the correction's
(``agents.labelled.repair``). Printed per reviser, overall and per flaw type: repaired, accepted but
wrong and gave up with n and Wilson 95 % intervals (the same report as ``thinkloop judges repair``).

    uv run --frozen python bench/repair.py                       # offline reviser, shipped held-out split
    uv run --frozen python bench/repair.py --reviser rubric --reviser mymodel --models-file models.toml
    uv run --frozen python bench/repair.py --split all --json

Offline (reviser and judges both the offline panel) it takes about 15 s on the project's 2-core
machine for the 174 keyed held-out problems.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from agents.labelled.labels import read_labelled
from app.logging import configure_logging
from app.panels import load_registry, panel_factory
from app.reporting.repair import to_markdown
from app.runs.temporary import temporary_runs
from app.settings import get_settings
from app.validity.repair import measure_repairs
from app.validity.service import builtin_set, select_split


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    settings = get_settings()
    configure_logging("WARNING", False)
    items = read_labelled(args.dataset) if args.dataset else builtin_set()
    chosen = select_split(items, args.split, str(args.dataset or "the shipped set"))
    factory = panel_factory(settings, load_registry(settings, args.models_file))
    async with factory, temporary_runs(settings, factory) as store:
        report = await measure_repairs(
            factory,
            chosen,
            store,
            revisers=args.reviser or ["rubric"],
            judge_model=args.judge_model or settings.judge_model,
            max_rounds=args.max_rounds,
            concurrency=args.concurrency,
        )
    return {"set": args.dataset.name if args.dataset else "shipped", "split": args.split, **report}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, help="labelled JSONL (default: the shipped set)")
    parser.add_argument("--split", default="heldout", choices=("tune", "heldout", "all"))
    parser.add_argument("--reviser", action="append", help="a reviser to measure (repeat; default: rubric)")
    parser.add_argument("--judge-model", help="the panel that judges (default: settings)")
    parser.add_argument("--models-file", type=Path, help="TOML model registry")
    parser.add_argument("--max-rounds", type=int)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    start = time.perf_counter()
    report = asyncio.run(measure(args))
    print(json.dumps(report, indent=2) if args.json else to_markdown(report))
    print(f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
