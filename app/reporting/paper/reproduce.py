"""`thinkloop reproduce-think`: the paper's tables from the reference's committed per-round files."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from graphs.analysis.paper_tables import LEVELS, PaperTables, ReferenceRound, paper_tables

# The reference's column for each of our judges.
COLUMNS = {
    "remember": "remembering_score",
    "understand": "understanding_score",
    "apply": "applying_score",
    "analyze": "analyzing_score",
    "evaluate": "evaluating_score",
    "create": "creating_score",
    "holistic": "language_score",
}
# Paper model name → file stem of its per-round results in the reference repository.
MODELS = {
    "GPT-4o": "gpt-4o",
    "GPT-4o-mini": "gpt-4o-mini",
    "GPT-3.5-turbo": "gpt-3.5-turbo",
    "Qwen2.5-14B": "Qwen_Qwen2.5-14B-Instruct_metrics",
    "Qwen2.5-7B": "Qwen_Qwen2.5-7B-Instruct_metrics",
    "Ministral-8B": "mistralai_Ministral-8B-Instruct-2410_metrics",
    "Llama-3.1-8B": "meta-llama_Meta-Llama-3.1-8B-Instruct_metrics",
}


def paper_values() -> dict[str, Any]:
    """The paper's printed Table 1 and Table 2 values, and where the paper contradicts itself.

    Facts from the paper, kept as data (``think_paper_values.json``): every printed cell of both
    tables, the Average rows included; a change is kept as its magnitude (the arrows were lost).
    """
    text = resources.files(__package__).joinpath("think_paper_values.json").read_text("utf-8")
    values: dict[str, Any] = json.loads(text)
    return values


class ReproduceError(ValueError):
    """The results folder cannot be read; the message says which file and why."""


def read_rows(folder: Path, stem: str) -> list[ReferenceRound]:
    """Per-round rows from ``<stem>.csv``, or else the ``round_metrics`` of the matching JSON."""
    csv_path = folder / f"{stem}.csv"
    if csv_path.exists():
        return list(_rows(_csv_records(csv_path), csv_path))
    json_path = _json_path(folder, stem)
    if json_path is None:
        raise ReproduceError(f"{folder / stem}: neither .csv nor .json results found")
    try:
        records = json.loads(json_path.read_text("utf-8"))["round_metrics"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReproduceError(f"{json_path}: not a results file with 'round_metrics' ({exc})") from exc
    return list(_rows(enumerate(records, start=1), json_path))


def _json_path(folder: Path, stem: str) -> Path | None:
    # Names contain dots (gpt-3.5-turbo), so paths are built from strings, never with_suffix().
    for name in (f"{stem}.json", f"{stem.removesuffix('_metrics')}_results.json"):
        if (folder / name).exists():
            return folder / name
    return None


def _csv_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        yield from enumerate(csv.DictReader(handle), start=2)


def _rows(records: Iterator[tuple[int, dict[str, Any]]] | Any, path: Path) -> Iterator[ReferenceRound]:
    for line, record in records:
        try:
            yield ReferenceRound(
                problem_id=str(record["question_id"]),
                round=int(record["round"]),
                scores={judge: float(record[column]) for judge, column in COLUMNS.items()},
                confidence=float(record["average_confidence"]),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise ReproduceError(f"{path}, row {line}: missing or non-numeric field ({exc})") from exc


def reproduce(folder: Path) -> dict[str, PaperTables]:
    """Both tables for every paper model whose results are in ``folder``."""
    if not folder.is_dir():
        raise ReproduceError(f"{folder} is not a folder")
    tables = {}
    for model, stem in MODELS.items():
        if (folder / f"{stem}.csv").exists() or _json_path(folder, stem) is not None:
            tables[model] = paper_tables(read_rows(folder, stem))
    if not tables:
        raise ReproduceError(f"{folder}: no per-round results of the paper's models (e.g. gpt-4o.csv)")
    return tables


# A printed value is rounded to two decimals (±0.005), and so is each value it summarises: a mean of
# printed values and the printed mean may differ by up to 0.01 without the paper contradicting itself.
TOLERANCE = 0.01 + 1e-9
AVERAGE = "Average"
MARKS = ("match", "differs", "paper inconsistent", "not computed")


@dataclass(frozen=True)
class Cell:
    """One printed cell of Table 1 or Table 2 beside the value computed from the result files.

    ``column``: ``<level>.score`` / ``<level>.change`` (``avg`` for the Avg. column) in Table 1;
    ``rounds_to_pass``, ``avg_quality_score`` or ``change`` in Table 2. A change is printed without its
    direction, so ``ours`` keeps its sign and ``magnitude`` says the comparison uses |ours|.
    ``inconsistency`` says why the printed value contradicts the paper's other printed values.
    """

    table: int
    row: str
    column: str
    paper: float
    ours: float | None
    magnitude: bool
    inconsistency: str | None = None

    @property
    def matches(self) -> bool | None:
        """Ours, rounded to the paper's two decimals, equals the printed value; None: not computed."""
        if self.ours is None:
            return None
        ours = abs(self.ours) if self.magnitude else self.ours
        return round(ours, 2) == round(self.paper, 2)

    @property
    def mark(self) -> str:
        """``paper inconsistent`` (the printed value contradicts the paper's own numbers), else
        ``match`` / ``differs`` against ours, or ``not computed`` when the results cannot give it."""
        if self.inconsistency is not None:
            return "paper inconsistent"
        if self.matches is None:
            return "not computed"
        return "match" if self.matches else "differs"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _mean_of_magnitudes_fits(printed: float, magnitudes: list[float]) -> bool:
    """Whether some choice of the lost arrows makes ``printed`` the magnitude of the mean change."""
    means = {0.0}
    for value in magnitudes:
        means = {m + value for m in means} | {m - value for m in means}
    return any(abs(abs(m / len(magnitudes)) - printed) <= TOLERANCE for m in means)


def _check(printed: float, parts: list[float], change: bool, what: str) -> str | None:
    """None when ``printed`` is the mean of ``parts`` (of their magnitudes, with some arrows, for a
    change) within rounding; else the contradiction in words."""
    if change:
        if _mean_of_magnitudes_fits(printed, parts):
            return None
        return f"printed {printed:.2f}, but no choice of the lost arrows makes it the mean change of {what}"
    expected = _mean(parts)
    if abs(expected - printed) <= TOLERANCE:
        return None
    return f"printed {printed:.2f}, but the mean of {what} as printed is {expected:.2f}"


def paper_inconsistencies(values: Mapping[str, Any] | None = None) -> dict[tuple[int, str, str], str]:
    """Every printed summary cell (Table 1's Avg. column and Average row, Table 2's Average row) that
    is not the mean of the printed values it summarises, keyed by (table, row, column)."""
    values = values if values is not None else paper_values()
    t1, t2 = values["table1"], values["table2"]
    models = [m for m in MODELS if m in t1]
    found: dict[tuple[int, str, str], str] = {}

    def note(key: tuple[int, str, str], problem: str | None) -> None:
        if problem:
            found[key] = f"{found[key]}; {problem}" if key in found else problem

    for kind in ("score", "change"):
        change = kind == "change"
        for row in [*models, AVERAGE]:
            parts = [t1[row][level][kind] for level in LEVELS]
            note((1, row, f"avg.{kind}"), _check(t1[row]["avg"][kind], parts, change, "its six levels"))
        for level in [*LEVELS, "avg"]:
            parts = [t1[m][level][kind] for m in models]
            what = f"the {len(models)} models' {level} {kind}s"
            note((1, AVERAGE, f"{level}.{kind}"), _check(t1[AVERAGE][level][kind], parts, change, what))
    for column in ("rounds_to_pass", "avg_quality_score", "change"):
        parts = [t2[m][column] for m in models]
        what = f"the {len(models)} models' values"
        note((2, AVERAGE, column), _check(t2[AVERAGE][column], parts, column == "change", what))
    return found


def _ours(tables: Mapping[str, PaperTables]) -> dict[tuple[int, str, str], float | None]:
    """Our value for every printed cell; the Average row only when all of the paper's models are read."""
    ours: dict[tuple[int, str, str], float | None] = {}
    for model, t in tables.items():
        for level in LEVELS:
            ours[(1, model, f"{level}.score")] = t.level_scores[level]
            ours[(1, model, f"{level}.change")] = t.level_change[level]
        ours[(1, model, "avg.score")] = t.level_average
        ours[(1, model, "avg.change")] = _mean(list(t.level_change.values()))
        ours[(2, model, "rounds_to_pass")] = t.rounds_to_pass
        ours[(2, model, "avg_quality_score")] = t.avg_quality_score
        ours[(2, model, "change")] = t.quality_change / 100  # printed in quality units (0-1)
    if set(tables) == set(MODELS):
        columns = [(1, f"{level}.{kind}") for level in (*LEVELS, "avg") for kind in ("score", "change")]
        columns += [(2, c) for c in ("rounds_to_pass", "avg_quality_score", "change")]
        for table, column in columns:
            parts = [ours[(table, model, column)] for model in MODELS]
            known = [p for p in parts if p is not None]
            ours[(table, AVERAGE, column)] = _mean(known) if len(known) == len(parts) else None
    return ours


def cells(tables: Mapping[str, PaperTables]) -> list[Cell]:
    """Every printed cell of both tables, in the paper's order, each beside ours and marked."""
    printed = paper_values()
    inconsistent = paper_inconsistencies(printed)
    ours = _ours(tables)
    out: list[Cell] = []
    for row in [*MODELS, AVERAGE]:
        for level in (*LEVELS, "avg"):
            for kind in ("score", "change"):
                key = (1, row, f"{level}.{kind}")
                value = printed["table1"][row][level][kind]
                change = kind == "change"
                out.append(Cell(1, row, key[2], value, ours.get(key), change, inconsistent.get(key)))
    for row in [*MODELS, AVERAGE]:
        for column in ("rounds_to_pass", "avg_quality_score", "change"):
            key = (2, row, column)
            value = printed["table2"][row][column]
            out.append(Cell(2, row, column, value, ours.get(key), column == "change", inconsistent.get(key)))
    return out


def tally(marked: list[Cell]) -> dict[str, int]:
    """How many printed cells carry each mark."""
    return {mark: sum(c.mark == mark for c in marked) for mark in MARKS}


def as_json(tables: Mapping[str, PaperTables]) -> dict[str, Any]:
    """Machine-readable tables, every printed cell beside ours with its mark, and where the paper
    contradicts itself."""
    marked = cells(tables)
    models = {
        model: {
            "table1": {
                level: {"score": t.level_scores[level], "change": t.level_change[level]} for level in LEVELS
            },
            "table2": {
                "rounds_to_pass": t.rounds_to_pass,
                "avg_quality_score": t.avg_quality_score,
                "avg_quality_all_steps": t.avg_quality_all_steps,
                "quality_change": t.quality_change,
                "pass_rate": t.pass_rate,
                "n_problems": t.n_problems,
                "avg_quality_ci95": t.avg_quality_ci,
                "judges_fleiss_kappa": t.judges_fleiss_kappa,
            },
        }
        for model, t in tables.items()
    }
    return {
        "models": models,
        "cells": [
            {
                "table": c.table,
                "row": c.row,
                "column": c.column,
                "paper": c.paper,
                "ours": c.ours,
                "compared": "magnitude" if c.magnitude else "value",
                "mark": c.mark,
                "inconsistency": c.inconsistency,
            }
            for c in marked
        ],
        "tally": tally(marked),
        "notes": paper_values()["notes"],
        "contradictions": paper_values()["contradictions"],
    }
