"""`thinkloop batch run|status|report` on the embedded broker."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.batches.html import to_html
from app.cli import cli
from graphs.paper_tables import LEVELS

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
    check_html(runner.invoke(cli, ["batch", "report", batch_id, "--format", "html"]).output, report)


def check_html(page: str, report: dict[str, Any]) -> None:
    """Three decodable PNG figures, the summary rows, and the plot data they were drawn from."""
    figures = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(figures) == 3
    assert all(base64.b64decode(f).startswith(b"\x89PNG") for f in figures)
    assert page.count("<td>rubric</td>") >= 2 and "Feedback loop vs zero-shot control" in page
    loop = next(r for r in report["rows"] if r["arm"] == "loop")
    assert sum(loop["rounds_to_pass_histogram"].values()) == 12
    assert loop["quality_by_round"][0]["round"] == 1 and loop["quality_by_round"][0]["items"] == 12
    assert set(loop["level_mean_final"]) == set(LEVELS)


def test_html_escapes_names_from_the_data() -> None:
    report = json.loads((Path(__file__).parent / "data" / "report.json").read_text())
    report["rows"][0]["model"] = report["batch"]["models"][0] = "<script>alert(1)</script>"
    page = to_html(report)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


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


@pytest.mark.parametrize("command", [["worker"], ["batch", "worker"]])
def test_a_worker_needs_a_redis_broker(db: Path, command: list[str]) -> None:
    result = runner.invoke(cli, command)
    assert result.exit_code == 2 and "THINKLOOP_BROKER_URL" in result.output
