"""UMWP (Unanswerable Math Word Problems; Sun et al., LREC-COLING 2024): one JSON object a line,
``id``, ``question``, ``answer`` (a list of one number, or null when unanswerable), ``answerable``,
``category`` (null or 0 when answerable, 1–5 when not), ``relevant_ids`` (an unanswerable
problem's answerable original) and ``source`` (the dataset the original comes from).

The source gives answers but no working, so every solution is built (``solutions.from_answer``).
A flawed item's solution is the one a solver who does not notice the flaw writes: the original's,
which uses what the flawed version no longer gives; the evidence says what that is.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from app.datasets.benchmarks import solutions
from app.datasets.benchmarks.common import Benchmark, BenchmarkError, Item, control, flawed, load_jsonl, need

# category → (the benchmark's name for it, the nearest taxonomy type)
CATEGORIES: dict[int, tuple[str, str]] = {
    1: ("missing key information", "missing_data"),
    2: ("ambiguous key information", "missing_data"),
    3: ("unrealistic conditions", "impossible_quantity"),
    4: ("unrelated object", "missing_data"),
    5: ("question missing", "missing_or_multiple_questions"),
}


def convert(path: Path, split: str) -> list[Item]:
    """Every UMWP row as a labelled item: answerable ones as controls, each unanswerable one as a
    flawed item sharing its original's pair id."""
    rows: dict[int, tuple[int, dict[str, Any]]] = {}
    for number, raw in load_jsonl(path):
        line, row = _row(path, number, raw)
        if row["id"] in rows:
            raise BenchmarkError(f"{path}:{line}: id {row['id']} repeats line {rows[row['id']][0]}")
        rows[row["id"]] = (line, row)
    if not rows:
        raise BenchmarkError(f"{path}: no rows")
    items: list[Item] = []
    for _ident, (line, row) in rows.items():
        where = f"{path}:{line}"
        if row["answerable"]:
            items.append(_sound(row, split))
        else:
            original = _original(rows, row, where)
            items.append(_flawed(row, original, split, where))
    return items


def _row(path: Path, line: int, row: Any) -> tuple[int, dict[str, Any]]:
    """A row with the fields every UMWP row has, checked."""
    where = f"{path}:{line}"
    need(row, "id", int, where)
    need(row, "question", str, where)
    if need(row, "answerable", bool, where):
        _answer(row, where)
    elif row.get("category") not in CATEGORIES:
        raise BenchmarkError(f"{where}: an unanswerable row's 'category' is 1-5, not {row.get('category')!r}")
    return line, row


def _answer(row: dict[str, Any], where: str) -> Fraction:
    """The answer of an answerable row: a number, or a list whose first element is one."""
    value = row.get("answer")
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BenchmarkError(f"{where}: an answerable row's 'answer' is a number or [number], not {value!r}")
    return Fraction(str(value))


def _original(rows: dict[int, tuple[int, dict[str, Any]]], row: dict[str, Any], where: str) -> dict[str, Any]:
    """The answerable original an unanswerable row names in ``relevant_ids``."""
    ids = need(row, "relevant_ids", list, where)
    found = [rows[i][1] for i in ids if i in rows and rows[i][1]["answerable"]]
    if not found:
        raise BenchmarkError(f"{where}: 'relevant_ids' {ids} names no answerable row of the file")
    return found[0]


def _pair(original: dict[str, Any]) -> str:
    return f"umwp-pair-{original['id']}"


def _solution(row: dict[str, Any]) -> tuple[str, str]:
    """(solution, answer with unit) of an answerable row."""
    value = _answer(row, "")
    unit = solutions.unit_of(row["question"])
    answer = solutions.final_sentence(solutions.show(value), unit).removeprefix("The answer is ")
    return solutions.from_answer(row["question"], value), answer.removesuffix(".")


def _sound(row: dict[str, Any], split: str) -> Item:
    solution, answer = _solution(row)
    item = control(BENCHMARK, f"umwp-{row['id']}", (row["question"], solution), answer, split)
    return item | {"pair": _pair(row)}


def _flawed(row: dict[str, Any], original: dict[str, Any], split: str, where: str) -> Item:
    category, kind = CATEGORIES[row["category"]]
    solution, _ = _solution(original)
    evidence = _evidence(row["category"], row["question"], original["question"])
    item = flawed(
        BENCHMARK, f"umwp-{row['id']}", (row["question"], solution), (kind, category, evidence), split
    )
    return item | {"pair": _pair(original)}


def _evidence(category: int, question: str, original: str) -> str:
    """What the flawed version lacks or adds against its original, in the benchmark's terms."""
    lost = _missing(original, question)
    added = _missing(question, original)
    name = CATEGORIES[category][0]
    if category == 5:
        return f"UMWP, {name}: the problem asks nothing; its original asked a question here"
    if category == 3 and added:
        return (
            f"UMWP, {name}: {', '.join(added)} is a quantity the story cannot have (its original gave none)"
        )
    if category == 4:
        return f"UMWP, {name}: the question asks about something the story never introduces"
    if lost:
        return f"UMWP, {name}: the problem no longer gives {', '.join(lost)}, which the answer needs"
    return f"UMWP, {name}: a quantity the answer needs is not given exactly"


def _missing(text: str, other: str) -> list[str]:
    """The numbers ``text`` gives that ``other`` does not (as written)."""
    theirs = set(solutions.numbers(other))
    return [solutions.show(n) for n in dict.fromkeys(solutions.numbers(text)) if n not in theirs]


BENCHMARK = Benchmark(
    name="UMWP",
    licence="CC-BY-SA-4.0",
    url="https://github.com/Yuki-Asuuna/UMWP (data/StandardDataset.jsonl)",
    layout="one JSON object a line with id, question, answer, answerable, category, relevant_ids",
    what="5,200 grade-school word problems: 2,600 answerable, each with one unanswerable variant",
    convert=convert,
)
