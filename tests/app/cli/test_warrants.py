"""Warrants through the CLI: `judges validate --save`, the refine trace's warrant line, a required
warrant in `refine` and in `batch run`, and an errored bench that saves nothing."""

from __future__ import annotations

import json
import sqlite3
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agents.simulator import Rule, SimConfig, SimulatorServer
from app.cli import cli
from tests.helpers.paths import SAMPLES
from tests.helpers.warrants import REFINE

runner = CliRunner()
SAMPLE = SAMPLES / "datasets" / "flawed-problems.jsonl"
# a sound problem: only the judges decide it (the verifier's gate finds nothing to refuse)
SOUND = ["--question", "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?"]
REFINE += ["--max-rounds", "1"]


def save(env: Path) -> dict[str, Any]:
    args = ["judges", "validate", "--dataset", str(env / "items.jsonl"), "--judge-model", "sim", "--save"]
    result = runner.invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "saved validity record" in result.stderr
    record: dict[str, Any] = json.loads(result.stdout)["record"]
    return record


def records(env: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(env / "w.db") as connection:
        return connection.execute("SELECT id, set_name, n_flawed FROM validity_records").fetchall()


def test_validate_save_then_refine_shows_the_warrant(env: Path) -> None:
    unwarranted = runner.invoke(cli, REFINE)
    assert unwarranted.exit_code == 0, unwarranted.output
    assert "accepted — no warrant: this panel has never been validated" in unwarranted.stdout
    record = save(env)
    assert records(env) == [(record["id"], "items.jsonl", 2)]
    shown = runner.invoke(cli, REFINE)
    assert shown.exit_code == 0, shown.output
    line = next(x for x in shown.stdout.splitlines() if "warrant" in x)
    assert "accepted — warrant: false accepts ≤ 100.0 % (95 %), 2 held-out flawed problems" in line
    assert "sound passed ≥ 84.5 % (95 %), 21 held-out sound versions" in line
    assert (
        f"set items.jsonl, sha256 {record['set_hash'][:12]}, measured on the user's own labelled set)" in line
    )
    result = json.loads(runner.invoke(cli, [*REFINE, "--json"]).stdout)
    assert result["outcome"] == "accepted" and result["warrant"]["record_id"] == record["id"]
    assert result["warrant"]["false_accept"]["n"] == 2


def test_a_required_warrant_sends_the_refine_to_review(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = save(env)
    monkeypatch.setenv("THINKLOOP_REQUIRE_WARRANT", "0.10")
    result = runner.invoke(cli, [*REFINE, "--json"])
    assert result.exit_code == 0, result.output
    ended = json.loads(result.stdout)
    assert ended["outcome"] == "needs_review" and ended["warrant"] is None
    assert ended["stop_reason"] == (
        f"panel not certified: its cited validity record ({record['id']}) bounds false accepts at "
        "100.0% (95 %), above the required 10.0%"
    )


def test_a_bench_without_held_out_problems_saves_nothing_and_exits_1(env: Path) -> None:
    args = ["judges", "validate", "--dataset", str(env / "tune.jsonl"), "--judge-model", "sim", "--save"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1
    assert "the bench judged no held-out problem" in result.stderr and "no validity record was saved" in (
        result.stderr
    )
    assert records(env) == []


def test_a_bench_with_an_errored_version_saves_nothing_and_exits_1(
    env: Path, simulator_server: SimulatorServer
) -> None:
    simulator_server.state.configure(SimConfig(rules=[Rule(role="^Judge", status=500)]))
    args = ["judges", "validate", "--dataset", str(env / "items.jsonl"), "--judge-model", "sim", "--save"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1
    assert "23 of 23 versions did not end in the panel's verdict (23 errored, 0 undecided)" in result.stderr
    assert "no validity record was saved" in result.stderr
    assert records(env) == []


def test_a_batch_under_a_required_warrant(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = env / "two.jsonl"
    dataset.write_text("\n".join(SAMPLE.read_text().splitlines()[:2]) + "\n")
    args = ["batch", "run", "--dataset", str(dataset), "--models", "rubric", "--judge-model", "sim"]
    record = save(env)
    accepted = runner.invoke(cli, [*args, "--max-rounds", "1", "--format", "json"])
    assert accepted.exit_code == 0, accepted.output
    rows = exported(accepted.output)
    # the second problem's arithmetic is wrong (84 - 5 = 79): the gate refuses it, and it carries no warrant
    assert [row["outcome"] for row in rows] == ["accepted", "exhausted"]
    assert [(row["warrant"], row["warrant_record_id"]) for row in rows] == [
        ("valid", record["id"]),
        (None, None),
    ]
    assert rows[0]["warrant_false_accept_upper"] == pytest.approx(record["false_accept"]["high"])
    assert (rows[0]["warrant_n_flawed"], rows[0]["warrant_split"]) == (2, "heldout")
    assert rows[0]["warrant_sound_passed_lower"] == pytest.approx(record["specificity"]["low"])
    assert rows[0]["warrant_n_sound"] == 21
    batch_id = json.loads(accepted.output[accepted.output.index("{") :])["batch"]["id"]
    report = runner.invoke(cli, ["batch", "report", batch_id]).stdout
    cited = (
        "false accepts ≤ 100.0 % (95 %), 2 held-out flawed problems; sound passed ≥ 84.5 % (95 %), 21 "
        f"held-out sound versions (record {record['id']}, set items.jsonl, sha256 "
        f"{record['set_hash'][:12]}, measured on the user's own labelled set): 1 item(s)"
    )
    assert "- rubric / loop: 1 accepted with a warrant, 0 with none (the panel was never validated)" in report
    assert f"  - {cited}" in report
    html = runner.invoke(cli, ["batch", "report", batch_id, "--format", "html"]).stdout
    assert "Warrants of the accepted items" in html and cited in unescape(html)
    monkeypatch.setenv("THINKLOOP_REQUIRE_WARRANT", "0.10")
    strict = runner.invoke(cli, [*args, "--max-rounds", "1", "--format", "json"])
    assert strict.exit_code == 0, strict.output
    rows = exported(strict.output)
    assert [row["outcome"] for row in rows] == ["needs_review", "exhausted"]
    assert rows[0]["stop_reason"].startswith(
        f"panel not certified: its cited validity record ({record['id']})"
    )
    assert all(row["warrant"] is None for row in rows)


def exported(output: str) -> list[dict[str, Any]]:
    """The items of the batch a `batch run --format json` reported, as `batch items` exports them."""
    batch_id = json.loads(output[output.index("{") :])["batch"]["id"]
    lines = runner.invoke(cli, ["batch", "items", batch_id, "--format", "jsonl"]).stdout.splitlines()
    return [json.loads(line) for line in lines if line.startswith("{") and '"item_id"' in line]
