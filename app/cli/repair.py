"""`thinkloop judges repair`: how often a reviser repairs a flawed problem, verified."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli.support import MODELS_FILE_HELP, fail, registry_from

if TYPE_CHECKING:
    from agents.labelled.labels import LabelledItem
    from agents.panel import PanelFactory
    from app.settings import Settings

OFFLINE = "rubric"  # agents.llm.models.OFFLINE_MODEL, without loading the model stack for --help


def judges_repair(
    dataset: Annotated[
        Path | None, typer.Option(help="Labelled JSONL (default: the set shipped with thinkloop)")
    ] = None,
    split: Annotated[str, typer.Option(help="tune | heldout | all")] = "heldout",
    reviser: Annotated[
        list[str] | None,
        typer.Option(help="The reviser (model under test) to measure; repeat for several (default: offline)"),
    ] = None,
    judge_model: Annotated[str | None, typer.Option(help="The panel that judges (default: settings)")] = None,
    policy: Annotated[str, typer.Option(help="default | think-paper")] = "default",
    max_rounds: Annotated[int | None, typer.Option(min=1, max=20, help="Evaluations at most")] = None,
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Runs at a time")] = 4,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
    save: Annotated[
        bool,
        typer.Option(
            help="Save each reviser's repaired / accepted but wrong / gave up figures as a repair record "
            "of the judging panel in --project (GET /v1/panels shows the latest per reviser); refused "
            "when a run ended in error"
        ),
    ] = False,
    project: Annotated[
        str, typer.Option(help="The project (id or name) a saved repair record belongs to")
    ] = "default",
) -> None:
    """Run the loop on every flawed problem of a labelled set that has a corrected version, and count
    it repaired only when the final version passed the panel, the verifier checked its chain, its
    answer is the corrected version's, its givens are the original's or the correction's, and it is
    not the flawed original unrevised. Prints repaired, accepted but wrong and gave up with n and
    Wilson 95 % intervals, per reviser and per flaw type. Exits 1 when a run ended in error (after
    printing the report)."""
    from agents.labelled.labels import LabelsError, read_labelled
    from agents.llm.models import ModelConfigError, UnknownModelError
    from app.logging import configure_logging
    from app.panels import panel_factory
    from app.reporting.repair import to_markdown
    from app.settings import get_settings
    from app.validity.service import builtin_set, select_split

    if split not in ("tune", "heldout", "all"):
        fail("--split is tune, heldout or all")
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    source = str(dataset or "the shipped set")
    try:
        chosen = select_split(read_labelled(dataset) if dataset else builtin_set(), split, source)
    except LabelsError as exc:
        fail(str(exc))
    revisers = list(dict.fromkeys(reviser or [OFFLINE]))
    factory = panel_factory(settings, registry_from(settings, models_file, tuple(revisers)))
    judge = judge_model or settings.judge_model
    try:
        report = asyncio.run(
            _measure(settings, factory, chosen, revisers, judge, policy, max_rounds, concurrency)
        )
    except (UnknownModelError, ModelConfigError, ValueError) as exc:
        fail(str(exc))
    report = {"set": dataset.name if dataset else "shipped", "split": split, **report}
    typer.echo(json.dumps(report, indent=2) if as_json else to_markdown(report))
    errored = sum(run["outcome"] == "error" for run in report["runs"])
    if errored:  # a failure is not a measurement: the figures are incomplete (and nothing is saved)
        fail(f"{errored} run(s) ended in error: the figures exclude them", code=1)
    if save:
        _save(factory, report, dataset, project)


def _save(factory: PanelFactory, report: dict[str, Any], dataset: Path | None, project: str) -> None:
    """Store each reviser's figures as a repair record of ``project``; exit 1 with why if not."""
    from agents.labelled.canonical import CanonicalError, file_hash
    from app.cli.support import err, in_session
    from app.projects.keys import ProjectError, find_project
    from app.validity.provenance import shipped_hash
    from app.validity.records import NotRecordable
    from app.validity.repair import save_repairs

    try:
        digest = file_hash(dataset) if dataset else shipped_hash()
    except CanonicalError as exc:
        fail(str(exc), code=1)

    async def work(session: Any) -> Any:
        owner = (await find_project(session, project)).id
        return await save_repairs(session, factory.registry, report, (report["set"], digest), owner)

    try:
        rows = asyncio.run(in_session(work))
    except (NotRecordable, ProjectError) as exc:
        fail(str(exc), code=1)
    for row in rows:
        err.print(
            f"saved repair record {row.id} of panel {row.panel_id} (reviser {row.reviser}, {row.decided} "
            f"decided; set {row.set_name}, sha256 {row.set_hash[:12]})",
            markup=False,
            highlight=False,
        )


async def _measure(
    settings: Settings,
    factory: PanelFactory,
    items: list[LabelledItem],
    revisers: list[str],
    judge: str,
    policy: str,
    max_rounds: int | None,
    concurrency: int,
) -> dict[str, Any]:
    """The bench on a temporary store, the factory's connections closed after it."""
    from app.runs.temporary import temporary_runs
    from app.validity.repair import measure_repairs

    async with factory, temporary_runs(settings, factory) as store:
        return await measure_repairs(
            factory,
            items,
            store,
            revisers=revisers,
            judge_model=judge,
            policy=policy,
            max_rounds=max_rounds,
            concurrency=concurrency,
        )
