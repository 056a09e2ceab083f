"""`thinkloop reproduce-think` on small result files in the reference's formats."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.reporting.paper.reproduce import COLUMNS, Comparison

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
    result = runner.invoke(cli, ["reproduce-think", str(results)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Table 1" in result.output and "Table 2" in result.output
    assert "GPT-4o " in result.output and "Qwen2.5-7B" in result.output
    flat = " ".join(result.output.split())
    assert "2.00 ✗ (paper 2.35)" in flat  # our fixture is not the paper's data
    assert "✓ 0 values match the paper, ✗ 4 differ" in flat
    assert "Where the paper contradicts itself" in flat and "Cohen's kappa" in flat


def test_json_output(results: Path) -> None:
    report = json.loads(runner.invoke(cli, ["reproduce-think", str(results), "--json"]).output)
    data = report["models"]
    assert set(data) == {"GPT-4o", "Qwen2.5-7B"}
    assert report["tally"]["differ"] == 4 and len(report["contradictions"]) == 5
    gpt = data["GPT-4o"]
    assert gpt["table2"]["rounds_to_pass"] == 2.0 and gpt["table2"]["pass_rate"] == 0.5
    assert gpt["table2"]["avg_quality_score"] == pytest.approx(100 * (0.96 + 0.46) / 2)
    assert gpt["paper"]["rounds_to_pass"] == 2.35 and gpt["paper"]["avg_quality_score"] == 82.46
    assert gpt["matches"]["rounds_to_pass"] is False and len(gpt["matches"]) == 4 + 2 * 6
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


def test_comparison_rounds_to_the_papers_precision() -> None:
    assert Comparison(2.3488, 2.35).matches and Comparison(82.4617, 82.46).matches
    assert not Comparison(2.344, 2.35).matches and not Comparison(None, 2.35).matches
    assert Comparison(2.35, None).matches is None  # no bundled paper value: neither ✓ nor ✗


def test_every_table_value_is_compared_when_the_paper_value_is_bundled(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.reporting.paper import reproduce as module

    values = module.paper_values()
    values["table1"]["GPT-4o"]["remember"] = {"score": 70.0, "change": 20.0}
    values["table2"]["GPT-4o"]["plus_minus"] = 25.0
    monkeypatch.setattr(module, "paper_values", lambda: values)
    rows = module.comparisons(module.reproduce(results))
    assert rows["GPT-4o"]["remember.score"].matches and rows["GPT-4o"]["remember.change"].matches
    assert rows["GPT-4o"]["plus_minus"].matches is True  # (0.96 - 0.46) × 100 / 2 problems
    assert rows["GPT-4o"]["create.score"].matches is None
