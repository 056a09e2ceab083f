"""`judges validate` reports what the panel's votes are worth, and warns of self-preference."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from agents.labelled.labels import read_labelled
from agents.llm.models import ModelRegistry, ModelSpec
from agents.panel import PanelFactory
from app.cli import cli
from app.validity.report import to_markdown
from app.validity.service import _self_preference
from tests.helpers.paths import SAMPLES

runner = CliRunner()
SOUND = {
    "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
    "solution": "3 × 4 = 12, so Tom has 12 apples.",
}


def test_validate_prints_judge_errors_their_correlation_and_n_eff(tmp_path: Path) -> None:
    flawed = read_labelled(SAMPLES / "validity" / "problems.jsonl")[0]
    item = flawed.model_copy(update={"split": "heldout"}).model_dump_json(exclude_none=True)
    control = {"id": "the-control", "split": "heldout", "kind": "control", **SOUND}
    dataset = tmp_path / "set.jsonl"
    dataset.write_text(f"{item}\n{json.dumps(control)}\n")
    result = runner.invoke(cli, ["judges", "validate", "--dataset", str(dataset), "--format", "json"])
    assert result.exit_code == 0, result.output
    worth = json.loads(result.stdout)["votes_worth"]
    assert worth["split"] == "heldout" and worth["m"] == 7
    assert {share["n"] for share in worth["judges"].values()} == {3}  # flawed, corrected, control
    assert len(worth["pairs"]) == 21 and worth["smallest_subset"]["size"] >= 1
    text = runner.invoke(cli, ["judges", "validate", "--dataset", str(dataset)]).stdout
    assert "## What the panel's votes are worth (heldout)" in text
    assert "n_eff = m / (1 + (m − 1)·max(ρ̄, 0))" in text and "Smallest subset deciding" in text


def test_a_judge_of_the_model_under_tests_family_is_warned_of() -> None:
    registry = ModelRegistry(
        {
            "big": ModelSpec(name="big", model="gpt-4o", base_url="http://127.0.0.1:9/v1"),
            "small": ModelSpec(name="small", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1"),
            "other": ModelSpec(name="other", model="qwen2.5:7b", base_url="http://127.0.0.1:9/v1"),
        }
    )
    factory = PanelFactory(registry, os.environ)
    kin = _self_preference(factory, "big", ["gpt-4o-2024-08-06"], "small")
    assert len(kin) == 1 and "same family (gpt)" in kin[0]
    assert _self_preference(factory, "big", [], "big")[0].startswith("the judge model 'big' is the model")
    assert _self_preference(factory, "other", ["qwen2.5:7b"], "small") == []
    assert _self_preference(factory, "rubric", [], "rubric") == []
    report_text = to_markdown_with_warning(kin)
    assert "**Warning (self-preference): the judge model 'gpt-4o' is of the same family" in report_text


def to_markdown_with_warning(warnings: list[str]) -> str:
    report = {
        "judge_model": "big",
        "policy": "default",
        "items": 0,
        "versions": 0,
        "twins": False,
        "judged": 0,
        "excluded": {"total": 0, "errored": 0, "undecided": 0},
        "calls": {"total": 0, "failed": 0, "abstained": 0},
        "offline": False,
        "complete": True,
        "splits": {},
        "targets": {"claimed": False, "split": "all", "reason": "nothing judged"},
        "self_preference": warnings,
    }
    return to_markdown(report)
