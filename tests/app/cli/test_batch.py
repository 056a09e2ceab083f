"""`thinkloop batch run|status|report` on the embedded broker."""

from __future__ import annotations

import base64
import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.reporting.html import to_html
from graphs.analysis.paper_tables import LEVELS
from tests.helpers.paths import APP_DATA, SAMPLES

runner = CliRunner()
SAMPLE = SAMPLES / "datasets" / "flawed-problems.jsonl"


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
    assert report["batch"]["status"] == "completed" and report["outcomes"]["total"] == 24
    arms = {(r["model"], r["arm"]): r for r in report["rows"]}
    loop, control = arms[("rubric", "loop")], arms[("rubric", "control")]
    assert loop["items"]["total"] == 12 and control["items"]["total"] == 12
    # The offline panel screens: its passes are screened items, never accepted ones.
    assert loop["items"]["accepted"] == 0 and report["batch"]["screen"] is True
    assert loop["scored_items"] == loop["items"]["screened"] + loop["items"]["exhausted"]
    assert control["levels"]["remember"]["score"] is None  # one round: Table 1 undefined
    assert report["agreement"]["loop"]["versions"] > 12 and report["agreement"]["control"]["versions"] == 12
    versus = next(c for c in report["comparisons"] if c["kind"] == "loop_vs_control")
    assert control["scored_items"] == 12  # one blind revision, judged once: accepted or exhausted
    # paired over the problems scored in both arms: a needs_review item is counted, never compared
    assert versus["a"] == "rubric/loop" and versus["b"] == "rubric/control"
    assert versus["problems"] == loop["scored_items"] == 12 - loop["items"]["needs_review"]
    batch_id = report["batch"]["id"]
    status = json.loads(runner.invoke(cli, ["batch", "status", batch_id, "--json"]).output)
    assert status["status"] == "completed" and sum(status["items"].values()) == 24
    markdown = runner.invoke(cli, ["batch", "report", batch_id]).output
    assert "## Outcomes" in markdown and "| rubric | loop | 12 |" in markdown
    assert "## Paired comparisons on the same problems" in markdown and "Gwet's AC1" in markdown
    # Table 1 named as the paper's definition, beside the plainly named mean final score per level
    assert "## Table 1: final score per Bloom level, the THiNK paper's definition" in markdown
    assert "### Mean final score per level (over all scored items)" in markdown
    assert report["definitions"]["level_mean_final"]["name"] == "mean final score per level"
    assert "round 1 counts 0" in report["definitions"]["levels"]["definition"]
    shown_csv = runner.invoke(cli, ["batch", "report", batch_id, "--format", "csv"])
    csv_text = shown_csv.stdout
    assert csv_text.splitlines()[0].startswith("model,arm,items_accepted,items_screened,items_exhausted")
    assert len(csv_text.splitlines()) == 3
    # a CSV cannot hold the manifest: stderr says where it is; with -o it is written beside the file
    assert "CSV on stdout has no manifest" in shown_csv.stderr and "-o FILE" in shown_csv.stderr
    target = db.parent / "report.csv"
    written = runner.invoke(cli, ["batch", "report", batch_id[:8], "--format", "csv", "-o", str(target)])
    assert written.exit_code == 0 and target.read_text() == csv_text
    sidecar = json.loads((db.parent / "report.csv.manifest.json").read_text())
    assert sidecar == json.loads(json.dumps(report["manifest"], default=str))
    check_html(runner.invoke(cli, ["batch", "report", batch_id, "--format", "html"]).output, report)


def test_a_model_whose_endpoint_is_down_keeps_its_row_with_every_item_an_error(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("THINKLOOP_MODELS__DOWN__MODEL", "m")
    monkeypatch.setenv("THINKLOOP_MODELS__DOWN__BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("THINKLOOP_MODELS__DOWN__MAX_RETRIES", "0")
    result = runner.invoke(
        cli, ["batch", "run", "--dataset", str(SAMPLE), "--models", "rubric,down", "--format", "json"]
    )
    assert result.exit_code == 1
    report = json.loads(result.output[result.output.index("{") : result.output.rindex("}") + 1])
    rows = {r["model"]: r for r in report["rows"]}
    down = rows["down"]
    # Round 1 judges the original (offline judges); the revision then needs the dead endpoint.
    revised = 12 - down["items"]["screened"]
    assert down["items"]["error"] == revised > 0 and down["items"]["exhausted"] == 0
    assert down["errors"][0]["cause"] == f"down @ 127.0.0.1:{port}: APIConnectionError"
    assert down["errors"][0]["count"] == revised
    assert rows["rubric"]["items"]["error"] == 0
    assert "ended in error and are not scored" in " ".join(result.output.split())
    assert f"down @ 127.0.0.1:{port}" in result.output


def test_a_model_with_every_item_in_error_has_no_pass_rate(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("THINKLOOP_MODELS__DOWN__MODEL", "m")
    monkeypatch.setenv("THINKLOOP_MODELS__DOWN__BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("THINKLOOP_MODELS__DOWN__MAX_RETRIES", "0")
    args = ["batch", "run", "--dataset", str(SAMPLE), "--models", "rubric", "--judge-model", "down"]
    result = runner.invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 1
    report = json.loads(result.output[result.output.index("{") : result.output.rindex("}") + 1])
    (row,) = report["rows"]
    assert row["items"]["error"] == row["items"]["total"] == 12
    assert row["scored_items"] == 0 and row["pass_rate"] is None and row["avg_quality_final"] is None
    assert row["pass_rate_ci95"] is None and row["errors"][0]["count"] == 12


def check_html(page: str, report: dict[str, Any]) -> None:
    """Every figure the report has data for as decodable SVG naming the batch, the outcome rows, and
    the plot data they were drawn from."""
    figures = re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(figures) == 6  # a control arm and labelled flaws: every figure has its data
    svgs = [base64.b64decode(f).decode() for f in figures]
    assert all(s.lstrip().startswith("<?xml") and report["batch"]["id"] in s for s in svgs)
    assert page.count("<td>rubric</td>") >= 2 and "Paired comparisons on the same problems" in page
    loop = next(r for r in report["rows"] if r["arm"] == "loop")
    assert loop["time_to_pass"]["units"] == loop["problems"]
    assert (
        loop["quality_by_round"][0]["round"] == 1
        and loop["quality_by_round"][0]["items"] == loop["scored_items"]
    )
    assert set(loop["level_mean_final"]) == {*LEVELS, "holistic"}


def test_html_escapes_names_from_the_data() -> None:
    report = json.loads((APP_DATA / "report.json").read_text())
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
