"""`thinkloop batch run|status|report` on the embedded broker."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli

runner = CliRunner()
SAMPLE = Path(__file__).parents[2] / "app" / "samples" / "datasets" / "flawed-problems.jsonl"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    return tmp_path


def test_run_then_status_and_report(db: Path) -> None:
    result = runner.invoke(
        cli, ["batch", "run", "--dataset", str(SAMPLE), "--models", "rubric", "--control", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    assert report["batch"]["status"] == "completed"
    arms = {(r["model"], r["arm"]): r for r in report["rows"]}
    assert arms[("rubric", "loop")]["items"] == 12 and arms[("rubric", "control")]["items"] == 12
    assert arms[("rubric", "control")]["levels"]["remember"]["score"] is None  # one round: Table 1 undefined
    assert (
        report["agreement"]["judged_versions"] > 24 and report["feedback_vs_control"][0]["model"] == "rubric"
    )
    batch_id = report["batch"]["id"]
    status = json.loads(runner.invoke(cli, ["batch", "status", batch_id]).output)
    assert status["status"] == "completed" and status["items"] == {"done": 24}
    markdown = runner.invoke(cli, ["batch", "report", batch_id]).output
    assert "| rubric | loop | 12 |" in markdown and "Feedback loop vs zero-shot control" in markdown
    csv_text = runner.invoke(cli, ["batch", "report", batch_id, "--format", "csv"]).output
    assert csv_text.splitlines()[0].startswith("model,arm,items,pass_rate")
    assert len(csv_text.splitlines()) == 3


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--models", "gpt-9"], 2, "unknown model 'gpt-9'"),
        (["--models", " , "], 2, "at least one model"),
        (["--models", "rubric", "--format", "xml"], 2, "unknown format"),
    ],
)
def test_bad_run_options(db: Path, args: list[str], code: int, message: str) -> None:
    result = runner.invoke(cli, ["batch", "run", "--dataset", str(SAMPLE), *args])
    assert result.exit_code == code and message in result.output


def test_bad_rows_stop_the_batch_with_line_numbers(db: Path) -> None:
    bad = db / "bad.jsonl"
    bad.write_text('{"question": "Fine?"}\n{"question": ""}\n{oops\n')
    result = runner.invoke(cli, ["batch", "run", "--dataset", str(bad), "--models", "rubric"])
    assert result.exit_code == 1
    assert re.search(r"bad\.jsonl:2: the question is empty", result.output)
    assert re.search(r"bad\.jsonl:3: invalid JSON", result.output)


def test_unknown_batch(db: Path) -> None:
    assert runner.invoke(cli, ["batch", "status", "nope"]).exit_code == 2
    assert runner.invoke(cli, ["batch", "report", "nope"]).exit_code == 2
