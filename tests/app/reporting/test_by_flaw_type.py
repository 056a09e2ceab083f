"""The batch report's "By flaw type" section: per model, arm and labelled flaw (metadata.flaw)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import cli
from graphs.analysis.statistics import wilson_interval
from tests.helpers.batches import JSONL, settle, upload
from tests.helpers.paths import SAMPLES
from tests.helpers.service import Service

runner = CliRunner()
SAMPLE = SAMPLES / "datasets" / "flawed-problems.jsonl"
ROWS = [json.loads(line) for line in SAMPLE.read_text().splitlines()]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    return tmp_path


def run_batch(db: Path, rows: list[dict[str, Any]], *extra: str) -> tuple[dict[str, Any], str, str]:
    """The JSON report of a batch over ``rows`` on the offline panel, and its Markdown and HTML."""
    dataset = db / "set.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["batch", "run", "--dataset", str(dataset), "--models", "rubric", *extra, "--format", "json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    batch_id = report["batch"]["id"]
    markdown = runner.invoke(cli, ["batch", "report", batch_id]).stdout
    page = runner.invoke(cli, ["batch", "report", batch_id, "--format", "html"]).stdout
    return report, markdown, page


def check_counts(row: dict[str, Any]) -> None:
    """Outcomes add up, and the pass rate is the passes (screened: the offline panel is a screen) over
    scored, with the report's Wilson interval."""
    items = row["items"]
    assert sum(n for key, n in items.items() if key != "total") == items["total"]
    assert items["accepted"] == 0  # the offline panel never accepts
    assert row["scored_items"] == items["screened"] + items["exhausted"]
    if row["scored_items"]:
        assert row["pass_rate"] == pytest.approx(items["screened"] / row["scored_items"])
        assert row["pass_rate_ci95"] == pytest.approx(wilson_interval(items["screened"], row["scored_items"]))
    else:
        assert row["pass_rate"] is None and row["pass_rate_ci95"] is None


def test_every_labelled_flaw_gets_a_row_per_model_and_arm(db: Path) -> None:
    report, markdown, page = run_batch(db, ROWS, "--control")
    labels = Counter(row["metadata"]["flaw"] for row in ROWS)
    for arm in ("loop", "control"):
        mine = [r for r in report["by_flaw"] if r["arm"] == arm]
        assert [r["flaw"] for r in mine] == sorted(labels) and {r["model"] for r in mine} == {"rubric"}
        assert {r["flaw"]: r["items"]["total"] for r in mine} == labels
        main = next(r for r in report["rows"] if r["arm"] == arm)
        for key in ("accepted", "screened", "exhausted", "needs_review", "error"):
            assert sum(r["items"][key] for r in mine) == main["items"][key]
        for row in mine:
            check_counts(row)
    assert "## By flaw type" in markdown and "<h2>By flaw type</h2>" in page
    # An offline batch is a screen: its pass figures say so, in every format.
    for text in (markdown, page):
        assert "screen pass rate" in text and "RoundsToPass (screen)" in text
        assert "accepted or exhausted" not in text
    for row in report["by_flaw"]:
        assert f"| {row['model']} | {row['arm']} | {row['flaw']} | {row['items']['total']} |" in markdown
        assert f'<td class="text">{row["flaw"]}</td>' in page


def test_problems_without_a_label_are_counted_as_unlabelled(db: Path) -> None:
    rows = [
        ROWS[0],
        ROWS[6],
        {k: v for k, v in ROWS[1].items() if k != "metadata"},
        {**ROWS[2], "metadata": {}},
    ]
    report, markdown, _ = run_batch(db, rows)
    assert [(r["flaw"], r["items"]["total"]) for r in report["by_flaw"]] == [
        ("false proportionality", 1),
        ("none (control)", 1),
        ("unlabelled", 2),
    ]
    for row in report["by_flaw"]:
        check_counts(row)
    assert "| rubric | loop | unlabelled | 2 |" in markdown


def test_no_labels_no_section(db: Path) -> None:
    rows = [{k: v for k, v in row.items() if k != "metadata"} for row in ROWS[:3]]
    report, markdown, page = run_batch(db, rows)
    assert report["by_flaw"] == []
    assert "By flaw type" not in markdown and "By flaw type" not in page


async def test_the_api_report_has_the_section(service: Service) -> None:
    dataset = (await upload(service, "\n".join(json.dumps(r) for r in ROWS[:4]).encode(), **JSONL)).json()
    body = {"dataset_id": dataset["id"], "models": ["rubric"], "judge_model": "rubric"}
    batch = (await service.client.post("/v1/batches", json=body, headers=service.keys.auth())).json()
    await settle(service, batch["id"])
    path, auth = f"/v1/batches/{batch['id']}/report", service.keys.auth("read")
    report = (await service.client.get(path, headers=auth)).json()
    assert [(r["flaw"], r["items"]["total"]) for r in report["by_flaw"]] == [
        ("answer not rounded to whole days", 1),
        ("arithmetic error", 1),
        ("false proportionality", 2),
    ]
    markdown = (await service.client.get(path, params={"format": "md"}, headers=auth)).text
    assert "| rubric | loop | false proportionality | 2 |" in markdown
