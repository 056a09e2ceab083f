"""`thinkloop datasets synth|validate|hash|import`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.support import err, fail
from app.datasets.synthetic import MAX_SYNTHETIC, synthetic_jsonl

datasets_cli = typer.Typer(help="Validate or generate problem sets.", no_args_is_help=True)


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


@datasets_cli.command("hash")
def datasets_hash(
    file: Annotated[Path, typer.Argument(help="A labelled set (JSONL): one JSON object per line")],
) -> None:
    """Print the set hash of FILE: the SHA-256 of its canonical JSONL (each non-blank line's JSON with
    sorted keys, compact, UTF-8, newline-ended, in file order), as a validity record holds it."""
    from agents.labelled.canonical import CanonicalError, file_hash

    try:
        typer.echo(file_hash(file))
    except CanonicalError as exc:
        fail(str(exc), code=1)


@datasets_cli.command("import")
def datasets_import(
    name: Annotated[str, typer.Argument(help="The benchmark: UMWP or MathTrap")],
    file: Annotated[Path, typer.Argument(help="The benchmark's file, as downloaded")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the labelled JSONL here (default: stdout)")
    ] = None,
    split: Annotated[
        str, typer.Option(help="heldout (default) or tune: the split every item gets")
    ] = "heldout",
) -> None:
    """Convert a public benchmark's file into a labelled set (JSONL) for `judges validate`: each
    flawed item paired with its sound original, its category beside a taxonomy type, its source
    named. Nothing is written unless every row converts."""
    from app.datasets.benchmarks import BenchmarkError, import_benchmark, to_jsonl

    try:
        items = import_benchmark(name, file, split)
    except BenchmarkError as exc:
        fail(str(exc))
    text = to_jsonl(items)
    if output is None:
        typer.echo(text, nl=False)
    else:
        _write_whole(output, text)
    flawed = sum(item["kind"] == "flawed" for item in items)
    pairs = len({item["pair"] for item in items if "pair" in item})
    err.print(
        f"{items[0]['source']['name']}: {len(items)} items ({flawed} flawed, {len(items) - flawed} sound), "
        f"{pairs} pairs{f' -> {output}' if output else ''}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` all at once: a temporary file beside it, renamed over it."""
    temporary = path.with_name(f".{path.name}.partial")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        fail(f"cannot write {path}: {exc.strerror}")
