"""`thinkloop reproduce-think` on small result files in the reference's formats."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.reporting.paper.reproduce import COLUMNS, Cell
from tests.helpers import paths

runner = CliRunner()
HEADER = [
    "round",
    "question_id",
    "current_question",
    "current_solution",
    "average_confidence",
    "pass_rate",
    "agent_agreement",
    "quality_score",
    "improvement_suggestions",
    *COLUMNS.values(),
]


def record(question: str, round_no: int, score: float) -> dict[str, object]:
    fields: dict[str, object] = {
        "round": round_no,
        "question_id": question,
        "current_question": "q",
        "current_solution": "s",
        "average_confidence": 80.0,
        "pass_rate": 0.0,
        "agent_agreement": 0.0,
        "quality_score": 0.0,
        "improvement_suggestions": "",
    }
    return fields | dict.fromkeys(COLUMNS.values(), score)


RECORDS = [record("1", 1, 50), record("1", 2, 90), record("2", 1, 50), record("2", 2, 50)]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    with (tmp_path / "gpt-4o.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=HEADER)
        writer.writeheader()
        writer.writerows(RECORDS)
    # An open model in the JSON layout, with a superseded first try of problem 1's round 2.
    rounds = [*RECORDS[:1], record("1", 2, 50), *RECORDS[1:]]
    (tmp_path / "Qwen_Qwen2.5-7B-Instruct_results.json").write_text(
        json.dumps({"summary": [], "round_metrics": rounds})
    )
    return tmp_path


def test_prints_both_tables_with_matches_marked(results: Path) -> None:
    result = runner.invoke(cli, ["reproduce-think", str(results)], env={"COLUMNS": "260"})
    assert result.exit_code == 0, result.output
    assert "Table 1" in result.output and "Table 2" in result.output
    assert "GPT-4o " in result.output and "Qwen2.5-7B" in result.output
    flat = " ".join(result.output.split())
    assert "2.00 ✗ paper 2.35" in flat  # our fixture is not the paper's data
    assert "0 not computed" not in flat  # the Average row needs all seven models
    assert "Where the paper contradicts itself" in flat and "Cohen's kappa" in flat


def test_json_output(results: Path) -> None:
    report = json.loads(runner.invoke(cli, ["reproduce-think", str(results), "--json"]).output)
    data = report["models"]
    assert set(data) == {"GPT-4o", "Qwen2.5-7B"}
    assert len(report["cells"]) == 136 and len(report["contradictions"]) == 5
    gpt = data["GPT-4o"]
    assert gpt["table2"]["rounds_to_pass"] == 2.0 and gpt["table2"]["pass_rate"] == 0.5
    assert gpt["table2"]["avg_quality_score"] == pytest.approx(100 * (0.96 + 0.46) / 2)
    cell = next(c for c in report["cells"] if (c["row"], c["column"]) == ("GPT-4o", "rounds_to_pass"))
    assert cell == {
        "table": 2,
        "row": "GPT-4o",
        "column": "rounds_to_pass",
        "paper": 2.35,
        "ours": 2.0,
        "compared": "value",
        "mark": "differs",
        "inconsistency": None,
    }
    assert gpt["table2"]["judges_fleiss_kappa"] == pytest.approx(1.0)  # all-pass or all-fail versions
    low, high = gpt["table2"]["avg_quality_ci95"]
    assert low <= gpt["table2"]["avg_quality_score"] <= high
    assert gpt["table1"]["remember"] == {"score": 70.0, "change": 20.0}
    assert data["Qwen2.5-7B"]["table2"] == gpt["table2"]  # the superseded row lost to the later one


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: d / "missing", "is not a folder"),
        (lambda d: d, "no per-round results"),
        (lambda d: (d / "gpt-4o.csv").write_text("round,question_id\n1,1\n") and d, "row 2: missing"),
        (lambda d: (d / "gpt-4o.json").write_text("[1, 2]") and d, "not a results file"),
    ],
)
def test_unreadable_folders_are_refused(tmp_path: Path, setup: object, message: str) -> None:
    folder = setup(tmp_path)  # type: ignore[operator]
    result = runner.invoke(cli, ["reproduce-think", str(folder)])
    assert result.exit_code == 2 and message in result.output.replace("\n", "")


def test_a_cell_compares_at_the_papers_precision_and_a_change_by_its_magnitude() -> None:
    assert Cell(2, "GPT-4o", "rounds_to_pass", 2.35, 2.3488, magnitude=False).mark == "match"
    assert Cell(2, "GPT-4o", "rounds_to_pass", 2.35, 2.344, magnitude=False).mark == "differs"
    assert Cell(1, "GPT-4o", "apply.change", 0.46, -0.4583, magnitude=True).mark == "match"
    assert Cell(1, "GPT-4o", "apply.score", 0.46, -0.4583, magnitude=False).mark == "differs"
    assert Cell(2, "GPT-4o", "rounds_to_pass", 2.35, None, magnitude=False).mark == "not computed"
    inconsistent = Cell(1, "Average", "avg.score", 1.0, 1.0, magnitude=False, inconsistency="why")
    assert inconsistent.matches and inconsistent.mark == "paper inconsistent"


# Committed fixtures in the reference's layouts (five CSVs, two JSONs with a superseded row), written for
# these tests: one problem per model, two rounds, whose last round holds the paper's printed Table 1
# level scores and whose changes have the printed magnitudes (Apply falling, the others rising). The
# judges never all reach 85, so no problem passes.
FIXTURES = paths.FIXTURES / "think_results"


def _marks(report: dict[str, Any]) -> dict[tuple[int, str, str], str]:
    return {(c["table"], c["row"], c["column"]): c["mark"] for c in report["cells"]}


def test_every_printed_cell_is_marked_from_the_committed_fixtures() -> None:
    result = runner.invoke(cli, ["reproduce-think", str(FIXTURES), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    marks = _marks(report)
    # 8 rows × 7 columns × (score, change) in Table 1 and 8 rows × 3 columns in Table 2
    assert len(marks) == 8 * 7 * 2 + 8 * 3
    assert report["tally"] == {"match": 88, "differs": 17, "paper inconsistent": 23, "not computed": 8}
    levels = ("remember", "understand", "apply", "analyze", "evaluate", "create")
    models = list(report["models"])
    assert len(models) == 7
    # all 84 printed level values and change magnitudes are reproduced
    assert {marks[(1, m, f"{lvl}.{k}")] for m in models for lvl in levels for k in ("score", "change")} == {
        "match"
    }
    # the Avg. column is the plain mean of the six levels for GPT-4o and GPT-3.5-turbo only
    assert [m for m in models if marks[(1, m, "avg.score")] == "match"] == ["GPT-4o", "GPT-3.5-turbo"]
    assert {marks[(1, m, "avg.score")] for m in models} == {"match", "paper inconsistent"}
    assert marks[(1, "Average", "remember.score")] == "match"  # 88.48 is the mean of the seven
    assert marks[(1, "Average", "evaluate.score")] == "paper inconsistent"  # 80.80, the seven give 80.23
    assert marks[(1, "Average", "avg.score")] == "differs"  # consistent as printed, but ours is 78.93
    assert marks[(2, "Average", "avg_quality_score")] == "paper inconsistent"  # 75.76 vs 75.33
    assert {marks[(2, m, "rounds_to_pass")] for m in [*models, "Average"]} == {"not computed"}
    assert marks[(2, "GPT-4o", "avg_quality_score")] == "differs"
    evaluate = next(c for c in report["cells"] if (c["row"], c["column"]) == ("Average", "evaluate.score"))
    assert evaluate["inconsistency"] == (
        "printed 80.80, but the mean of the 7 models' evaluate scores as printed is 80.23"
    )


def test_the_printed_table_marks_each_cell_and_lists_the_contradictions() -> None:
    result = runner.invoke(cli, ["reproduce-think", str(FIXTURES)], env={"COLUMNS": "260"})
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "86.92 ✓" in flat and "-0.46 ✓" in flat  # a change compared by its magnitude
    assert "81.84 ! paper 81.51" in flat  # GPT-4o-mini's Avg.: not the mean of its row
    assert "— · paper 2.35" in flat  # no problem passed: RoundsToPass not computed
    tally = "88 cells match, 17 differ, 23 are inconsistent within the paper, 8 not computed (of 136 printed)"
    assert tally in flat
    assert (
        "Table 2, Average, avg_quality_score: printed 75.76, "
        "but the mean of the 7 models' values as printed is 75.33" in flat
    )


def test_a_changed_value_differs_and_a_missing_model_leaves_the_average_uncomputed(tmp_path: Path) -> None:
    for path in FIXTURES.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    gpt = tmp_path / "gpt-4o.csv"
    gpt.write_text(gpt.read_text().replace(",86.92,", ",86.5,"))  # the final round's Remembering score
    marks = _marks(json.loads(runner.invoke(cli, ["reproduce-think", str(tmp_path), "--json"]).output))
    assert marks[(1, "GPT-4o", "remember.score")] == "differs"
    assert marks[(1, "GPT-4o", "remember.change")] == "differs"  # 26.50, printed 26.92
    assert marks[(1, "GPT-4o", "understand.score")] == "match"
    (tmp_path / "mistralai_Ministral-8B-Instruct-2410_metrics.csv").unlink()
    marks = _marks(json.loads(runner.invoke(cli, ["reproduce-think", str(tmp_path), "--json"]).output))
    assert marks[(1, "Ministral-8B", "remember.score")] == "not computed"
    assert marks[(1, "Average", "remember.score")] == "not computed"
    assert marks[(1, "Average", "evaluate.score")] == "paper inconsistent"  # a fact of the paper alone


def test_the_bundled_paper_values_are_complete_and_their_inconsistencies_computed() -> None:
    from app.reporting.paper.reproduce import AVERAGE, MODELS, paper_inconsistencies, paper_values

    values = paper_values()
    rows = [*MODELS, AVERAGE]
    assert list(values["table1"]) == rows and list(values["table2"]) == rows
    table1 = [v for row in rows for cell in values["table1"][row].values() for v in cell.values()]
    table2 = [v for row in rows for v in values["table2"][row].values()]
    assert len(table1) == 8 * 7 * 2 and len(table2) == 8 * 3
    assert all(isinstance(v, float) for v in table1 + table2)  # no value left out
    assert values["table1"]["GPT-4o"]["remember"] == {"score": 86.92, "change": 26.92}
    assert values["table2"][AVERAGE] == {"rounds_to_pass": 2.27, "avg_quality_score": 75.76, "change": 0.05}
    assert any("arrows" in note for note in values["notes"])
    listed = {(i["table"], i["row"], i["column"]): i["problem"] for i in values["inconsistencies"]}
    assert listed == paper_inconsistencies(values) and len(listed) == 23
