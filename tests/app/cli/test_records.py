"""`thinkloop judges records list|show|pin|unpin|publish` and `judges validate --save --project`
(issue 49, defects 4 and 6, through the CLI): a one-item bench never displaces a 22-item record,
both stay listed, a pin overrides; a record saved for a project is cited by that project's runs
only, until the operator publishes it; unknown and foreign records are one-line errors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agents.simulator import SimulatorServer
from app.cli import cli
from tests.helpers.warrants import ONE, REFINE, TWENTY_TWO

runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer) -> Path:
    """A database of the test's own, the simulator as model ``sim`` (it passes every version), the
    two held-out sets as files, and a second project named ``north``."""
    values = {
        "THINKLOOP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'w.db'}",
        "THINKLOOP_MODELS__SIM__MODEL": "sim-1",
        "THINKLOOP_MODELS__SIM__BASE_URL": simulator_server.base_url,
        "THINKLOOP_MODELS__SIM__TIMEOUT_S": "30",
        "THINKLOOP_MODELS__SIM__MAX_RETRIES": "0",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("THINKLOOP_REQUIRE_WARRANT", raising=False)
    for name, items in (("district.jsonl", TWENTY_TWO), ("picked.jsonl", ONE)):
        (tmp_path / name).write_text("".join(json.dumps(item) + "\n" for item in items))
    made = runner.invoke(cli, ["projects", "create", "north"])
    assert made.exit_code == 0, made.output
    return tmp_path


def save(env: Path, name: str, *extra: str) -> dict[str, Any]:
    args = ["judges", "validate", "--dataset", str(env / name), "--judge-model", "sim", "--save", *extra]
    result = runner.invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    record: dict[str, Any] = json.loads(result.stdout)["record"]
    return record


def cited() -> str | None:
    """The record the default project's refine cites (None: no warrant)."""
    result = runner.invoke(cli, [*REFINE, "--json"])
    assert result.exit_code == 0, result.output
    warrant = json.loads(result.stdout)["warrant"]
    return warrant.get("record_id")


def records(*args: str) -> Any:
    return runner.invoke(cli, ["judges", "records", *args])


def audited(env: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(env / "w.db") as connection:
        query = "SELECT action, target_id, project_id, actor FROM audit_events WHERE target_type = ?"
        return connection.execute(query + " ORDER BY created_at", ("validity-record",)).fetchall()


def test_a_one_item_bench_does_not_replace_a_22_item_record_and_a_pin_overrides(env: Path) -> None:
    honest = save(env, "district.jsonl")
    picked = save(env, "picked.jsonl")
    assert (honest["n_flawed"], picked["n_flawed"]) == (22, 1)
    assert cited() == honest["id"]
    listed = records("list")
    assert listed.exit_code == 0, listed.output
    rows = {line.split("\t")[0]: line.split("\t") for line in listed.stdout.splitlines()[1:]}
    assert list(rows) == [picked["id"], honest["id"]]  # both listed, newest first
    assert (rows[honest["id"]][-1], rows[picked["id"]][-1]) == ("cited", "-")
    assert rows[honest["id"]][3:7] == ["district.jsonl", "heldout", "22", "22"]
    pinned = records("pin", picked["id"])
    assert pinned.exit_code == 0, pinned.output
    assert cited() == picked["id"]
    rows = {line.split("\t")[0]: line.split("\t") for line in records("list").stdout.splitlines()[1:]}
    assert (rows[honest["id"]][-1], rows[picked["id"]][-1]) == ("-", "cited (pinned)")
    shown = json.loads(records("show", picked["id"]).stdout)
    assert (shown["cited"], shown["pinned"], shown["n_flawed"]) == (True, True, 1)
    assert shown["identity"]["judge_model"] == "sim"
    assert records("unpin", picked["id"]).exit_code == 0
    assert cited() == honest["id"]
    assert [(a, t) for a, t, _, _ in audited(env)] == [("pinned", picked["id"]), ("unpinned", picked["id"])]
    assert {(p, actor) for _, _, p, actor in audited(env)} == {("default", "cli")}


def test_a_record_saved_for_a_project_is_cited_by_its_runs_only_until_published(env: Path) -> None:
    theirs = save(env, "picked.jsonl", "--project", "north")
    with sqlite3.connect(env / "w.db") as connection:
        owner = connection.execute("SELECT project_id FROM validity_records").fetchone()[0]
        north = connection.execute("SELECT id FROM projects WHERE name = 'north'").fetchone()[0]
    assert owner == north
    assert cited() is None  # the default project's runs cite none of north's records
    assert records("list").stdout.splitlines()[1:] == []
    assert [
        line.split("\t")[0] for line in records("list", "--project", "north").stdout.splitlines()[1:]
    ] == [theirs["id"]]
    published = records("publish", theirs["id"])
    assert published.exit_code == 0, published.output
    assert cited() == theirs["id"]
    assert records("publish", theirs["id"], "--withdraw").exit_code == 0
    assert cited() is None
    assert [(a, p) for a, _, p, _ in audited(env)] == [("published", north), ("unpublished", north)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["pin", "0" * 32], "there is no validity record '00000000000000000000000000000000' that project"),
        (["show", "nope"], "there is no validity record 'nope' that project 'default' may cite"),
        (["unpin", "nope"], "there is no validity record 'nope'"),
        (["publish", "nope"], "there is no validity record 'nope'"),
        (["list", "--project", "south"], "there is no project 'south'"),
    ],
)
def test_unknown_records_and_projects_are_one_line_errors(env: Path, args: list[str], message: str) -> None:
    result = records(*args)
    assert result.exit_code == 1 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_foreign_record_cannot_be_pinned_and_an_unknown_project_saves_nothing(env: Path) -> None:
    theirs = save(env, "picked.jsonl", "--project", "north")
    foreign = records("pin", theirs["id"])
    assert foreign.exit_code == 1 and len(foreign.stderr.strip().splitlines()) == 1
    assert f"there is no validity record '{theirs['id']}' that project 'default' may cite" in foreign.stderr
    assert records("pin", theirs["id"], "--project", "north").exit_code == 0
    args = ["judges", "validate", "--dataset", str(env / "picked.jsonl"), "--judge-model", "sim"]
    unknown = runner.invoke(cli, [*args, "--save", "--project", "south"])
    assert unknown.exit_code == 1 and "there is no project 'south'" in unknown.stderr
    assert unknown.stdout == ""  # refused before the bench: no report, no call
    with sqlite3.connect(env / "w.db") as connection:
        assert connection.execute("SELECT count(*) FROM validity_records").fetchone()[0] == 1


def test_a_record_saved_from_several_sets_keeps_each_sources_figures(env: Path) -> None:
    from agents.labelled.canonical import file_hash

    umwp = {"name": "UMWP", "kind": "benchmark"}
    (env / "umwp.jsonl").write_text("".join(json.dumps(i | {"source": umwp}) + "\n" for i in TWENTY_TWO[:12]))
    (env / "mine.jsonl").write_text("".join(json.dumps(i) + "\n" for i in TWENTY_TWO[12:]))
    args = ["judges", "validate", "--dataset", str(env / "umwp.jsonl"), "--dataset", str(env / "mine.jsonl")]
    result = runner.invoke(cli, [*args, "--judge-model", "sim", "--save", "--format", "json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)["record"]
    assert "sources: UMWP (benchmark, 12 flawed); mine.jsonl (own, 10 flawed)" in result.stderr
    found = {s["name"]: s for s in record["sources"]}
    assert (found["UMWP"]["kind"], found["UMWP"]["n_flawed"], found["UMWP"]["n_sound"]) == (
        "benchmark",
        12,
        12,
    )
    assert found["UMWP"]["set_hash"] == file_hash(env / "umwp.jsonl")  # each set's own hash
    assert found["mine.jsonl"]["set_hash"] == file_hash(env / "mine.jsonl")
    mine = found["mine.jsonl"]["false_accept"]  # the simulator's judges pass all; the verifier's gate may not
    assert (
        mine["n"] == 10
        and mine["low"] < mine["rate"] <= mine["high"]
        and found["UMWP"]["specificity"]["n"] == 12
    )
    shown = runner.invoke(cli, ["judges", "records", "show", record["id"]])
    assert [s["name"] for s in json.loads(shown.stdout)["sources"]] == ["UMWP", "mine.jsonl"]
