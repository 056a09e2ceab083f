"""`thinkloop judges calibrate` on the shipped held-out split with scripted judges: the threshold, its
guarantee beside its coverage, and a saved record that keeps them."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agents.llm.models import ModelRegistry
from agents.schemas import Problem
from app.cli import cli
from app.cli.calibrate import to_text
from app.validity.service import builtin_set
from tests.helpers.scripted_panels import ScriptedFactory, share

runner = CliRunner()


def flawed_versions() -> set[tuple[str, str]]:
    return {(i.problem.question, i.problem.solution) for i in builtin_set() if i.kind == "flawed"}


def lenient(flawed: set[tuple[str, str]]) -> Any:
    """Sound versions: every judge 95 with confidence 95 (Q 0.99). Flawed ones: a fifth passed at 90
    with confidence 50 (Q 0.90: the panel accepts them), the rest refused at 20."""

    def script(problem: Problem) -> tuple[int, int]:
        if (problem.question, problem.solution) not in flawed:
            return 95, 95
        return (90, 50) if share(problem.question, 0.2) else (20, 90)

    return script


@pytest.fixture
def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv("THINKLOOP_MODELS__PANEL__MODEL", "panel-1")
    monkeypatch.setenv("THINKLOOP_MODELS__PANEL__BASE_URL", "http://127.0.0.1:9/v1")
    script = lenient(flawed_versions())

    def factory(settings: Any, registry: ModelRegistry) -> ScriptedFactory:
        made = ScriptedFactory(registry, os.environ)
        made.scripts = {"panel": script}
        return made

    monkeypatch.setattr("app.panels.panel_factory", factory)
    return tmp_path


@pytest.mark.slow  # every version of the shipped held-out split, each a run
def test_calibrate_on_the_shipped_held_out_split_saves_a_threshold(scripted: Path) -> None:
    args = ["judges", "calibrate", "--judge-model", "panel", "--alpha", "0.05", "--delta", "0.1"]
    result = runner.invoke(cli, [*args, "--save", "--format", "json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    # Q 0.99 holds only sound versions; at 0.90 a fifth of the flawed ones come in and the scan stops
    assert found["threshold"] == pytest.approx(0.91) and found["split"] == "heldout"
    assert found["flawed_accepted"] == 0 and found["guaranteed"] <= 0.05
    assert (
        0.5 < found["coverage"] <= 1.0 and found["record"]["calibration"]["threshold"] == found["threshold"]
    )
    assert "with its calibration (threshold 0.91)" in result.stderr
    with sqlite3.connect(scripted / "c.db") as connection:
        (stored,) = connection.execute("SELECT calibration FROM validity_records").fetchone()
    assert json.loads(stored)["threshold"] == pytest.approx(0.91)
    calibration = {key: value for key, value in found.items() if key != "record"}
    text = to_text({"judge_model": "panel", "policy": "default", "calibration": calibration})
    assert (
        "| 0.91 | " in text
        and "| threshold (Q ≥) | guaranteed false accepts (≤) | coverage (sound accepted)" in text
    )
