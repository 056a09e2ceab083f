"""What every benchmark importer shares: the benchmark's description, its errors, and the items it
writes (a flawed item and its sound original share a pair id; each carries its source)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.labelled.labels import TAXONOMY

Item = dict[str, Any]
EVIDENCE_CHARS = 1000


class BenchmarkError(ValueError):
    """The file is not the benchmark's format (or cannot be read); the message says where and why."""


@dataclass(frozen=True)
class Benchmark:
    """A public benchmark thinkloop can import: its name, licence, where to get it, and its reader."""

    name: str
    licence: str
    url: str
    what: str
    layout: str  # the file's shape, as an error message names it
    convert: Callable[[Path, str], list[Item]]

    def source(self) -> Item:
        """The ``source`` every item imported from it carries."""
        return {"name": self.name, "kind": "benchmark", "licence": self.licence}


def load_json(path: Path) -> Any:
    """The JSON value of a whole file, or a BenchmarkError naming the file and why."""
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"cannot read {path}: {exc}") from exc
    except ValueError as exc:
        raise BenchmarkError(f"{path}: not JSON ({exc})") from exc


def load_jsonl(path: Path) -> list[tuple[int, Any]]:
    """Each non-blank line's JSON value with its line number, or a BenchmarkError naming the line."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"cannot read {path}: {exc}") from exc
    rows = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                rows.append((number, json.loads(line)))
            except ValueError as exc:
                raise BenchmarkError(f"{path}:{number}: not a JSON line ({exc})") from exc
    return rows


def need(row: Any, field: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``row[field]`` when ``row`` is an object holding a value of ``kind`` there; else why not."""
    if not isinstance(row, dict):
        raise BenchmarkError(f"{where}: expected an object, found {type(row).__name__}")
    if field not in row:
        raise BenchmarkError(f"{where}: no {field!r} field")
    value = row[field]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
        raise BenchmarkError(f"{where}: {field!r} is {type(value).__name__}, not {_name(kind)}")
    if isinstance(value, str) and not value.strip():
        raise BenchmarkError(f"{where}: {field!r} is empty")
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _name(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _kinds(kind))


def flawed(
    bench: Benchmark, ident: str, problem: tuple[str, str], flaw: tuple[str, str, str], split: str
) -> Item:
    """A flawed item: ``problem`` is (question, solution), ``flaw`` is (taxonomy type, the
    benchmark's category, evidence)."""
    kind, category, evidence = flaw
    return {
        "id": ident,
        "split": split,
        "kind": "flawed",
        "question": problem[0],
        "solution": problem[1],
        "flaws": [
            {
                "type": kind,
                "levels": list(TAXONOMY[kind][1]),
                "evidence": _clip(evidence),
                "category": category,
            }
        ],
        "source": bench.source(),
    }


def control(bench: Benchmark, ident: str, problem: tuple[str, str], answer: str, split: str) -> Item:
    """A sound item (the benchmark's original of a pair, or a problem it marks answerable)."""
    return {
        "id": ident,
        "split": split,
        "kind": "control",
        "question": problem[0],
        "solution": problem[1],
        "answer": answer,
        "source": bench.source(),
    }


def _clip(text: str) -> str:
    """Evidence within the format's 1,000 characters, cut at a word with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= EVIDENCE_CHARS:
        return text
    return text[: EVIDENCE_CHARS - 1].rsplit(" ", 1)[0] + "…"
