"""The ``thinkloop`` command."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agents.models import ModelConfigError, ModelRegistry, UnknownModelError
from agents.panel import PanelFactory
from agents.probe import Capabilities
from agents.schemas import Problem
from app.cli_support import fail, with_database
from app.datasets.synthetic import MAX_SYNTHETIC, synthetic_jsonl
from app.db import migrate, short_session
from app.keys import create_key, revoke_key
from app.logging import configure_logging
from app.problems import (
    ProblemInputError,
    example_names,
    make_problem,
    parse_problem,
    read_example,
    read_source,
)
from app.render import TraceRenderer
from app.settings import Settings, get_settings
from graphs.context import RunContext
from graphs.result import RunResult, run_refinement
from graphs.scoring import POLICY_NAMES, Outcome, ScoringPolicy, get_policy

T = TypeVar("T")
cli = typer.Typer(help="thinkloop: judge and refine flawed math word problems.", no_args_is_help=True)


def registry_from(settings: Settings, models_file: Path | None) -> ModelRegistry:
    """The model registry from the file and the environment."""
    try:
        return ModelRegistry.from_sources(models_file or settings.models_file, settings.models)
    except ModelConfigError as exc:
        fail(str(exc))


def _problem(source: str | None, question: str | None, solution: str | None, example: str | None) -> Problem:
    given = [x is not None for x in (source, question, example)]
    if sum(given) != 1:
        fail("give exactly one of PROBLEM (a JSON file, or - for stdin), --question or --example")
    try:
        if example is not None:
            return parse_problem(read_example(example))
        if source is not None:
            return parse_problem(read_source(source))
        return make_problem(question, solution or "")
    except ProblemInputError as exc:
        fail(str(exc))


@cli.command()
def refine(
    problem: Annotated[str | None, typer.Argument(help="JSON file with question and solution, or -")] = None,
    question: Annotated[str | None, typer.Option(help="The question text")] = None,
    solution: Annotated[str | None, typer.Option(help="The stated solution")] = None,
    example: Annotated[
        str | None, typer.Option(help="A bundled example: " + ", ".join(example_names()))
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model under test (default: rubric)")] = None,
    judge_model: Annotated[str | None, typer.Option(help="Judge model (default: rubric)")] = None,
    policy: Annotated[str | None, typer.Option(help="Scoring policy: " + " | ".join(POLICY_NAMES))] = None,
    max_rounds: Annotated[int | None, typer.Option(min=1, max=20, help="Evaluations at most")] = None,
    models_file: Annotated[Path | None, typer.Option(help="TOML model registry")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON")] = False,
) -> None:
    """Judge a problem with seven agents and revise it until it passes or rounds run out."""
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    subject = _problem(problem, question, solution, example)
    overrides = {"max_rounds": max_rounds} if max_rounds else {}
    try:
        scoring = get_policy(policy or settings.policy, **overrides)
    except ValueError as exc:
        fail(str(exc))
    factory = PanelFactory(registry_from(settings, models_file), os.environ)
    renderer = None if as_json else TraceRenderer(Console())
    result = asyncio.run(
        _refine(
            factory, subject, scoring, judge_model or settings.judge_model, model or settings.model, renderer
        )
    )
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    if result.outcome == Outcome.ERROR:  # the run produced no verdict: scripts must not read it as one
        raise typer.Exit(1)


async def _refine(
    factory: PanelFactory,
    subject: Problem,
    scoring: ScoringPolicy,
    judge_model: str,
    model: str,
    renderer: TraceRenderer | None,
) -> RunResult:
    async with factory:
        try:
            panel = factory.build(judge_model, model)
        except (ModelConfigError, UnknownModelError) as exc:
            fail(str(exc))
        return await run_refinement(subject, RunContext.of(panel, scoring), on_event=renderer)


@cli.command("simulate-llm")
def simulate_llm(
    host: Annotated[str, typer.Option(help="Loopback address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8099,
    latency: Annotated[float, typer.Option(min=0.0, help="Seconds added to every reply")] = 0.0,
    score: Annotated[int, typer.Option(min=0, max=100, help="Default judge score")] = 90,
    script: Annotated[Path | None, typer.Option(help="JSON file with a SimConfig (rules, gate...)")] = None,
    profile: Annotated[
        str, typer.Option(help="Answer as this server does: openai, vllm, ollama, llamacpp, tgi, azure, ...")
    ] = "openai",
) -> None:
    """Serve the OpenAI-compatible simulator for testing an integration offline."""
    import uvicorn

    from agents.simulator import SimConfig, SimulatorState, create_simulator

    try:
        raw = json.loads(script.read_text("utf-8")) if script else {}
        values = {"latency_s": latency, "default_score": score, "profile": profile, **raw}
        config = SimConfig.model_validate(values)
    except (OSError, ValueError) as exc:
        fail(f"cannot use the script: {exc}")
    server = config.server
    where = f"http://{host}:{port}" + ("/openai/deployments/<name>" if server.azure else "/v1")
    typer.echo(f"OpenAI-compatible simulator answering as {server.server} on {where} (control: /_sim)")
    uvicorn.run(create_simulator(SimulatorState(config)), host=host, port=port, log_level="warning")


models_cli = typer.Typer(help="List the usable models, or probe one endpoint.", invoke_without_command=True)
cli.add_typer(models_cli, name="models")


@models_cli.callback()
def models(
    context: typer.Context,
    models_file: Annotated[Path | None, typer.Option(help="TOML model registry")] = None,
) -> None:
    """List the usable model names."""
    if context.invoked_subcommand is not None:
        return
    registry = registry_from(get_settings(), models_file)
    for name in registry.names():
        spec = registry.get(name)
        where = (
            "offline rubric panel" if spec is None else f"{spec.model} @ {spec.base_url or 'api.openai.com'}"
        )
        typer.echo(f"{name}\t{where}")


@models_cli.command("check")
def models_check(
    name: Annotated[str, typer.Argument(help="A model name from the registry")],
    models_file: Annotated[Path | None, typer.Option(help="TOML model registry")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the capabilities as JSON")] = False,
) -> None:
    """Probe an endpoint once per capability and say how thinkloop will talk to it."""
    from app.model_check import render_check

    registry = registry_from(get_settings(), models_file)
    try:
        spec = registry.get(name)
        if spec is None:
            fail(f"{name!r} is the offline panel: it has no endpoint to check")
        found = asyncio.run(_check(PanelFactory(registry, os.environ), name))
    except (UnknownModelError, ModelConfigError) as exc:
        fail(str(exc))
    typer.echo(json.dumps(found.as_dict(), indent=2) if as_json else render_check(spec, found))
    if not found.reachable:
        raise typer.Exit(1)


async def _check(factory: PanelFactory, name: str) -> Capabilities:
    async with factory:
        return await factory.check(name)


judges_cli = typer.Typer(help="Measure how well a judge panel catches real flaws.", no_args_is_help=True)
cli.add_typer(judges_cli, name="judges")


@judges_cli.command("validate")
def judges_validate(
    dataset: Annotated[
        Path | None, typer.Option(help="Labelled JSONL (default: the set shipped with thinkloop)")
    ] = None,
    judge_model: Annotated[str | None, typer.Option(help="The panel to measure (default: settings)")] = None,
    twins: Annotated[bool, typer.Option(help="Also judge adversarial twins and paraphrases")] = False,
    split: Annotated[str, typer.Option(help="tune | heldout | all")] = "all",
    policy: Annotated[str, typer.Option(help="default | think-paper")] = "default",
    models_file: Annotated[Path | None, typer.Option(help="TOML model registry")] = None,
    fmt: Annotated[str, typer.Option("--format", help="md | json | html")] = "md",
    check: Annotated[bool, typer.Option(help="Exit 1 unless the targets are met")] = False,
) -> None:
    """Judge every version of a labelled set once: detection, false accepts, specificity, κ per
    judge, calibration and the adversarial gap, per split."""
    from agents.validity.labels import LabelsError, read_labelled
    from app.validity.render import to_html, to_markdown
    from app.validity.service import builtin_set, select_split

    if fmt not in ("md", "json", "html") or split not in ("tune", "heldout", "all"):
        fail("--format is md, json or html; --split is tune, heldout or all")
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    try:
        items = read_labelled(dataset) if dataset else builtin_set()
        chosen = select_split(items, split, str(dataset or "the shipped set"))
    except LabelsError as exc:
        fail(str(exc))
    factory = PanelFactory(registry_from(settings, models_file), os.environ)
    judge = judge_model or settings.judge_model
    try:
        report = asyncio.run(_validate(factory, chosen, judge, policy, twins))
    except (UnknownModelError, ModelConfigError, ValueError) as exc:
        fail(str(exc))
    typer.echo(
        json.dumps(report, indent=2)
        if fmt == "json"
        else to_html(report)
        if fmt == "html"
        else to_markdown(report)
    )
    if check and not all(v for k, v in report["targets"].items() if k != "split"):
        raise typer.Exit(1)


async def _validate(
    factory: PanelFactory, items: list[Any], judge: str, policy: str, twins: bool
) -> dict[str, Any]:
    from app.validity.service import validate

    get_policy(policy)
    async with factory:
        return await validate(items, factory, judge, policy=policy, twins=twins)


@cli.command("reproduce-think")
def reproduce_think(
    results_dir: Annotated[Path, typer.Argument(help="The THiNK reference's results folder")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the tables as JSON")] = False,
) -> None:
    """Recompute the THiNK paper's Table 1 and Table 2 from its per-round result files."""
    from app.paper.render import render
    from app.paper.reproduce import ReproduceError, reproduce
    from app.paper.reproduce import as_json as tables_json

    try:
        tables = reproduce(results_dir)
    except ReproduceError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(tables_json(tables), indent=2))
    else:
        render(Console(), tables)


datasets_cli = typer.Typer(help="Validate or generate problem sets.", no_args_is_help=True)
cli.add_typer(datasets_cli, name="datasets")


@datasets_cli.command("synth")
def datasets_synth(
    count: Annotated[int, typer.Argument(min=1, max=MAX_SYNTHETIC, help="How many problems")],
    seed: Annotated[int, typer.Option(help="Same seed, same problems")] = 0,
) -> None:
    """Print COUNT synthetic flawed problems as JSONL (for load tests and demos)."""
    typer.echo(synthetic_jsonl(count, seed), nl=False)


@datasets_cli.command("validate")
def datasets_validate(
    file: Annotated[Path, typer.Argument(help="JSONL, CSV, or the THiNK bad_questions.csv layout")],
    fmt: Annotated[
        str | None, typer.Option("--format", help="jsonl | csv | think-csv (default: detect)")
    ] = None,
) -> None:
    """Check every row of a problem set; bad rows are listed by line and the exit code is 1."""
    from app.datasets.parsing import DatasetError, parse_dataset

    if fmt not in (None, "jsonl", "csv", "think-csv"):
        fail(f"unknown format {fmt!r}; choose jsonl, csv or think-csv")
    try:
        parsed = parse_dataset(file.read_bytes(), file.name, fmt)  # type: ignore[arg-type]
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror}")
    except DatasetError as exc:
        fail(f"{file}: {exc}")
    for kind, rows in (
        ("error", parsed.errors),
        ("duplicate", parsed.duplicates),
        ("warning", parsed.warnings),
    ):
        for row in rows:
            typer.echo(f"{file}:{row.line}: {kind}: {row.message}")
    typer.echo(
        f"{file}: {parsed.format}, {len(parsed.rows)} valid problem(s), {len(parsed.errors)} bad row(s), "
        f"{len(parsed.duplicates)} duplicate(s), {len(parsed.warnings)} warning(s)"
    )
    if parsed.errors:
        raise typer.Exit(1)


from app.batch_cli import batch_cli, worker  # noqa: E402  (registered here to keep one entry point)

cli.add_typer(batch_cli, name="batch")
cli.command("worker", help="The same as `thinkloop batch worker`.")(worker)
keys_cli = typer.Typer(help="Create and revoke API keys.", no_args_is_help=True)
cli.add_typer(keys_cli, name="keys")


async def _with_session(work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    async def in_session(sessions: async_sessionmaker[AsyncSession]) -> T:
        async with short_session(sessions) as session:
            return await work(session)

    return await with_database(get_settings(), in_session)


@keys_cli.command("create")
def keys_create(
    name: Annotated[str, typer.Option(help="Who or what uses the key")],
    scope: Annotated[
        list[str] | None, typer.Option(help="read and/or write; repeat it (default both)")
    ] = None,
) -> None:
    """Create an API key and print it once; only its hash is stored."""
    scopes = scope or ["read", "write"]
    try:
        key = asyncio.run(_with_session(lambda session: create_key(session, name, scopes)))
    except ValueError as exc:
        fail(str(exc))
    typer.echo(f"id {key.id}  scopes {','.join(key.scopes)}")
    typer.echo(key.secret)


@keys_cli.command("revoke")
def keys_revoke(key: Annotated[str, typer.Argument(help="The key's id or prefix")]) -> None:
    """Revoke an API key: it stops working at once."""
    row = asyncio.run(_with_session(lambda session: revoke_key(session, key)))
    if row is None:
        fail(f"no API key {key!r}")
    typer.echo(f"revoked {row.id} ({row.name})")


@cli.command("migrate")
def migrate_command() -> None:
    """Bring the database (THINKLOOP_DATABASE_URL) to the newest schema."""
    asyncio.run(migrate(get_settings().database_url))
    typer.echo("database at head")


@cli.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to bind (default: settings)")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535)] = None,
) -> None:
    """Migrate the database, then serve the HTTP API with uvicorn."""
    import uvicorn

    from app.main import create_app

    settings = get_settings()
    asyncio.run(migrate(settings.database_url))
    uvicorn.run(
        create_app(settings), host=host or settings.host, port=port or settings.port, log_level="warning"
    )


def main() -> None:
    """Entry point of the ``thinkloop`` script."""
    cli()
