"""Public benchmarks of flawed or unanswerable math problems, converted into labelled sets.

The project ships none of a benchmark's items: the user downloads the benchmark's file, and
``import_benchmark`` reads it. Each importer keeps the benchmark's own category beside the nearest
taxonomy type, pairs each flawed item with its sound original (one ``pair`` id), and marks every
item's ``source`` (the benchmark's name, kind ``public benchmark``, its licence).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from agents.labelled.labels import LabelledItem, LabelsError, check_labelled
from app.datasets.benchmarks import mathtrap, umwp
from app.datasets.benchmarks.common import Benchmark, BenchmarkError, Item

BENCHMARKS: dict[str, Benchmark] = {
    bench.name.lower(): bench for bench in (umwp.BENCHMARK, mathtrap.BENCHMARK)
}

__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkError", "import_benchmark", "to_jsonl"]


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name`` (any case), or a BenchmarkError listing the known ones."""
    found = BENCHMARKS.get(name.lower())
    if found is None:
        known = ", ".join(bench.name for bench in BENCHMARKS.values())
        raise BenchmarkError(f"unknown benchmark {name!r}; known: {known}")
    return found


def import_benchmark(name: str, path: Path, split: str = "heldout") -> list[Item]:
    """Every item of the benchmark file at ``path`` in the labelled format, each one checked as
    ``judges validate`` reads it; a BenchmarkError (naming where) when any is not."""
    if split not in ("tune", "heldout"):
        raise BenchmarkError(f"split is tune or heldout, not {split!r}")
    bench = benchmark(name)
    try:
        items = bench.convert(path, split)
    except BenchmarkError as exc:
        raise BenchmarkError(f"{exc}; a {bench.name} file is {bench.layout}") from exc
    for item in items:
        try:
            LabelledItem.model_validate(item)
        except ValidationError as exc:
            raise BenchmarkError(
                f"{path}: item {item['id']} is not a labelled item: {exc.errors()[0]['msg']}"
            ) from exc
    try:
        check_labelled([LabelledItem.model_validate(item) for item in items], str(path))
    except LabelsError as exc:
        raise BenchmarkError(str(exc)) from exc
    return items


def to_jsonl(items: list[Item]) -> str:
    """The labelled JSONL of ``items``: one object a line, in order, non-ASCII as itself."""
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
