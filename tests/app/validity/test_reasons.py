"""The validity report says why (issue 53, item 5): each errored or undecided version with its
causes — the judges' abstention reasons, the failed calls with their cause — and the solver's failed
calls, in the text report and in --format json alike (the simulator as the judge endpoint)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.simulator import Rule, SimulatorServer
from app.cli import cli

runner = CliRunner()
Sim = Callable[..., SimulatorServer]
SOUND = {
    "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
    "solution": "3 × 4 = 12, so Tom has 12 apples.",
}
OTHER = {
    "question": "Ann has 5 boxes with 6 pens in each box. How many pens does Ann have?",
    "solution": "5 × 6 = 30, so Ann has 30 pens.",
}


@pytest.fixture
def dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer) -> Path:
    monkeypatch.setenv("THINKLOOP_MODELS__SIM__MODEL", "sim-1")
    monkeypatch.setenv("THINKLOOP_MODELS__SIM__BASE_URL", simulator_server.base_url)
    monkeypatch.setenv("THINKLOOP_MODELS__SIM__MAX_RETRIES", "0")
    monkeypatch.setenv("THINKLOOP_MODELS__SIM__PARSE_RETRIES", "0")
    path = tmp_path / "set.jsonl"
    items = [
        {"id": "apples", "split": "heldout", "kind": "control", **SOUND},
        {"id": "pens", "split": "heldout", "kind": "control", **OTHER},
    ]
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def test_the_report_lists_each_excluded_version_with_its_causes_and_the_solver_failures(
    sim: Sim, dataset: Path
) -> None:
    # apples: the six Bloom judges write the same rationale (a degenerate panel: abstentions with a
    # reason), the holistic judge's reply lacks its five keys (a failed call), and the solver's
    # endpoint fails; pens: two judges' replies never fit, the others pass it.
    sim(
        [
            Rule(role="^Solver", contains="Tom has", status=503),
            Rule(
                role="^Judge",
                contains="Tom has",
                json={"own_answer": "12", "rationale": "same", "score": 90, "confidence": 90},
            ),
            Rule(role="Judge: (Apply|Create)", contains="Ann has", malformed=True),
            Rule(role="^Solver", answer="30 pens"),
        ]
    )
    args = ["judges", "validate", "--dataset", str(dataset), "--judge-model", "sim"]
    result = runner.invoke(cli, [*args, "--format", "json"])
    report = json.loads(result.stdout)
    assert report["excluded"]["total"] == 2, report["excluded"]
    causes = {entry["version"]: entry for entry in report["excluded"]["causes"]}
    apples, pens = causes["apples (control)"]["causes"], causes["pens (control)"]["causes"]
    assert causes["apples (control)"]["ended"] == "error"
    assert any(line.startswith("stop reason: the panel gave no usable verdict") for line in apples)
    assert (
        "remember, understand, apply, analyze, evaluate, create abstained: degenerate: every judge wrote "
        "the same rationale"
    ) in apples
    assert any(line.startswith("holistic failed: sim @ 127.0.0.1") for line in apples), apples
    assert any(line.startswith("solver failed: sim @ 127.0.0.1") and "HTTP 503" in line for line in apples)
    assert any(line.startswith("apply, create failed: sim @ 127.0.0.1") for line in pens), pens
    assert [line.split(":")[0] for line in report["solver_failures"]] == ["apples (control)"]
    assert report["splits"]["heldout"]["solver_failures"] == report["solver_failures"]
    text = runner.invoke(cli, args).stdout
    assert "## Why versions were excluded" in text and "- apples (control): error" in text
    assert "  - remember, understand, apply, analyze, evaluate, create abstained: degenerate" in text
    assert "## Failed solver calls" in text and "- apples (control): sim @ 127.0.0.1" in text
