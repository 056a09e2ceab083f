"""`thinkloop judges validate`: how well a judge panel catches labelled flaws."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli.records import DEFAULT_PROJECT, records_cli
from app.cli.repair import judges_repair
from app.cli.support import MODELS_FILE_HELP, err, fail, registry_from

if TYPE_CHECKING:
    from agents.panel import PanelFactory
    from app.settings import Settings

judges_cli = typer.Typer(help="Measure how well a judge panel catches real flaws.", no_args_is_help=True)
judges_cli.add_typer(records_cli, name="records")
judges_cli.command("repair")(judges_repair)


@judges_cli.command("validate")
def judges_validate(
    dataset: Annotated[
        list[Path] | None,
        typer.Option(
            help="Labelled JSONL (default: the set shipped with thinkloop); repeat it to judge several "
            "sets at once, with figures per source (`shipped` names the shipped set)"
        ),
    ] = None,
    judge_model: Annotated[str | None, typer.Option(help="The panel to measure (default: settings)")] = None,
    model_under_test: Annotated[
        str | None,
        typer.Option(
            help="The model whose versions the panel will judge (default: settings): a warning when "
            "the judge model is it, or of its family (self-preference)"
        ),
    ] = None,
    twins: Annotated[bool, typer.Option(help="Also judge adversarial twins and paraphrases")] = False,
    split: Annotated[str, typer.Option(help="tune | heldout | all")] = "all",
    policy: Annotated[str, typer.Option(help="default | think-paper")] = "default",
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
    fmt: Annotated[str, typer.Option("--format", help="md | json | html")] = "md",
    check: Annotated[
        bool, typer.Option(help="Exit 1 unless the targets are claimed (held out, n >= 60) and met")
    ] = False,
    save: Annotated[
        bool,
        typer.Option(
            help="Save the held-out split's figures as a validity record of this exact panel in "
            "--project (that project's accepted runs may cite it as their warrant); refused when any "
            "version did not end in a verdict, no held-out problem was judged, fewer than 20 sound "
            "versions were or too few of them passed (THINKLOOP_SPECIFICITY_FLOOR), the labels "
            "contradict themselves, or the file claims the shipped set's name with other content"
        ),
    ] = False,
    project: Annotated[
        str, typer.Option(help="The project (id or name) the saved record belongs to: only its runs cite it")
    ] = DEFAULT_PROJECT,
    rules: Annotated[
        bool,
        typer.Option(
            "--rules",
            help="Print each rule of the offline screen's firings and precision on the set's flawed and "
            "sound versions (no judge is called)",
        ),
    ] = False,
    review_set: Annotated[
        str | None,
        typer.Option(
            "--review-set",
            help="Measure on this project's review set (its teachers' decisions, in the configured "
            "database) in place of a file; --save saves the record in that project",
        ),
    ] = None,
) -> None:
    """Judge every version of a labelled set once: detection, false accepts, specificity, κ per
    judge, calibration and the adversarial gap, per split, each rate with n and its Wilson 95 %
    interval. Exits 1 when any version errored or stayed undecided (after printing the report)."""
    from agents.labelled.labels import LabelsError
    from agents.llm.models import ModelConfigError, UnknownModelError
    from app.logging import configure_logging
    from app.panels import panel_factory
    from app.settings import get_settings
    from app.validity.report import to_html, to_markdown
    from app.validity.service import select_split

    if fmt not in ("md", "json", "html") or split not in ("tune", "heldout", "all"):
        fail("--format is md, json or html; --split is tune, heldout or all")
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    if review_set is not None and dataset:
        fail("--review-set and --dataset name two sets: give one")
    if review_set is not None and project not in (DEFAULT_PROJECT, review_set):
        fail(
            "a review set's record belongs to its own project (a warrant never crosses projects): "
            "drop --project"
        )
    source, hashes = None, None
    try:
        if review_set is not None:
            items, name, digest, source, project = _review_set(review_set)
        else:
            items, name, digest, hashes = _sets(dataset or [])
        chosen = select_split(items, split, name if dataset or review_set else "the shipped set")
    except LabelsError as exc:
        fail(str(exc))
    if rules:
        typer.echo(_rule_report(chosen, fmt))
        return
    owner = DEFAULT_PROJECT
    if save:  # a set that can never be recorded, or an unknown project, is refused before any call
        name = _preflight(items, chosen, name, digest)
        owner = _owner(project)
    factory = panel_factory(settings, registry_from(settings, models_file))
    judge = judge_model or settings.judge_model
    try:
        tested = model_under_test or settings.model
        report = asyncio.run(_validate(settings, factory, chosen, judge, policy, twins, tested))
    except (UnknownModelError, ModelConfigError, ValueError) as exc:
        fail(str(exc))
    floor = settings.specificity_floor
    refused = _save(factory, report, items, (name, digest, hashes), floor, owner, source) if save else None
    typer.echo(
        json.dumps(report, indent=2)
        if fmt == "json"
        else to_html(report)
        if fmt == "html"
        else to_markdown(report)
    )
    if refused:  # the figures are shown, but a failure is not a measurement: nothing was stored
        fail(refused, code=1)
    _exit_status(report, check)


def _rule_report(items: list[Any], fmt: str) -> str:
    """Each rule's firings on the items' versions: a flawed version with its flaw types, its
    corrected version and every control as sound."""
    from agents.rubric.rules import Version, tally, to_markdown

    versions = []
    for item in items:
        versions.append(Version(item.question, item.solution, tuple(flaw.type for flaw in item.flaws)))
        if item.corrected is not None:
            versions.append(Version(item.corrected.question, item.corrected.solution))
    tallies = tally(versions)
    flawed = sum(bool(v.flaws) for v in versions)
    if fmt == "json":
        rows = [
            {
                "rule": t.rule.id,
                "check": t.rule.check,
                "flaw": t.rule.flaw,
                "fired": t.fired,
                "flawed": t.flawed,
                "typed": t.typed,
                "sound": t.sound,
                "named": t.named,
                "precision": t.precision,
            }
            for t in tallies
        ]
        return json.dumps({"flawed": flawed, "sound": len(versions) - flawed, "rules": rows}, indent=2)
    return to_markdown(tallies, flawed, len(versions) - flawed)


def _sets(paths: list[Path]) -> tuple[list[Any], str, str, dict[str, str]]:
    """The items of one labelled set (a file, or the shipped set), or of several judged at once:
    their name, hash and each source's hash. Several sets make one: their names joined with " + ",
    its hash that of their items in order, and each item that names no source names its set's
    (figures per source, each source hashed over its own items as read)."""
    from agents.labelled.canonical import canonical_hash
    from agents.labelled.labels import Source, check_labelled, read_labelled
    from app.validity.provenance import SHIPPED
    from app.validity.records import source_hashes
    from app.validity.service import builtin_set

    if len(paths) <= 1:
        one = paths[0] if paths and str(paths[0]) != SHIPPED else None
        found = read_labelled(one) if one else builtin_set()
        return found, *_provenance(one), source_hashes(found, _objects(one))
    items: list[Any] = []
    objects: list[Any] = []
    for path in paths:
        shipped = str(path) == SHIPPED
        found = builtin_set() if shipped else read_labelled(path)
        source = Source(name=SHIPPED if shipped else path.name, kind="shipped" if shipped else "own")
        items += [i if i.source else i.model_copy(update={"source": source}) for i in found]
        objects += _objects(None if shipped else path)
    name = " + ".join(SHIPPED if str(p) == SHIPPED else p.name for p in paths)
    return check_labelled(items, name), name, canonical_hash(objects), source_hashes(items, objects)


def _objects(path: Path | None) -> list[Any]:
    """The JSON objects of a labelled file's lines (None: the shipped set's), as they are hashed."""
    from agents.labelled.canonical import CanonicalError, read_objects
    from app.validity.provenance import shipped_path

    try:
        return read_objects(path or shipped_path())
    except CanonicalError as exc:
        fail(str(exc))


def _provenance(dataset: Path | None) -> tuple[str, str]:
    """The set's name (its file name, or shipped) and its hash (of its canonical JSONL)."""
    from agents.labelled.canonical import CanonicalError, file_hash
    from app.validity.provenance import SHIPPED, shipped_hash

    if dataset is None:
        return SHIPPED, shipped_hash()
    try:
        return dataset.name, file_hash(dataset)
    except CanonicalError as exc:
        fail(str(exc))


def _review_set(project: str) -> tuple[list[Any], str, str, Any, str]:
    """The project's review set (items, name, hash), its source, and the project's id; exit 1 when
    there is no such project or no decision yet."""
    from app.cli.support import in_session
    from app.projects.keys import ProjectError, find_project
    from app.reviews.labels import review_set
    from app.validity.provenance import REVIEWS
    from app.validity.records import Source

    async def load(session: Any) -> Any:
        found = await find_project(session, project)
        return found.id, await review_set(session, found)

    try:
        project_id, found = asyncio.run(in_session(load))
    except ProjectError as exc:
        fail(str(exc), code=1)
    if not found.items:
        fail(f"project {project!r} has no decided review yet: its review set is empty", code=1)
    return found.items, found.name, found.hash, Source(REVIEWS, len(found.reviewers)), project_id


def _preflight(items: list[Any], chosen: list[Any], name: str, digest: str) -> str:
    """The name a record of the set takes; exit 1 with why when no record of it could be saved."""
    from app.validity.provenance import NotRecordable, preflight

    try:
        return preflight(items, chosen, name, digest)
    except NotRecordable as exc:
        fail(str(exc), code=1)


def _exit_status(report: dict[str, Any], check: bool) -> None:
    """Exit 1 when a version did not end in the panel's verdict, or (``--check``) when the targets
    cannot be claimed or one is missed; the report is printed first either way."""

    excluded = report["excluded"]
    if excluded["total"]:
        err.print(
            f"error: {excluded['total']} of {report['versions']} versions did not end in the panel's "
            f"verdict ({excluded['errored']} errored, {excluded['undecided']} undecided; "
            f"{report['calls']['failed']} judge calls failed): the figures are incomplete",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)
    targets = report["targets"]
    if check and not (targets["claimed"] and all(ok is True for ok in targets["met"].values())):
        raise typer.Exit(1)


async def _validate(
    settings: Settings,
    factory: PanelFactory,
    items: list[Any],
    judge: str,
    policy: str,
    twins: bool,
    model_under_test: str | None = None,
    guarantee: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The bench, each version a run driven as the service drives one (its executor, on a
    temporary store: nothing is kept but the report)."""
    from app.runs.temporary import temporary_runs
    from app.validity.service import validate
    from graphs.scoring import get_policy

    get_policy(policy)
    async with factory, temporary_runs(settings, factory) as runs:
        return await validate(
            items,
            factory,
            judge,
            runs,
            policy=policy,
            twins=twins,
            model_under_test=model_under_test,
            guarantee=guarantee,
        )


def _owner(project: str) -> str:
    """The id of the project (by id or name) a saved record will belong to; exit 1 if none."""
    from app.cli.support import in_session
    from app.projects.keys import ProjectError, find_project

    async def find(session: Any) -> str:
        return (await find_project(session, project)).id

    try:
        return asyncio.run(in_session(find))
    except ProjectError as exc:
        fail(str(exc), code=1)


def _save(
    factory: PanelFactory,
    report: dict[str, Any],
    items: list[Any],
    named: tuple[str, str, dict[str, str] | None],
    floor: float,
    project_id: str,
    source: Any = None,
) -> str | None:
    """Store the report as a validity record of ``project_id`` in the configured database (and in
    the report); ``named``: the set's name, its hash and each source's. Why not, when it is no
    measurement (a version errored, too few sound versions passed…)."""
    from app.cli.support import err, in_session
    from app.validity.records import NotRecordable, save_report

    set_name, digest, hashes = named

    async def work(session: Any) -> Any:
        return await save_report(
            session,
            factory.registry,
            report,
            items,
            set_name,
            project_id,
            digest=digest,
            floor=floor,
            source=source,
            hashes=hashes,
        )

    try:
        record = asyncio.run(in_session(work))
    except NotRecordable as exc:
        return str(exc)
    sources = "; ".join(f"{s['name']} ({s['kind']}, {s['n_flawed']} flawed)" for s in record.sources or [])
    err.print(
        f"saved validity record {record.id} of panel {record.panel_id} ({record.split}, "
        f"{record.n_flawed} flawed / {record.n_sound} sound / {record.n_twins} twins; set "
        f"{record.set_name}, sha256 {record.set_hash[:12]}; sources: {sources})",
        markup=False,
        highlight=False,
    )
    return None
