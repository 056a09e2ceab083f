"""`thinkloop datasets import NAME FILE`: a public benchmark's file becomes a labelled set.

Every row here is written for the test, in the benchmark's own format (its field names, nesting and
category names); none is a benchmark's item.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from agents.labelled.labels import LabelledItem, read_labelled
from app.cli import cli

runner = CliRunner()


def _umwp(ident: int, question: str, answer: Any, category: int | None = None, original: int = 0) -> str:
    row = {
        "id": ident,
        "question": question,
        "answer": answer,
        "answerable": category is None,
        "category": category,
        "relevant_ids": [original] if category else None,
        "source": "SVAMP",
    }
    return json.dumps(row)


UMWP_ROWS = [
    _umwp(1, "Nia has 12 shells. Omar has 5 shells.How many more shells does Nia have than Omar?", [7.0]),
    _umwp(2, "A box holds 6 pears. How many pears are in 4 boxes?", [24.0]),
    _umwp(3, "Tom had 20 stamps. He gave 8 stamps to Lea..How many stamps does Tom have left?", [12.0]),
    _umwp(4, "A pen costs $ 3. Kim buys 5 pens..How much money does Kim spend?", [15.0]),
    _umwp(5, "Ali read 9 pages on Monday and 11 pages on Tuesday.", [20.0]),
    _umwp(6, "Ali read 9 pages on Monday and 11 pages on Tuesday.How many pages did he read in all?", [20.0]),
    _umwp(11, "Nia has 12 shells.How many more shells does Nia have than Omar?", None, 1, 1),
    _umwp(12, "A box holds several pears. How many pears are in 4 boxes?", None, 2, 2),
    _umwp(13, "Tom had 20 stamps. He gave -8 stamps to Lea..How many stamps does Tom have left?", None, 3, 3),
    _umwp(14, "A pen costs $ 3. Kim buys 5 pens..How much money does Kim spend on rulers?", None, 4, 4),
    _umwp(15, "Ali read 9 pages on Monday and 11 pages on Tuesday. ", None, 5, 6),
]

MATHTRAP_ROWS = [
    {
        "category": "GSM8K",
        "trap_problem": "A farm has 10 hens and 4 cows. Each hen has 2 legs and each cow has 4 legs, and "
        "each cow has 3 legs. How many legs are there?",
        "human_annotation": "A cow is said to have both 4 legs and 3 legs.",
        "trap_type": "Direct Contradiction",
        "original_problem": "A farm has 10 hens and 4 cows. Each hen has 2 legs and each cow has 4 legs. "
        "How many legs are there?",
        "gpt4_annotation": "The two statements about a cow's legs disagree, so no count follows.",
        "original_solution": "The hens have 10*2=<<10*2=20>>20 legs.\nThe cows have 4*4=<<4*4=16>>16 legs.\n"
        "Together 20+16=<<20+16=36>>36 legs.\n#### 36",
    },
    {
        "category": "GSM8K",
        "trap_problem": "A farm has hens and 4 cows. Each hen has 2 legs and each cow has 4 legs. How many "
        "legs are there?",
        "human_annotation": "The number of hens is not given.",
        "trap_type": "Missing Condition",
        "original_problem": "A farm has 10 hens and 4 cows. Each hen has 2 legs and each cow has 4 legs. "
        "How many legs are there?",
        "gpt4_annotation": "Without the number of hens the total cannot be found.",
        "original_solution": "The hens have 10*2=<<10*2=20>>20 legs.\nThe cows have 4*4=<<4*4=16>>16 legs.\n"
        "Together 20+16=<<20+16=36>>36 legs.\n#### 36",
    },
    {
        "category": "MATH_algebra",
        "trap_problem": "Find the real number $x$ with $x^2 = -9$ and $x > 0$.",
        "human_annotation": "No real number squares to a negative number.",
        "trap_type": "Concept Undefined",
        "original_problem": "Find the real number $x$ with $x^2 = 9$ and $x > 0$.",
        "gpt4_annotation": "A real square is never negative.",
        "original_solution": "Since $x>0$ and $x^2=9$, $x=\\sqrt{9}=\\boxed{3}$.",
    },
]


def _import(name: str, source: Path, out: Path) -> Any:
    return runner.invoke(cli, ["datasets", "import", name, str(source), "--output", str(out)])


def _by_id(path: Path) -> dict[str, LabelledItem]:
    return {item.id: item for item in read_labelled(path)}


def test_umwp_rows_become_pairs_with_their_category_and_source(tmp_path: Path) -> None:
    source, out = tmp_path / "StandardDataset.jsonl", tmp_path / "umwp.jsonl"
    source.write_text("\n".join(UMWP_ROWS) + "\n", encoding="utf-8")
    result = _import("UMWP", source, out)
    assert result.exit_code == 0, result.stderr
    assert "UMWP: 11 items (5 flawed, 6 sound), 6 pairs" in result.stderr
    items = _by_id(out)
    assert {item.source.name for item in items.values() if item.source} == {"UMWP"}
    assert all(item.source and item.source.kind == "benchmark" for item in items.values())
    assert all(item.source and item.source.licence == "CC-BY-SA-4.0" for item in items.values())
    assert all(item.split == "heldout" for item in items.values())
    first = {i: items[f"umwp-{i}"].flaws[0] for i in range(11, 16)}
    flaws = {i: (flaw.type, flaw.category) for i, flaw in first.items()}
    assert flaws == {
        11: ("missing_data", "missing key information"),
        12: ("missing_data", "ambiguous key information"),
        13: ("impossible_quantity", "unrealistic conditions"),
        14: ("missing_data", "unrelated object"),
        15: ("missing_or_multiple_questions", "question missing"),
    }
    for flawed, original in ((11, 1), (12, 2), (13, 3), (14, 4), (15, 6)):
        assert items[f"umwp-{flawed}"].pair == items[f"umwp-{original}"].pair == f"umwp-pair-{original}"
        # a solver who misses the flaw answers the original: its working and its answer
        assert items[f"umwp-{flawed}"].solution == items[f"umwp-{original}"].solution
    assert "no longer gives 5" in items["umwp-11"].flaws[0].evidence
    assert "-8" in items["umwp-13"].flaws[0].evidence


def test_umwp_solutions_follow_one_convention(tmp_path: Path) -> None:
    """Working from the question's numbers, then the answer with its unit as a solver writes it."""
    source, out = tmp_path / "umwp-rows.jsonl", tmp_path / "umwp.jsonl"
    source.write_text("\n".join(UMWP_ROWS), encoding="utf-8")
    assert _import("umwp", source, out).exit_code == 0
    items = _by_id(out)
    assert items["umwp-1"].solution == "12 - 5 = 7. The answer is 7 shells."
    assert items["umwp-2"].solution == "6 × 4 = 24. The answer is 24 pears."
    assert items["umwp-4"].solution == "3 × 5 = 15. The answer is $15."
    assert (items["umwp-2"].answer, items["umwp-4"].answer) == ("24 pears", "$15")


def test_mathtrap_traps_share_one_control_per_original(tmp_path: Path) -> None:
    source, out = tmp_path / "MathTrap_Public.json", tmp_path / "mathtrap.jsonl"
    source.write_text(json.dumps(MATHTRAP_ROWS, indent=4), encoding="utf-8")
    result = _import("MathTrap", source, out)
    assert result.exit_code == 0, result.stderr
    items = read_labelled(out)
    assert [(item.id, item.kind, item.pair) for item in items] == [
        ("mathtrap-original-1", "control", "mathtrap-pair-1"),
        ("mathtrap-1", "flawed", "mathtrap-pair-1"),
        ("mathtrap-2", "flawed", "mathtrap-pair-1"),
        ("mathtrap-original-2", "control", "mathtrap-pair-2"),
        ("mathtrap-3", "flawed", "mathtrap-pair-2"),
    ]
    original, trap, missing, _, undefined = items
    assert original.solution == (
        "The hens have 10*2=20 legs.\nThe cows have 4*4=16 legs.\n"
        "Together 20+16=36 legs.\nThe answer is 36 legs."
    )
    assert original.answer == "36 legs" and trap.solution == original.solution
    assert [(i.flaws[0].type, i.flaws[0].category) for i in (trap, missing, undefined)] == [
        ("contradictory_data", "Direct Contradiction"),
        ("missing_data", "Missing Condition"),
        ("impossible_quantity", "Concept Undefined"),
    ]
    assert "A cow is said to have both 4 legs and 3 legs." in trap.flaws[0].evidence
    assert items[3].solution.endswith("\nThe answer is 3.")
    assert all(i.source and (i.source.name, i.source.licence) == ("MathTrap", "Apache-2.0") for i in items)


def test_stdout_and_the_tune_split(tmp_path: Path) -> None:
    source = tmp_path / "MathTrap_Public.json"
    source.write_text(json.dumps(MATHTRAP_ROWS), encoding="utf-8")
    result = runner.invoke(cli, ["datasets", "import", "mathtrap", str(source), "--split", "tune"])
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 5 and {line["split"] for line in lines} == {"tune"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("FaultyBench", "[]", "unknown benchmark 'FaultyBench'; known: UMWP, MathTrap"),
        ("UMWP", json.dumps(MATHTRAP_ROWS, indent=2), "a UMWP file is one JSON object a line"),
        ("MathTrap", "\n".join(UMWP_ROWS), "a MathTrap file is one JSON array of objects"),
        ("MathTrap", "[]", "expected a JSON array of MathTrap problems"),
        ("MathTrap", json.dumps([MATHTRAP_ROWS[0] | {"trap_type": "Trick"}]), "unknown 'trap_type' 'Trick'"),
        ("MathTrap", json.dumps([{"category": "GSM8K"}]), "problem 1: no 'trap_problem' field"),
        ("UMWP", UMWP_ROWS[0] + "\n" + _umwp(9, "Who?", None, 7, 1), ":2: an unanswerable row's 'category'"),
        ("UMWP", _umwp(9, "How many?", None, 1, 4), ":1: 'relevant_ids' [4] names no answerable row"),
        ("UMWP", UMWP_ROWS[0] + "\n" + UMWP_ROWS[0], ":2: id 1 repeats line 1"),
        ("UMWP", _umwp(1, "How many?", ["seven"]), "'answer' is a number or [number]"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    source, out = tmp_path / "benchmark-file", tmp_path / "out.jsonl"
    source.write_text(content, encoding="utf-8")
    out.write_text("kept\n", encoding="utf-8")
    result = _import(name, source, out)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert out.read_text(encoding="utf-8") == "kept\n"  # the old file stands, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["benchmark-file", "out.jsonl"]


def test_a_missing_file_is_a_message() -> None:
    result = runner.invoke(cli, ["datasets", "import", "umwp", "/nonexistent/umwp.jsonl"])
    assert result.exit_code == 2 and "cannot read /nonexistent/umwp.jsonl" in result.stderr


def test_a_source_has_a_known_kind_and_a_flaw_category_is_a_name() -> None:
    base = {"id": "a", "split": "tune", "kind": "control", "question": "How many?", "solution": "2."}
    assert LabelledItem.model_validate(base).source is None  # sets written before sources still read
    with pytest.raises(ValidationError, match=r"source\.kind"):
        LabelledItem.model_validate(base | {"source": {"name": "X", "kind": "blog"}})
    flaw = {"type": "missing_data", "levels": ["evaluate"], "evidence": "e", "category": ""}
    with pytest.raises(ValidationError, match="category"):
        LabelledItem.model_validate(base | {"kind": "flawed", "flaws": [flaw]})
