"""A batch report counts, per model, the items that ended because the model under test did not
revise (issue 53, item 2): apart from the exhausted items whose revisions were judged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.simulator import Rule, SimulatorServer
from app.cli import cli

runner = CliRunner()
# Sound as written: the offline reviser finds nothing to repair, so it returns the problem as it is.
SOUND = {
    "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
    "solution": "3 × 4 = 12, so Tom has 12 apples.",
}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer) -> Path:
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    monkeypatch.setenv("THINKLOOP_MODELS__SIM__MODEL", "sim-1")
    monkeypatch.setenv("THINKLOOP_MODELS__SIM__BASE_URL", simulator_server.base_url)
    dataset = tmp_path / "set.jsonl"
    dataset.write_text(json.dumps(SOUND) + "\n")
    return dataset


def test_the_report_counts_the_items_whose_model_did_not_revise_per_model(
    sim: Callable[..., SimulatorServer], env: Path
) -> None:
    sim([Rule(role="^Judge", score=40)])  # the panel refuses every version: each run asks a revision
    args = ["batch", "run", "--dataset", str(env), "--models", "rubric,sim", "--judge-model", "sim"]
    result = runner.invoke(cli, [*args, "--max-rounds", "2", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    rows = {row["model"]: row for row in report["rows"]}
    # the offline reviser returned the problem as it was: the run ended at once, its failure
    assert rows["rubric"]["items"]["exhausted"] == 1 and rows["rubric"]["not_revised"] == 1
    # the simulator's reviser revised each time: its item was judged twice, then exhausted
    assert rows["sim"]["items"]["exhausted"] == 1 and rows["sim"]["not_revised"] == 0
    markdown = runner.invoke(cli, ["batch", "report", report["batch"]["id"]]).stdout
    assert "Exhausted because the model under test did not revise: rubric (loop) 1." in markdown
