"""`thinkloop models` and `thinkloop models check`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.support import MODELS_FILE_HELP, fail, registry_from

if TYPE_CHECKING:
    from agents.panel import PanelFactory
    from agents.probe import Capabilities

models_cli = typer.Typer(help="List the usable models, or probe one endpoint.", invoke_without_command=True)


@models_cli.callback()
def models(
    context: typer.Context,
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
) -> None:
    """List the usable model names."""
    from app.settings import get_settings

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
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the capabilities as JSON")] = False,
) -> None:
    """Probe an endpoint once per capability, say how thinkloop will talk to it, and fail (exit 1)
    when it did not answer or a judge's prompt for a long problem and its max_tokens do not fit the
    server's context per slot."""
    from agents.llm.models import ModelConfigError, UnknownModelError
    from app.cli.model_check import check_report, render_check
    from app.logging import configure_logging
    from app.panels import panel_factory
    from app.settings import get_settings

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)  # on stderr: stdout is the report
    registry = registry_from(settings, models_file)
    try:
        spec = registry.get(name)
        if spec is None:
            fail(f"{name!r} is the offline panel: it has no endpoint to check")
        found = asyncio.run(_check(panel_factory(settings, registry), name))
    except (UnknownModelError, ModelConfigError) as exc:
        fail(str(exc))
    report = check_report(spec, found)
    typer.echo(json.dumps(report, indent=2) if as_json else render_check(report))
    if not found.reachable or found.misfits:
        raise typer.Exit(1)


async def _check(factory: PanelFactory, name: str) -> Capabilities:
    async with factory:
        return await factory.check(name)
