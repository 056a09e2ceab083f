"""The ``thinkloop`` command: one Typer app, assembled from a module per command group.

Each module imports only Typer and Rich at the top; what a command needs it imports inside
itself, so `thinkloop --help` starts in well under a second (`bench/cold_start.py` measures it).
"""

from __future__ import annotations

from typing import Annotated

import typer

from app.cli import (
    batch,
    calibrate,
    datasets,
    judges,
    keys,
    models,
    paper,
    refine,
    reviews,
    service,
    simulate,
    view,
)

cli = typer.Typer(help="thinkloop: judge and refine flawed math word problems.", no_args_is_help=True)
cli.command()(refine.refine)
cli.command("simulate-llm")(simulate.simulate_llm)
cli.add_typer(models.models_cli, name="models")
judges.judges_cli.command("calibrate")(calibrate.judges_calibrate)  # beside validate, apart from it
cli.add_typer(judges.judges_cli, name="judges")
cli.command("reproduce-think")(paper.reproduce_think)
cli.add_typer(datasets.datasets_cli, name="datasets")
cli.add_typer(batch.batch_cli, name="batch")
cli.command("worker", help="The same as `thinkloop batch worker`.")(batch.worker)
cli.add_typer(keys.projects_cli, name="projects")
cli.add_typer(keys.keys_cli, name="keys")
cli.add_typer(reviews.reviews_cli, name="reviews")
cli.command("migrate")(service.migrate_command)
cli.command("purge")(service.purge_command)
cli.command()(service.serve)
cli.command()(view.view)


def _version(shown: bool) -> None:
    if shown:
        from app.version import describe

        typer.echo(describe())
        raise typer.Exit()


@cli.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and git revision"
        ),
    ] = False,
) -> None:
    """thinkloop: judge and refine flawed math word problems."""


def main() -> None:
    """Entry point of the ``thinkloop`` script."""
    cli()
