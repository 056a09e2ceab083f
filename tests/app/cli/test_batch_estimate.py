"""`thinkloop batch estimate`: the spend of a batch before it runs, with no call and nothing stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agents.simulator.server import SimulatorServer
from app.cli import cli
from tests.helpers.paths import SAMPLES

runner = CliRunner()
SAMPLE = SAMPLES / "datasets" / "flawed-problems.jsonl"


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


def test_estimate_uses_the_measured_spend_of_items_run_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer
) -> None:
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    monkeypatch.setenv("THINKLOOP_LOG_LEVEL", "WARNING")
    dataset = tmp_path / "two.jsonl"
    dataset.write_text("".join(SAMPLE.read_text().splitlines(keepends=True)[:2]))
    models = tmp_path / "models.toml"
    models.write_text(
        f'[models.sim]\nmodel = "sim-1"\nbase_url = "{simulator_server.base_url}"\n'
        "price = { input_per_mtok = 1.0, output_per_mtok = 4.0 }\n"
    )
    args = [
        "--dataset",
        str(dataset),
        "--models",
        "sim",
        "--judge-model",
        "sim",
        "--models-file",
        str(models),
    ]
    # without the response cache, every call is made and measured (a cache hit would be free)
    ran = runner.invoke(cli, ["batch", "run", *args, "--no-cache", "--format", "json"])
    assert ran.exit_code == 0, ran.output
    rows = json.loads(ran.output[ran.output.index("{") :])["rows"]
    calls = len(simulator_server.state.requests)
    shown = runner.invoke(cli, ["batch", "estimate", *args, "--repeats", "2"])
    assert shown.exit_code == 0, shown.output
    total = json.loads(shown.output)["total"]
    assert json.loads(shown.output)["measured_items"] == 4  # 2 problems, 2 repeats
    assert total["calls"] == 2 * sum(r["llm_calls"] for r in rows) == 2 * calls
    for field in ("input_tokens", "output_tokens", "cached_input_tokens"):
        assert total[field] == 2 * sum(r[field] for r in rows)
    assert total["cost_usd"] == pytest.approx(2 * sum(r["cost_usd"] for r in rows), abs=1e-6)
    assert len(simulator_server.state.requests) == calls  # the estimate called nothing


def test_estimate_of_new_problems_learns_from_similar_items_measured_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer
) -> None:
    """Items of other problems with the same models scale the assumed rounds and reply lengths: the
    simulator's short replies make the cold guess of completion tokens several times too high."""
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    monkeypatch.setenv("THINKLOOP_LOG_LEVEL", "WARNING")
    lines = SAMPLE.read_text().splitlines(keepends=True)
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text("".join(lines[i] for i in (0, 2, 3)))  # stated solutions the verifier finds right
    after.write_text("".join(lines[4:6]))
    models = tmp_path / "models.toml"
    models.write_text(
        f'[models.sim]\nmodel = "sim-1"\nbase_url = "{simulator_server.base_url}"\n'
        "price = { input_per_mtok = 1.0, output_per_mtok = 4.0 }\n"
    )
    common = ["--models", "sim", "--judge-model", "sim", "--models-file", str(models)]

    def estimate(dataset: Path) -> dict[str, Any]:
        shown = runner.invoke(cli, ["batch", "estimate", "--dataset", str(dataset), *common])
        assert shown.exit_code == 0, shown.output
        out: dict[str, Any] = json.loads(shown.output)
        return out

    cold, guessed = estimate(after), estimate(before)["total"]
    assert cold["scaled_items"] == 0
    ran = runner.invoke(
        cli, ["batch", "run", "--dataset", str(before), *common, "--no-cache", "--format", "json"]
    )
    assert ran.exit_code == 0, ran.output
    rows = json.loads(ran.output[ran.output.index("{") :])["rows"]
    spent = {"calls": sum(r["llm_calls"] for r in rows)} | {
        f: sum(r[f] for r in rows) for f in ("input_tokens", "output_tokens")
    }
    assert guessed["output_tokens"] > 2 * spent["output_tokens"]  # the guess was far off for these
    learnt = estimate(after)
    assert learnt["measured_items"] == 0 and learnt["scaled_items"] == 2  # other problems: scaled, not copied
    assert any("scaled by 3 similar measured item(s)" in line for line in learnt["assumptions"])
    for field, measured in spent.items():  # the guess for the new problems, times measured / guessed
        expected = cold["total"][field] * measured / guessed[field]
        assert learnt["total"][field] == pytest.approx(expected, rel=0.01, abs=1)


def test_estimate_learns_apart_for_problems_whose_stated_solution_is_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer
) -> None:
    """The loop's gate sends back a version whose stated solution the verifier finds wrong, whatever
    the judges say, so such problems take more rounds. Learnt from one such problem and two others,
    the estimate of two such problems is what they then spend; one scale for all would have put it
    at about half."""
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    monkeypatch.setenv("THINKLOOP_LOG_LEVEL", "WARNING")
    lines = SAMPLE.read_text().splitlines(keepends=True)
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text("".join(lines[:3]))  # the second's stated solution is wrong
    after.write_text("".join(lines[i] for i in (7, 10)))  # both wrong
    models = tmp_path / "models.toml"
    models.write_text(f'[models.sim]\nmodel = "sim-1"\nbase_url = "{simulator_server.base_url}"\n')
    common = ["--models", "sim", "--judge-model", "sim", "--models-file", str(models)]

    def batch(command: str, dataset: Path, *more: str) -> dict[str, Any]:
        done = runner.invoke(cli, ["batch", command, "--dataset", str(dataset), *common, *more])
        assert done.exit_code == 0, done.output
        out: dict[str, Any] = json.loads(done.output[done.output.index("{") :])
        return out

    batch("run", before, "--no-cache", "--format", "json")
    learnt = batch("estimate", after)
    spent = sum(r["llm_calls"] for r in batch("run", after, "--no-cache", "--format", "json")["rows"])
    assert learnt["scaled_items"] == 2
    assert any(
        "the verifier finds wrong scaled by their 1 similar item(s)" in a for a in learnt["assumptions"]
    )
    assert learnt["total"]["calls"] == spent
