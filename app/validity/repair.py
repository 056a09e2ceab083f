"""Running the repair bench for the CLI and the bench script: the loop on every flawed problem of a
labelled set that has a corrected version, each run driven as the service drives one (its callers
pass ``app.runs.temporary.TemporaryRuns``: its executor on a temporary store, nothing kept but the
report)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from agents.identity import PanelIdentity
from agents.labelled.labels import LabelledItem
from agents.llm.models import ModelRegistry
from agents.panel import PanelFactory
from agents.schemas import Problem
from app.models import DEFAULT_PROJECT, RepairRecord
from app.panels import build_context
from app.validity.records import NotRecordable, bench_identity
from app.validity.service import Runs
from graphs.benches.repair import keyed, repair_bench, summarise
from graphs.context import RunContext
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
    # every context built (and so every model checked) before any run
    contexts = {reviser: build_context(factory, judge_model, reviser, scoring) for reviser in revisers}
    runs = []
    reported: set[str] = set()  # the model ids the judge endpoint reported: a saved record needs one
    for reviser, context in contexts.items():

        async def drive(problem: Problem, context: RunContext = context, model: str = reviser) -> RunResult:
            result = await store.run(problem, context, model=model, judge_model=judge_model)
            reported.update(_reported(result))
            return result

        runs += await repair_bench(items, drive, reviser, concurrency=concurrency)
    measured, unkeyed = keyed(items)
    return {
        "judge_model": judge_model,
        "screen": contexts[revisers[0]].screen if revisers else True,
        "revisers": list(revisers),
        "policy": policy,
        "max_rounds": scoring.max_rounds,
        "problems": len(measured),
        "unkeyed": unkeyed,
        "reported_models": sorted(reported),
        "figures": summarise(runs),
        "runs": [run.as_dict() for run in runs],
    }


def _reported(result: RunResult) -> set[str]:
    """The model ids the judge and solver calls of ``result``'s rounds reported."""
    found: set[str] = set()
    for judged in result.rounds:
        calls = [o.reported_model for o in judged.outcomes]
        calls += [judged.solver.reported_model] if judged.solver is not None else []
        found.update(model for model in calls if model is not None)
    return found


async def save_repairs(
    session: AsyncSession,
    registry: ModelRegistry,
    report: Mapping[str, Any],
    named: tuple[str, str],
    project_id: str = DEFAULT_PROJECT,
) -> list[RepairRecord]:
    """Store the repair figures of each reviser in ``report`` (over the set ``named``: its name and
    hash) as repair records of the judging panel's identity, for GET /v1/panels. NotRecordable
    (nothing stored) when a run ended in error, or the endpoint reported no model id or several."""
    errored = sum(run["outcome"] == "error" for run in report["runs"])
    if errored:
        raise NotRecordable(
            f"{errored} run(s) ended in error: a failure is not a measurement, so no repair record was saved"
        )
    identity = bench_identity(registry, report)
    rows = [_row(identity, report, reviser, named, project_id) for reviser in report["figures"]]
    session.add_all(rows)
    await session.flush()
    return rows


def _row(
    identity: PanelIdentity, report: Mapping[str, Any], reviser: str, named: tuple[str, str], project_id: str
) -> RepairRecord:
    overall = report["figures"][reviser]["overall"]
    return RepairRecord(
        project_id=project_id,
        panel_id=identity.id,
        identity=identity.parts(),
        judge_model=identity.judge_model,
        reviser=reviser,
        set_name=named[0],
        set_hash=named[1],
        split=report["split"],
        max_rounds=report["max_rounds"],
        runs=overall["runs"],
        decided=overall["decided"],
        repaired=overall["repaired"],
        accepted_but_wrong=overall["accepted_but_wrong"],
        gave_up=overall["gave_up"],
        counts=overall["counts"],
    )
