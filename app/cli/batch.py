"""`thinkloop batch run|resume|list|status|items|report|figures|worker`.

Every command that names a batch takes its id or any unique prefix of it. What they need (the
database, the batch stack, the report) is imported inside them, so `thinkloop --help` loads none of it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from app.cli.support import MODELS_FILE_HELP, err, fail

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from agents.llm.models import ModelRegistry
    from app.batches.service import BatchService
    from app.cli.batch_exec import Execution
    from app.datasets.parsing import ParsedDataset
    from app.models import Batch
    from app.settings import Settings

batch_cli = typer.Typer(help="Evaluate models over a problem set.", no_args_is_help=True)
REPORT_FORMATS = ("md", "json", "csv", "html")  # app.reporting.formats.REPORT_FORMATS (checked by a test)
ITEM_FORMATS = ("jsonl", "csv", "parquet")  # app.reporting.item_export.ITEM_FORMATS (likewise)
BatchId = Annotated[str, typer.Argument(help="The batch's id, or any unique prefix of it")]
Format = Annotated[str, typer.Option("--format", help="Report format: md | json | csv | html")]


def _settings() -> Settings:
    from app.logging import configure_logging
    from app.settings import get_settings

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    return settings


def _models(models: str) -> list[str]:
    names = [m.strip() for m in models.split(",") if m.strip()]
    if not names:
        fail("give at least one model with --models")
    return names


@batch_cli.command("run")
def run(
    dataset: Annotated[Path, typer.Option(help="JSONL, CSV or THiNK-layout problem set")],
    models: Annotated[str, typer.Option(help="Models under test, comma-separated")],
    judge_model: Annotated[str | None, typer.Option(help="Judge model (default: settings)")] = None,
    policy: Annotated[str, typer.Option(help="default | think-paper")] = "default",
    max_rounds: Annotated[int, typer.Option(min=1, max=10)] = 3,
    repeats: Annotated[int, typer.Option(min=1, max=100)] = 1,
    control: Annotated[bool, typer.Option(help="Add the zero-shot control arm")] = False,
    cache: Annotated[bool, typer.Option(help="Reuse identical temperature-0 replies")] = True,
    budget_tokens: Annotated[int | None, typer.Option(min=1)] = None,
    budget_usd: Annotated[float | None, typer.Option(min=0)] = None,
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
    fmt: Format = "md",
) -> None:
    """Run a batch on this machine with a live progress bar, then print its report. Ctrl-C (or
    SIGHUP, SIGTERM) stops it and prints the `batch resume` command that finishes it."""
    from app.cli.support import registry_from

    _check_format(fmt)
    settings = _settings()
    names = _models(models)
    judge = judge_model or settings.judge_model
    registry = registry_from(settings, models_file, (*names, judge))
    parsed = _parsed(dataset)
    if parsed.errors:
        for row in parsed.errors:
            err.print(f"{dataset}:{row.line}: {escape(row.message)}", soft_wrap=True)
        fail(f"{len(parsed.errors)} bad row(s); fix them (see `thinkloop datasets validate`)", code=1)
    spec_args: dict[str, Any] = {
        "models": names,
        "judge_model": judge,
        "policy": policy,
        "max_rounds": max_rounds,
        "repeats": repeats,
        "control_arm": control,
        "use_cache": cache,
        "budget_tokens": budget_tokens,
        "budget_usd": budget_usd,
    }

    async def start(service: BatchService) -> str:
        from app.batches.service import BatchSpec
        from app.datasets import repository as datasets_repo
        from app.db import short_session

        async with short_session(service.sessions) as session:
            stored = await datasets_repo.store_dataset(session, dataset.stem, parsed)
        created = await service.create(BatchSpec(dataset_id=stored.id, **spec_args), registry=registry)
        await _note_unfinished(service, created.id)
        return created.id

    _execute_and_report(settings, registry, start, fmt)


@batch_cli.command("estimate")
def estimate(
    dataset: Annotated[Path, typer.Option(help="JSONL, CSV or THiNK-layout problem set")],
    models: Annotated[str, typer.Option(help="Models under test, comma-separated")],
    judge_model: Annotated[str | None, typer.Option(help="Judge model (default: settings)")] = None,
    max_rounds: Annotated[int, typer.Option(min=1, max=10)] = 3,
    repeats: Annotated[int, typer.Option(min=1, max=100)] = 1,
    control: Annotated[bool, typer.Option(help="Add the zero-shot control arm")] = False,
    bound: Annotated[bool, typer.Option(help="The upper bound, not the mid estimate")] = False,
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
) -> None:
    """Print what `batch run` with these arguments would spend (calls, tokens, cost) as JSON,
    without calling a model or storing anything."""
    from agents.schemas import Problem
    from app.batches.estimate import estimate as estimate_spend
    from app.cli.support import registry_from

    settings = _settings()
    names = _models(models)
    judge = judge_model or settings.judge_model
    registry = registry_from(settings, models_file, (*names, judge))
    parsed = _parsed(dataset)
    if parsed.errors:
        fail(f"{len(parsed.errors)} bad row(s); fix them (see `thinkloop datasets validate`)", code=1)
    problems = [(r.content_hash, Problem(question=r.question, solution=r.solution)) for r in parsed.rows]
    spec = {"models": names, "judge_model": judge, "max_rounds": max_rounds, "repeats": repeats}
    history, similar = _history(settings, [h for h, _ in problems], names, judge, max_rounds)
    shown = estimate_spend(
        problems, {**spec, "control_arm": control}, registry, history, bound=bound, similar=similar
    )
    typer.echo(json.dumps(shown, indent=2))


def _history(
    settings: Settings, hashes: list[str], models: list[str], judge: str, max_rounds: int
) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Earlier items' measured spend, of these problems and of similar items, read without migrating
    or writing (a missing SQLite file: none)."""
    from sqlalchemy.engine import make_url

    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite" and not (url.database and Path(url.database).exists()):
        return {}, {}
    return asyncio.run(_read_history(settings.database_url, hashes, models, judge, max_rounds))


async def _read_history(
    database_url: str, hashes: list[str], models: list[str], judge: str, max_rounds: int
) -> tuple[dict[Any, Any], dict[Any, Any]]:
    from app.batches.estimate_history import measured, similar
    from app.db import create_engine, session_factory

    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            exact = await measured(session, hashes, models, judge, max_rounds)
            return exact, await similar(session, models, judge, max_rounds)
    finally:
        await engine.dispose()


@batch_cli.command("resume")
def resume(
    batch_id: BatchId,
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
    fmt: Format = "md",
) -> None:
    """Finish an interrupted (or paused) batch on this machine: its items left to do, and those a
    stopped process held; then print its report."""
    from app.batches.service import BatchStateError
    from app.cli.support import registry_from

    _check_format(fmt)
    settings = _settings()
    batch: Batch = asyncio.run(_with_db(settings, lambda sessions: _find(sessions, batch_id)))
    registry = registry_from(settings, models_file, (*batch.models, batch.judge_model))

    async def start(service: BatchService) -> str:
        try:
            await service.go_on(batch.id)
        except BatchStateError as exc:
            fail(
                f"cannot resume batch {batch.id}: {exc} "
                f"(its report: `thinkloop batch report {batch.id[:12]}`)",
                1,
            )
        return batch.id

    _execute_and_report(settings, registry, start, fmt)


def _check_format(fmt: str) -> None:
    if fmt not in REPORT_FORMATS:
        fail(f"unknown format {fmt!r}; choose {', '.join(REPORT_FORMATS)}")


def _execute_and_report(settings: Settings, registry: ModelRegistry, start: Any, fmt: str) -> None:
    """Execute here until the batch ends (print its report) or a signal stops it (say how to resume)."""
    from app.cli.batch_exec import execute
    from app.reporting.formats import render_report

    async def work(sessions: async_sessionmaker[AsyncSession]) -> tuple[Execution, dict[str, Any] | None]:
        done = await execute(settings, registry, sessions, start)
        if done.interrupted is not None:
            return done, await _progress(sessions, done.batch_id)
        return done, await _report(sessions, done.batch_id)

    done, shown = asyncio.run(_with_db(settings, work))
    assert shown is not None
    if done.interrupted is not None:
        _interrupted(done, shown)
    typer.echo(render_report(shown, fmt).rstrip("\n"))
    _exit_on_errors(shown)


def _interrupted(done: Execution, state: dict[str, Any]) -> None:
    import signal

    assert done.interrupted is not None
    name = signal.Signals(done.interrupted.signum or signal.SIGINT).name
    left = state["total"] - state["finished"]
    err.print(
        f"interrupted by {name}: {state['finished']} of {state['total']} item(s) finished, {left} left "
        f"({done.handed_back} in flight handed back).\n"
        f"resume with: thinkloop batch resume {done.batch_id[:12]}",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )
    raise typer.Exit(done.interrupted.exit_code)


async def _note_unfinished(service: BatchService, batch_id: str) -> None:
    """Name the batches left unfinished (this run does not finish them)."""
    from app.cli.batch_views import short, unfinished_elsewhere
    from app.db import short_session

    async with short_session(service.sessions) as session:
        others = await unfinished_elsewhere(session, batch_id)
    for other, left in others:
        err.print(
            f"note: batch {short(other.id)} ({other.status}) has {left} item(s) left; this run leaves "
            f"them: `thinkloop batch resume {short(other.id)}` finishes them.",
            soft_wrap=True,
            highlight=False,
            markup=False,
        )


def _exit_on_errors(report: dict[str, Any]) -> None:
    """Exit 1 with one clear line when any item ended in error: its numbers are missing, not zero."""
    counts = report["outcomes"]
    if not counts.get("error"):
        return
    causes = [f"{e['count']}× {e['cause']}" for row in report["rows"] for e in row["errors"]]
    err.print(
        f"[red]error:[/red] {counts['error']} of {counts['total']} item(s) ended in error and are not scored "
        f"({escape('; '.join(causes[:3]))}). Details: `thinkloop batch report {report['batch']['id']}`; "
        "run them again with the API's retry-failed.",
        soft_wrap=True,
        highlight=False,
    )
    raise typer.Exit(1)


async def _with_db(settings: Settings, work: Any) -> Any:
    from app.cli.support import with_database

    return await with_database(settings, work)


async def _find(sessions: async_sessionmaker[AsyncSession], given: str) -> Batch:
    from app.cli.batch_views import resolve
    from app.db import short_session

    async with short_session(sessions) as session:
        return await resolve(session, given)


async def _progress(sessions: async_sessionmaker[AsyncSession], batch_id: str) -> dict[str, Any]:
    from app.batches.service import progress

    return await progress(sessions, batch_id)


async def _report(sessions: async_sessionmaker[AsyncSession], batch_id: str) -> dict[str, Any]:
    from app.batches import repository as repo
    from app.datasets import repository as datasets_repo
    from app.db import short_session
    from app.reporting.batch import build_report
    from app.reporting.corrected import batch_labels
    from app.reporting.data import load_entries
    from app.reporting.manifest import served_by
    from app.reviews.agreement import batch_teachers

    batch = await _find(sessions, batch_id)
    async with short_session(sessions) as session:
        flaws = await datasets_repo.flaw_labels(session, batch.dataset_id)
        items = await repo.items(session, batch.id)
        entries = await load_entries(session, items)
        teachers = await batch_teachers(session, batch, items)
        labels = await batch_labels(session, batch, items)
        return build_report(batch, entries, flaws, await served_by(session, items), teachers, labels)


@batch_cli.command("list")
def list_batches(
    status: Annotated[str | None, typer.Option(help="Only batches in this status")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """The newest batches: id, when, status, models, items finished, cost (``--json``: each one's
    progress, models, judge model and creation time)."""
    from rich.console import Console
    from rich.table import Table

    from app.batches import repository as repo
    from app.batches.service import progress
    from app.cli.batch_views import LIST_HEAD, list_json, list_rows
    from app.db import short_session

    async def read(sessions: async_sessionmaker[AsyncSession]) -> tuple[Any, list[dict[str, Any]]]:
        async with short_session(sessions) as session:
            batches = await repo.recent(session, limit, status)
        return batches, [await progress(sessions, b.id) for b in batches]

    batches, states = asyncio.run(_with_db(_settings(), read))
    if as_json:
        typer.echo(json.dumps(list_json(batches, states), indent=2, default=str))
        return
    table = Table(*LIST_HEAD, box=None, pad_edge=False)
    for row in list_rows(batches, states):
        table.add_row(*row)
    if batches:
        Console(width=200).print(table)
    else:
        typer.echo("no batches")


@batch_cli.command("status")
def status(
    batch_id: BatchId,
    as_json: Annotated[bool, typer.Option("--json", help="Print the progress as JSON")] = False,
) -> None:
    """Where a batch is: items by state and per model, what it spent, how long it ran, how to resume."""
    from app.batches import repository as repo
    from app.cli.batch_views import status_text
    from app.db import short_session

    async def read(sessions: async_sessionmaker[AsyncSession]) -> tuple[Any, Any, Any]:
        batch = await _find(sessions, batch_id)
        async with short_session(sessions) as session:
            by_model = await repo.counts_by_model(session, batch.id)
        return batch, await _progress(sessions, batch.id), by_model

    batch, state, by_model = asyncio.run(_with_db(_settings(), read))
    typer.echo(json.dumps(state, indent=2, default=str) if as_json else status_text(batch, state, by_model))


@batch_cli.command("report")
def report(
    batch_id: BatchId,
    fmt: Format = "md",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here (default: stdout)")
    ] = None,
) -> None:
    """The batch's report: per model and arm, with confidence intervals, judge agreement and its
    manifest (versions, dataset hash, endpoints, prompts, policy, times, cache hits); for CSV, the
    manifest is the file FILE.manifest.json beside it."""
    from app.cli.item_files import note_no_manifest, write_report
    from app.reporting.formats import render_report

    _check_format(fmt)
    shown = asyncio.run(_with_db(_settings(), lambda sessions: _report(sessions, batch_id)))
    text = render_report(shown, fmt).rstrip("\n")
    if output is not None:
        written = write_report(text + "\n", fmt, output, shown.get("manifest"))
        err.print(written, highlight=False, markup=False, soft_wrap=True)
        return
    typer.echo(text)
    if fmt == "csv":
        note_no_manifest(f"thinkloop batch report {shown['batch']['id'][:12]} --format csv -o FILE", "json")


@batch_cli.command("items")
def items(
    batch_id: BatchId,
    fmt: Annotated[str, typer.Option("--format", help="jsonl | csv | parquet")] = "jsonl",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here (default: stdout)")
    ] = None,
) -> None:
    """One row per item: model, arm, repeat, outcome, rounds, final score per level, tokens, cost,
    cache hits and its trace (/v1/runs/{run_id}). The manifest is JSONL's first line, Parquet's
    schema metadata (thinkloop.manifest), or for CSV the file FILE.manifest.json beside it."""
    from app.cli.item_files import export

    if fmt not in ITEM_FORMATS:
        fail(f"unknown format {fmt!r}; choose {', '.join(ITEM_FORMATS)}")
    if fmt == "parquet" and output is None and sys.stdout.isatty():
        fail("parquet is binary: give --output FILE (or redirect stdout)")
    written = asyncio.run(_with_db(_settings(), lambda sessions: export(sessions, batch_id, fmt, output)))
    if output is not None:
        err.print(written, highlight=False, markup=False, soft_wrap=True)


FIGURES = ("comparison", "levels", "rounds", "agreement", "flaws", "paired")  # app.reporting.figures.FIGURES


@batch_cli.command("figures")
def figures_files(
    batch_id: BatchId,
    out: Annotated[Path, typer.Option("--out", help="Directory to write into (made if missing)")] = Path("."),
    fmt: Annotated[str, typer.Option("--format", help="svg | png | both")] = "both",
) -> None:
    """Write the report's figures fit for a paper, as SVG (vector) and/or PNG (300 dpi), with the
    batch's manifest beside them: comparison, levels, rounds, agreement, and where the batch has the
    data, flaws (labelled flaw types) and paired (loop vs control)."""
    from app.reporting import figures

    formats = ("svg", "png") if fmt == "both" else (fmt,)
    if any(f not in figures.FIGURE_FORMATS for f in formats):
        fail(f"unknown format {fmt!r}; choose svg, png or both")
    shown = asyncio.run(_with_db(_settings(), lambda sessions: _report(sessions, batch_id)))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot write into {out}: {exc}")
    stem = shown["batch"]["id"][:12]
    written = []
    for name in FIGURES:
        for kind in formats:
            body = figures.render(shown, name, kind)
            if body is None:
                break  # no data for it: not drawn in any format
            path = out / f"batch-{stem}-{name}.{kind}"
            path.write_bytes(body)
            written.append(path)
    manifest = out / f"batch-{stem}-manifest.json"
    manifest.write_text(json.dumps(shown.get("manifest") or {}, indent=2, default=str) + "\n", "utf-8")
    for path in [*written, manifest]:
        typer.echo(str(path))


@batch_cli.command("worker")
def worker(models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None) -> None:
    """Process batch items from the Redis broker (THINKLOOP_BROKER_URL), and runs, until stopped."""
    settings = _settings()
    if not settings.broker_url:
        fail("set THINKLOOP_BROKER_URL (redis://...) to run a worker")
    asyncio.run(_work(settings, models_file))


async def _work(settings: Settings, models_file: Path | None) -> None:
    import signal

    from agents.llm.client import preload
    from app.cli.batch_exec import runtime
    from app.cli.support import registry_from

    registry = registry_from(settings, models_file)

    async def work(sessions: async_sessionmaker[AsyncSession]) -> None:
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):  # stop gracefully: in-flight items finish or go back
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        preload()
        async with runtime(settings, registry, sessions, runs=True):
            await stop.wait()

    await _with_db(settings, work)


def _parsed(dataset: Path) -> ParsedDataset:
    """The dataset file parsed (rows and bad rows); one line and exit 1 when it cannot be read."""
    from app.datasets.parsing import DatasetError, parse_dataset

    try:
        return parse_dataset(dataset.read_bytes(), dataset.name)
    except OSError as exc:
        fail(f"cannot read {dataset}: {exc.strerror}")
    except DatasetError as exc:
        fail(f"{dataset}: {exc}")
