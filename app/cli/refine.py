"""`thinkloop refine`: judge one problem and revise it, printed as it happens."""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.support import MODELS_FILE_HELP, fail, registry_from
from graphs.scoring import POLICY_NAMES

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from agents.identity import Warrants
    from agents.panel import PanelFactory
    from agents.schemas import Problem
    from app.cli.render import TraceRenderer
    from app.settings import Settings
    from graphs.result import RunResult
    from graphs.scoring import ScoringPolicy


def example_names() -> list[str]:
    """app.problems.example_names, without loading pydantic for --help (a test keeps them equal)."""
    folder = resources.files("app").joinpath("samples")
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def _problem(source: str | None, question: str | None, solution: str | None, example: str | None) -> Problem:
    from app.problems import ProblemInputError, make_problem, parse_problem, read_example, read_source

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
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON")] = False,
) -> None:
    """Judge a problem with seven agents and revise it until it passes or rounds run out."""
    from rich.console import Console

    from agents.outcome import Outcome
    from app.cli.render import TraceRenderer
    from app.logging import configure_logging
    from app.panels import panel_factory
    from app.settings import get_settings
    from graphs.scoring import get_policy

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    subject = _problem(problem, question, solution, example)
    overrides = {"max_rounds": max_rounds} if max_rounds else {}
    try:
        scoring = get_policy(policy or settings.policy, **overrides)
    except ValueError as exc:
        fail(str(exc))
    factory = panel_factory(settings, registry_from(settings, models_file))
    judge = judge_model or settings.judge_model
    warrants = asyncio.run(_warrants(settings, factory, judge, scoring))
    renderer = None if as_json else TraceRenderer(Console())
    under_test = model or settings.model
    result = asyncio.run(_refine(settings, factory, subject, scoring, judge, under_test, renderer, warrants))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    elif renderer is not None and result.warrant is not None:  # known once the endpoint answered
        renderer.show_warrant(result.warrant)
    if result.outcome == Outcome.ERROR:  # the run produced no verdict: scripts must not read it as one
        raise typer.Exit(1)


async def _refine(
    settings: Settings,
    factory: PanelFactory,
    subject: Problem,
    scoring: ScoringPolicy,
    judge_model: str,
    model: str,
    renderer: TraceRenderer | None,
    warrants: Warrants | None,
) -> RunResult:
    """The run, driven as the service drives one (its executor, on a temporary store: no database
    to set up), its events printed as they happen."""
    from agents.llm.models import ModelConfigError, UnknownModelError
    from app.panels import build_context
    from app.runs.temporary import temporary_runs

    async with factory:
        try:
            context = build_context(factory, judge_model, model, scoring, warrants=warrants)
        except (ModelConfigError, UnknownModelError) as exc:
            fail(str(exc))
        async with temporary_runs(settings, factory) as runs:
            return await runs.run(subject, context, model=model, judge_model=judge_model, on_event=renderer)


async def _warrants(
    settings: Settings, factory: PanelFactory, judge_model: str, scoring: ScoringPolicy
) -> Warrants | None:
    """What the judge panel may cite (by the model id its endpoint reports) and the bound a
    required warrant sets, from the configured database's validity records. None (no lookup, no
    database touched) for the offline panel when no warrant is required: it screens, and a refine
    with it needs no database."""
    from agents.llm.models import UnknownModelError

    try:
        offline = factory.registry.get(judge_model) is None
    except UnknownModelError as exc:
        fail(str(exc))
    if offline and settings.warrant_requirement() is None:
        return None
    from app.cli.support import with_database
    from app.db import short_session
    from app.models import DEFAULT_PROJECT
    from app.runs.context import warrants_of

    async def lookup(sessions: async_sessionmaker[AsyncSession]) -> Warrants:
        async with short_session(sessions) as session:
            return await warrants_of(
                session, settings, factory.registry, judge_model, scoring, DEFAULT_PROJECT
            )

    return await with_database(settings, lookup)
