"""`thinkloop batch estimate`: the spend of a batch before it runs, with no call and nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.simulator.server import SimulatorServer
from app.cli import cli

runner = CliRunner()
SAMPLE = Path(__file__).parents[2] / "app" / "samples" / "datasets" / "flawed-problems.jsonl"


def test_estimate_prints_spend_without_calling_or_storing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer
) -> None:
    database = tmp_path / "b.db"
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{database}")
    models = tmp_path / "models.toml"
    models.write_text(
        f'[models.sim]\nmodel = "sim-1"\nbase_url = "{simulator_server.base_url}"\n'
        "price = { input_per_mtok = 1.0, output_per_mtok = 4.0 }\n"
    )
    args = ["batch", "estimate", "--dataset", str(SAMPLE), "--models", "sim,rubric", "--judge-model", "sim"]
    result = runner.invoke(cli, [*args, "--max-rounds", "3", "--models-file", str(models)])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    sim = shown["models"]["sim"]
    # 12 problems, 2 rounds (mid of 1..3): 8 judged calls a round, one revision between them
    assert shown["basis"] == "mid" and shown["items"] == 24 and sim["calls"] == 12 * (2 * 8 + 1)
    assert sim["output_tokens"] == 12 * 2 * (7 * 1000 + 500) // 4 + 12 * 2000 // 4
    expected = (sim["input_tokens"] * 1.0 + sim["output_tokens"] * 4.0) / 1e6
    assert sim["cost_usd"] == pytest.approx(expected, rel=1e-4)
    assert any("max_rounds 3" in a for a in shown["assumptions"])
    assert simulator_server.state.requests == []  # no model was called
    assert not database.exists()  # nothing stored


def test_estimate_of_an_unknown_model_fails_like_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    for command in ("estimate", "run"):
        result = runner.invoke(cli, ["batch", command, "--dataset", str(SAMPLE), "--models", "nope"])
        assert result.exit_code != 0 and "nope" in result.output
