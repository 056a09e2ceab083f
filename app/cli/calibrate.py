"""`thinkloop judges calibrate`: the acceptance threshold that guarantees a false-accept bound."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.records import DEFAULT_PROJECT
from app.cli.support import MODELS_FILE_HELP, err, fail, registry_from


def judges_calibrate(
    dataset: Annotated[
        list[Path] | None,
        typer.Option(help="Labelled JSONL (default: the set shipped with thinkloop); repeat it for several"),
    ] = None,
    alpha: Annotated[
        float, typer.Option(help="The false accepts allowed among auto-accepted versions")
    ] = 0.05,
    delta: Annotated[float, typer.Option(help="The chance allowed that the bound does not hold")] = 0.1,
    judge_model: Annotated[
        str | None, typer.Option(help="The panel to calibrate (default: settings)")
    ] = None,
    split: Annotated[str, typer.Option(help="tune | heldout | all")] = "heldout",
    policy: Annotated[str, typer.Option(help="default | think-paper")] = "default",
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
    fmt: Annotated[str, typer.Option("--format", help="md | json")] = "md",
    save: Annotated[
        bool,
        typer.Option(
            help="Save the bench as a validity record of this exact panel (as `judges validate --save`) "
            "with the threshold and its coverage: runs with a guarantee target escalate below it"
        ),
    ] = False,
    project: Annotated[str, typer.Option(help="The project (id or name) the saved record belongs to")] = (
        DEFAULT_PROJECT
    ),
) -> None:
    """Find the least strict Q threshold at which the panel's false accepts among the versions it
    accepts itself are ≤ α with confidence 1 − δ (fixed-sequence Clopper–Pearson tests, strict to
    lenient), and the coverage it keeps: the share of sound versions still accepted. Below it, an
    acceptance is escalated (a stronger panel, then a person)."""
    from agents.labelled.labels import LabelsError
    from agents.llm.models import ModelConfigError, UnknownModelError
    from app.cli.judges import _owner, _preflight, _sets, _validate
    from app.logging import configure_logging
    from app.panels import panel_factory
    from app.settings import get_settings
    from app.validity.service import select_split

    if fmt not in ("md", "json") or split not in ("tune", "heldout", "all"):
        fail("--format is md or json; --split is tune, heldout or all")
    if not (0 < alpha < 1 and 0 < delta < 1):
        fail("--alpha and --delta lie strictly between 0 and 1")
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    try:
        items, name, digest, _hashes = _sets(dataset or [])
        chosen = select_split(items, split, name if dataset else "the shipped set")
    except LabelsError as exc:
        fail(str(exc))
    owner = DEFAULT_PROJECT
    if save:
        name = _preflight(items, chosen, name, digest)
        owner = _owner(project)
    factory = panel_factory(settings, registry_from(settings, models_file))
    judge = judge_model or settings.judge_model
    try:
        report = asyncio.run(_validate(settings, factory, chosen, judge, policy, False, None, (alpha, delta)))
    except (UnknownModelError, ModelConfigError, ValueError) as exc:
        fail(str(exc))
    refused = _save(factory, report, items, name, digest, settings.specificity_floor, owner) if save else None
    typer.echo(
        json.dumps(report["calibration"] | {"record": report["record"]}, indent=2)
        if fmt == "json"
        else to_text(report)
    )
    if refused:
        fail(refused, code=1)


def to_text(report: dict[str, Any]) -> str:
    """The guarantee beside the coverage it costs, as the paper reports them."""
    c = report["calibration"]
    lines = [
        f"# Acceptance with a guarantee: `{report['judge_model']}` ({report['policy']} policy, {c['split']})",
        "",
        f"Target: false accepts ≤ {100 * c['alpha']:.1f} % among the versions the panel accepts itself, "
        f"with confidence {100 * (1 - c['delta']):.0f} %. {c['flawed']} flawed and {c['sound']} sound "
        f"versions judged; {c['tested']} threshold(s) tested, strict to lenient.",
        "",
        "| threshold (Q ≥) | guaranteed false accepts (≤) | coverage (sound accepted) | auto-accepted "
        "| flawed among them |",
        "|---|---|---|---|---|",
    ]
    if c["threshold"] is None:
        lines.append("| none | — | 0.0 % | 0 | 0 |")
        lines += ["", "No threshold meets the target on this set: every acceptance is escalated."]
    else:
        lines.append(
            f"| {c['threshold']:.2f} | {100 * c['guaranteed']:.1f} % | {100 * c['coverage']:.1f} % "
            f"| {c['accepted']} | {c['flawed_accepted']} |"
        )
    return "\n".join(lines) + "\n"


def _save(
    factory: Any,
    report: dict[str, Any],
    items: list[Any],
    set_name: str,
    digest: str,
    floor: float,
    project: str,
) -> str | None:
    """Store the bench as a validity record with its calibration; why not, when it is no measurement."""
    from app.cli.support import in_session
    from app.validity.records import NotRecordable, save_report

    async def work(session: Any) -> Any:
        record = await save_report(
            session, factory.registry, report, items, set_name, project, digest=digest, floor=floor
        )
        record.calibration = report["calibration"]
        report["record"]["calibration"] = report["calibration"]
        return record

    try:
        record = asyncio.run(in_session(work))
    except NotRecordable as exc:
        return str(exc)
    threshold = report["calibration"]["threshold"]
    err.print(
        f"saved validity record {record.id} of panel {record.panel_id} with its calibration "
        f"(threshold {'none' if threshold is None else f'{threshold:.2f}'})",
        markup=False,
        highlight=False,
    )
    return None
