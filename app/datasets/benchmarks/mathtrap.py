"""MathTrap (Zhao, Tong et al., 2024), its public part: one JSON array of objects with
``category`` (where the original comes from: ``GSM8K`` or ``MATH_<subject>``), ``trap_problem``,
``human_annotation`` (why the trap problem is flawed), ``trap_type`` (one of five),
``original_problem``, ``gpt4_annotation`` and ``original_solution``.

The source gives working for the original only. The original becomes a control (once, however many
traps were made from it); each trap problem is a flawed item sharing its pair id, whose solution is
the one a solver who does not notice the trap writes: the original's working. The evidence is the
benchmark's own annotation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.datasets.benchmarks import solutions
from app.datasets.benchmarks.common import Benchmark, BenchmarkError, Item, control, flawed, load_json, need

# trap type → the nearest taxonomy type
TRAP_TYPES: dict[str, str] = {
    "Concept Undefined": "impossible_quantity",
    "Missing Condition": "missing_data",
    "Direct Contradiction": "contradictory_data",
    "Indirect Contradiction": "contradictory_data",
    "Violating Common Sense": "impossible_quantity",
}
_FIELDS = (
    "category",
    "trap_problem",
    "human_annotation",
    "trap_type",
    "original_problem",
    "original_solution",
)


def convert(path: Path, split: str) -> list[Item]:
    """Every trap problem as a flawed item, and each distinct original once as its control."""
    rows = load_json(path)
    if not isinstance(rows, list) or not rows:
        raise BenchmarkError(f"{path}: expected a JSON array of MathTrap problems")
    pairs: dict[str, str] = {}
    items: list[Item] = []
    for index, row in enumerate(rows, start=1):
        where = f"{path}: problem {index}"
        for field in _FIELDS:
            need(row, field, str, where)
        if row["trap_type"] not in TRAP_TYPES:
            known = ", ".join(TRAP_TYPES)
            raise BenchmarkError(f"{where}: unknown 'trap_type' {row['trap_type']!r} (known: {known})")
        solution = _solution(row)
        pair = pairs.get(row["original_problem"])
        if pair is None:
            pair = pairs[row["original_problem"]] = f"mathtrap-pair-{len(pairs) + 1}"
            items.append(_original(row, solution, pair, split))
        items.append(_trap(row, index, solution, pair, split))
    return items


def _solution(row: dict[str, Any]) -> str:
    """The original's working in the one convention (GSM8K lines, or MATH's worked text)."""
    if row["category"] == "GSM8K":
        return solutions.from_gsm8k(row["original_problem"], row["original_solution"])
    return solutions.from_math(row["original_solution"])


def _answer(solution: str) -> str:
    """The answer a solution's final sentence states ("The answer is 56 gumballs." → 56 gumballs)."""
    last = solution.rsplit("The answer is ", 1)
    return last[1].removesuffix(".") if len(last) == 2 else ""


def _original(row: dict[str, Any], solution: str, pair: str, split: str) -> Item:
    ident = pair.replace("-pair-", "-original-")
    item = control(BENCHMARK, ident, (row["original_problem"], solution), _answer(solution), split)
    return item | {"pair": pair}


def _trap(row: dict[str, Any], index: int, solution: str, pair: str, split: str) -> Item:
    trap = row["trap_type"]
    evidence = f"MathTrap, {trap} ({row['category']}): {row['human_annotation']}"
    problem = (row["trap_problem"], solution)
    item = flawed(BENCHMARK, f"mathtrap-{index}", problem, (TRAP_TYPES[trap], trap, evidence), split)
    return item | {"pair": pair}


BENCHMARK = Benchmark(
    name="MathTrap",
    licence="Apache-2.0",
    url="https://github.com/tongjingqi/MathTrap (data/MathTrap_Public/MathTrap_Public.json)",
    layout="one JSON array of objects with trap_problem, trap_type, original_problem, original_solution",
    what="104 trap problems made from GSM8K and MATH problems, each with its original and its working",
    convert=convert,
)
