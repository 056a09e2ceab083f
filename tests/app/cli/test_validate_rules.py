"""`thinkloop judges validate --rules`: each rule of the offline screen, its firings and precision on
a labelled set's flawed and sound versions."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agents.rubric.rules import RULES
from app.cli import cli

runner = CliRunner()
FLAWED = {
    "id": "film",
    "split": "tune",
    "kind": "flawed",
    "question": "A film lasts 1 hour 50 minutes. How many minutes is that?",
    "solution": "1.50 × 60 = 90 minutes.",
    "flaws": [
        {"type": "unit_mismatch", "levels": ["apply"], "evidence": "1 hour 50 minutes is not 1.50 hours"}
    ],
    "corrected": {
        "question": "A film lasts 1 hour 50 minutes. How many minutes is that?",
        "solution": "1 hour = 60 minutes, and 60 + 50 = 110 minutes.",
    },
}
CONTROL = {
    "id": "apples",
    "split": "tune",
    "kind": "control",
    "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
    "solution": "3 × 4 = 12, so Tom has 12 apples.",
}


def _dataset(tmp_path: Path) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text(f"{json.dumps(FLAWED)}\n{json.dumps(CONTROL)}\n")
    return path


def test_each_rule_is_reported_with_its_firings_and_precision(tmp_path: Path) -> None:
    result = runner.invoke(cli, ["judges", "validate", "--dataset", str(_dataset(tmp_path)), "--rules"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Rules on 1 flawed and 2 sound versions"
    rows = {
        line.split(" | ")[0].lstrip("| "): line for line in lines if line.startswith("| ") and "." in line
    }
    assert set(rows) == set(RULES)
    assert rows["units.hours-minutes-decimal"] == (
        "| units.hours-minutes-decimal | unit_mismatch | 1 | 1 | 1 | 0 | 1 | 1/1 = 100.0% |"
    )
    assert rows["grader.addressed"].endswith("| 0 | 0 | 0 | 0 | 0 | - |")  # never fired: no precision


def test_the_rule_report_in_json(tmp_path: Path) -> None:
    args = ["judges", "validate", "--dataset", str(_dataset(tmp_path)), "--rules", "--format", "json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["flawed"], report["sound"]) == (1, 2)
    row = next(r for r in report["rules"] if r["rule"] == "units.hours-minutes-decimal")
    assert row == {
        "rule": "units.hours-minutes-decimal",
        "check": "units_consistent",
        "flaw": "unit_mismatch",
        "fired": 1,
        "flawed": 1,
        "typed": 1,
        "sound": 0,
        "named": 1,
        "precision": 1.0,
    }
