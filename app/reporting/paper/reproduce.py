"""`thinkloop reproduce-think`: the paper's tables from the reference's committed per-round files."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from graphs.paper_tables import LEVELS, PaperTables, ReferenceRound, paper_tables

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

    Facts from the paper, kept as data (``think_paper_values.json``); a null is a value that is not
    bundled, and its comparison says so instead of passing or failing.
    """
    text = resources.files(__package__).joinpath("think_paper_values.json").read_text("utf-8")
    values: dict[str, Any] = json.loads(text)
    return values


class ReproduceError(ValueError):
    """The results folder cannot be read; the message says which file and why."""


@dataclass(frozen=True)
class Comparison:
    """Our value next to the paper's printed one (None when the paper's value is not bundled)."""

    ours: float | None
    paper: float | None

    @property
    def matches(self) -> bool | None:
        """Equal after rounding ours to the paper's two decimals; None when there is no paper value."""
        if self.paper is None:
            return None
        return self.ours is not None and round(self.ours, 2) == round(self.paper, 2)


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


def comparisons(tables: Mapping[str, PaperTables]) -> dict[str, dict[str, Comparison]]:
    """Every value of both tables beside the paper's: Table 1's six levels (score and change) and
    Avg., Table 2's RoundsToPass, AvgQualityScore and ±, per model."""
    printed = paper_values()
    out: dict[str, dict[str, Comparison]] = {}
    for model, t in tables.items():
        table1, table2 = printed["table1"].get(model, {}), printed["table2"].get(model, {})
        row = {
            "rounds_to_pass": Comparison(t.rounds_to_pass, table2.get("rounds_to_pass")),
            "avg_quality_score": Comparison(t.avg_quality_score, table2.get("avg_quality_score")),
            "plus_minus": Comparison(t.quality_change, table2.get("plus_minus")),
            "avg": Comparison(t.level_average, (table1.get("avg") or {}).get("score")),
        }
        for level in LEVELS:
            cell = table1.get(level) or {}
            row[f"{level}.score"] = Comparison(t.level_scores[level], cell.get("score"))
            row[f"{level}.change"] = Comparison(t.level_change[level], cell.get("change"))
        out[model] = row
    return out


def tally(rows: Mapping[str, Mapping[str, Comparison]]) -> dict[str, int]:
    """How many values match, differ, or have no bundled paper value."""
    marks = [c.matches for row in rows.values() for c in row.values()]
    return {
        "match": sum(m is True for m in marks),
        "differ": sum(m is False for m in marks),
        "not_bundled": sum(m is None for m in marks),
    }


def as_json(tables: Mapping[str, PaperTables]) -> dict[str, Any]:
    """Machine-readable tables, each value beside the paper's, and the paper's contradictions."""
    rows = comparisons(tables)
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
            "paper": {key: c.paper for key, c in rows[model].items()},
            "matches": {key: c.matches for key, c in rows[model].items()},
        }
        for model, t in tables.items()
    }
    return {"models": models, "tally": tally(rows), "contradictions": paper_values()["contradictions"]}
