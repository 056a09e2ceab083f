"""The batch report's repair column: when the dataset's rows carry a corrected version (metadata
``corrected_solution``, ``corrected_question``, ``answer``), each model's repair rate, accepted but
wrong and gave up, beside RoundsToPass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import cli
from graphs.analysis.statistics import wilson_interval
from tests.helpers.repair_items import CORRECTED, FLAWED, QUESTION

runner = CliRunner()
THEATRE = "The school theatre has 14 rows with 9 seats in each row. How many seats are there in total?"
KEY = {"corrected_solution": CORRECTED.solution, "answer": "33 rolls", "flaw": "arithmetic"}
ROWS: list[dict[str, Any]] = [
    # the offline reviser does not find this wrong product: gave up
    {"id": "gives-up", "question": FLAWED.question, "solution": FLAWED.solution, "metadata": KEY},
    # a plausible solution with another answer: the screen passes it in round 1, accepted but wrong
    {
        "id": "wrong",
        "question": QUESTION,
        "solution": "4 × 12 = 48 rolls; 48 − 12 = 36 rolls are left.",
        "metadata": KEY,
    },
    # a wrong product the offline reviser corrects in round 2: repaired
    {
        "id": "theatre",
        "question": THEATRE,
        "solution": "14 × 9 = 116 seats.",
        "metadata": {"corrected_solution": "14 × 9 = 126 seats.", "answer": "126 seats"},
    },
    # already sound: it passes in round 1 as it came, so nothing was repaired
    {
        "id": "sound",
        "question": QUESTION,
        "solution": "There are 4 × 12 = 48 rolls, and 48 − 15 = 33 rolls are left.",
        "metadata": KEY,
    },
    # no answer key: counted in every other figure, not in the repair column
    {
        "id": "unkeyed",
        "question": "Tom has 3 bags of 4 apples. How many apples?",
        "solution": "3 × 4 = 12 apples.",
    },
]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    return tmp_path


def run_batch(db: Path, rows: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    dataset = db / "set.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = runner.invoke(
        cli, ["batch", "run", "--dataset", str(dataset), "--models", "rubric", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    return report, runner.invoke(cli, ["batch", "report", report["batch"]["id"]]).stdout


def test_keyed_rows_get_a_repair_rate_beside_rounds_to_pass(db: Path) -> None:
    report, markdown = run_batch(db, ROWS)
    (row,) = report["rows"]
    repair = row["repair"]
    assert (repair["problems"], repair["undecided"]) == (4, 0)
    quarter = wilson_interval(1, 4)
    for name in ("repaired", "accepted_but_wrong", "gave_up"):  # and the fourth: unrevised
        assert repair[name]["rate"] == pytest.approx(1 / 4) and repair[name]["ci95"] == pytest.approx(quarter)
    head = "| RoundsToPass (screen) (passers) | repaired (95% Wilson, of problems) | median rounds to pass"
    assert head in markdown
    assert "| 25.0% (4.6–69.9) of 4 |" in markdown
    assert "its answer is the corrected version's" in markdown


def test_a_dataset_without_answer_keys_has_no_repair_column(db: Path) -> None:
    report, markdown = run_batch(db, ROWS[-1:])
    assert report["rows"][0]["repair"] is None
    assert "repaired" not in markdown
