"""`thinkloop reproduce-think`: the THiNK paper's tables from the reference's logged rounds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from app.cli.support import fail


def reproduce_think(
    results_dir: Annotated[Path, typer.Argument(help="The THiNK reference's results folder")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the tables as JSON")] = False,
) -> None:
    """Recompute the THiNK paper's Table 1 and Table 2 from its per-round result files."""
    from app.reporting.paper.render import render
    from app.reporting.paper.reproduce import ReproduceError, reproduce
    from app.reporting.paper.reproduce import as_json as tables_json

    try:
        tables = reproduce(results_dir)
    except ReproduceError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(tables_json(tables), indent=2))
    else:
        render(Console(), tables)
