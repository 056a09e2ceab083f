"""Running the repair bench for the CLI and the bench script: the loop on every flawed problem of a
labelled set that has a corrected version, each run driven as the service drives one (its callers
pass ``app.runs.temporary.TemporaryRuns``: its executor on a temporary store, nothing kept but the
report)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.panel import PanelFactory
from agents.schemas import Problem
from agents.validity.labels import LabelledItem
from app.validity.service import Runs
from graphs.context import RunContext
from graphs.repair import keyed, repair_bench, summarise
from graphs.result import RunResult
from graphs.scoring import get_policy


async def measure_repairs(
    factory: PanelFactory,
    items: Sequence[LabelledItem],
    store: Runs,
    *,
    revisers: Sequence[str],
    judge_model: str,
    policy: str = "default",
    max_rounds: int | None = None,
    concurrency: int = 4,
) -> dict[str, Any]:
    """Run the loop on every keyed flawed item once per reviser in ``revisers``, judged by
    ``judge_model``'s panel under ``policy``; the figures per reviser and flaw type, and every run.
    UnknownModelError / ModelConfigError / ValueError when a model or the policy is unusable."""
    scoring = get_policy(policy, **({"max_rounds": max_rounds} if max_rounds else {}))
    panels = {reviser: factory.build(judge_model, reviser) for reviser in revisers}  # fail before any run
    runs = []
    for reviser, panel in panels.items():
        context = RunContext.of(panel, scoring)

        async def drive(problem: Problem, context: RunContext = context, model: str = reviser) -> RunResult:
            return await store.run(problem, context, model=model, judge_model=judge_model)

        runs += await repair_bench(items, drive, reviser, concurrency=concurrency)
    measured, unkeyed = keyed(items)
    return {
        "judge_model": judge_model,
        "screen": panels[revisers[0]].screen if revisers else True,
        "revisers": list(revisers),
        "policy": policy,
        "max_rounds": scoring.max_rounds,
        "problems": len(measured),
        "unkeyed": unkeyed,
        "figures": summarise(runs),
        "runs": [run.as_dict() for run in runs],
    }
