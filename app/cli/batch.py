"""`thinkloop batch run|status|report|worker`."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from taskiq import AsyncBroker

from agents.llm import preload
from agents.models import ModelConfigError, ModelRegistry, UnknownModelError
from app.batches import repository as repo
from app.batches.runner import BatchRunner
from app.batches.runtime import batch_runtime, consuming
from app.batches.service import BatchService, BatchSpec, progress
from app.cli.support import err, fail, with_database
from app.datasets import repository as datasets_repo
from app.datasets.parsing import DatasetError, parse_dataset
from app.db import short_session
from app.logging import configure_logging
from app.models import Batch
from app.panels import load_registry, panel_factory
from app.reporting.batch import build_report
from app.reporting.formats import REPORT_FORMATS, render_report
from app.runs.service import open_executor
from app.settings import Settings, get_settings

batch_cli = typer.Typer(help="Evaluate models over a problem set.", no_args_is_help=True)


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
    fmt: Annotated[str, typer.Option("--format", help="Report format: md | json | csv | html")] = "md",
) -> None:
    """Run a batch on this machine with a live progress bar, then print its report."""
    if fmt not in REPORT_FORMATS:
        fail(f"unknown format {fmt!r}; choose {', '.join(REPORT_FORMATS)}")
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    names = [m.strip() for m in models.split(",") if m.strip()]
    if not names:
        fail("give at least one model with --models")
    try:
        data = dataset.read_bytes()
        parsed = parse_dataset(data, dataset.name)
    except OSError as exc:
        fail(f"cannot read {dataset}: {exc.strerror}")
    except DatasetError as exc:
        fail(f"{dataset}: {exc}")
    if parsed.errors:
        for row in parsed.errors:
            err.print(f"{dataset}:{row.line}: {escape(row.message)}", soft_wrap=True)
        fail(f"{len(parsed.errors)} bad row(s); fix them (see `thinkloop datasets validate`)", code=1)
    spec_args = {
        "models": names,
        "judge_model": judge_model or settings.judge_model,
        "policy": policy,
        "max_rounds": max_rounds,
        "repeats": repeats,
        "control_arm": control,
        "use_cache": cache,
        "budget_tokens": budget_tokens,
        "budget_usd": budget_usd,
    }
    report = asyncio.run(_run(settings, dataset.stem, parsed, spec_args))
    typer.echo(render_report(report, fmt).rstrip("\n"))
    _exit_on_errors(report)


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


async def _run(settings: Settings, name: str, parsed: Any, spec_args: dict[str, Any]) -> dict[str, Any]:
    registry = _registry(settings, [*spec_args["models"], spec_args["judge_model"]])

    async def work(sessions: async_sessionmaker[AsyncSession]) -> dict[str, Any]:
        async with _runtime(settings, registry, sessions) as (broker, runner):
            async with short_session(sessions) as session:
                dataset = await datasets_repo.store_dataset(session, name, parsed)
            service = BatchService(sessions, broker)
            batch = await service.create(BatchSpec(dataset_id=dataset.id, **spec_args))
            await _watch(service, batch.id)
            await runner.drain()
            return await _report(sessions, batch.id)

    return await with_database(settings, work)


def _registry(settings: Settings, required: list[str]) -> ModelRegistry:
    """The model registry, refusing unknown names before anything is stored."""
    try:
        registry = load_registry(settings)
        for model in required:
            registry.get(model)
    except (ModelConfigError, UnknownModelError) as exc:
        fail(str(exc))
    return registry


@asynccontextmanager
async def _runtime(
    settings: Settings,
    registry: ModelRegistry,
    sessions: async_sessionmaker[AsyncSession],
    *,
    runs: bool = False,
) -> AsyncIterator[tuple[AsyncBroker, BatchRunner]]:
    """A started broker and runner that work on items while the block runs; closed on exit.

    Items execute as runs through a run executor on the database's checkpointer. With ``runs``
    (a worker), the executor also claims and executes runs submitted over the API.
    """
    async with AsyncExitStack() as stack:
        factory = panel_factory(settings, registry)
        await stack.enter_async_context(factory)
        executor = await stack.enter_async_context(
            open_executor(settings, sessions, factory, connections=settings.batch_concurrency)
        )
        if runs:
            await stack.enter_async_context(executor.running())
        broker, runner = await stack.enter_async_context(
            batch_runtime(settings, executor, grace_s=settings.batch_grace_s)
        )
        await stack.enter_async_context(consuming(broker, runner, settings))
        yield broker, runner


async def _watch(service: BatchService, batch_id: str) -> None:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=False) as bar:
        task = bar.add_task(f"batch {batch_id[:8]}", total=None, detail="")
        while True:
            state = await service.progress(batch_id)
            items = state["items"]
            detail = (
                f"errors {items.get('failed', 0)} · tokens {state['input_tokens'] + state['output_tokens']}"
            )
            bar.update(task, total=state["total"], completed=state["finished"], detail=detail)
            if state["status"] not in ("queued", "running") and not items.get("running"):
                return
            await asyncio.sleep(0.25)


async def _report(sessions: async_sessionmaker[AsyncSession], batch_id: str) -> dict[str, Any]:
    async with short_session(sessions) as session:
        batch = await session.get(Batch, batch_id)
        if batch is None:
            fail(f"no batch {batch_id!r}")
        flaws = await datasets_repo.flaw_labels(session, batch.dataset_id)
        return build_report(batch, await repo.items(session, batch_id), flaws)


async def _with_db(work: Any) -> Any:
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    return await with_database(settings, work)


@batch_cli.command("status")
def status(batch_id: Annotated[str, typer.Argument(help="The batch id")]) -> None:
    """Items by state, tokens, cost and ETA of a batch."""

    async def work(sessions: async_sessionmaker[AsyncSession]) -> dict[str, Any]:
        try:
            return await progress(sessions, batch_id)
        except LookupError:
            fail(f"no batch {batch_id!r}")

    typer.echo(json.dumps(asyncio.run(_with_db(work)), indent=2, default=str))


@batch_cli.command("report")
def report(
    batch_id: Annotated[str, typer.Argument(help="The batch id")],
    fmt: Annotated[str, typer.Option("--format", help="md | json | csv | html")] = "md",
) -> None:
    """The batch's report: per model and arm, with confidence intervals and judge agreement."""
    if fmt not in REPORT_FORMATS:
        fail(f"unknown format {fmt!r}; choose {', '.join(REPORT_FORMATS)}")
    typer.echo(
        render_report(asyncio.run(_with_db(lambda sessions: _report(sessions, batch_id))), fmt).rstrip("\n")
    )


@batch_cli.command("worker")
def worker() -> None:
    """Process batch items from the Redis broker (THINKLOOP_BROKER_URL), and runs, until stopped."""
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    if not settings.broker_url:
        fail("set THINKLOOP_BROKER_URL (redis://...) to run a worker")
    asyncio.run(_work(settings))


async def _work(settings: Settings) -> None:
    registry = _registry(settings, [])

    async def work(sessions: async_sessionmaker[AsyncSession]) -> None:
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):  # stop gracefully: in-flight items finish or go back
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        preload()
        async with _runtime(settings, registry, sessions, runs=True):
            await stop.wait()

    await with_database(settings, work)
