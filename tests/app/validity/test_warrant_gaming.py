"""Issue 49, defects 1 and 2, with scripted judges: a warrant cannot be gamed by a panel that refuses
everything, by a set without sound versions, by labels that contradict themselves, or by a file that
takes the shipped set's name. Each bench that cannot be recorded exits 1 (the CLI) or is a 422 (the
API) with one reason, and stores nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agents.labelled.canonical import canonical_hash
from agents.simulator import Rule, SimConfig, SimulatorServer
from app.cli import cli
from tests.helpers.service import Service, assert_problem
from tests.helpers.validity import RECORDABLE
from tests.helpers.warrants import REFINE, stored_records

runner = CliRunner()
HELD = [item | {"split": "heldout"} for item in RECORDABLE]


def judges_score(simulator: SimulatorServer, score: int) -> None:
    """Every judge of the panel scores ``score``, whatever it reads (a content-blind panel)."""
    simulator.state.configure(SimConfig(rules=[Rule(role="^Judge", score=score)]))


def write(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def validate_save(dataset: Path) -> Any:
    args = ["judges", "validate", "--dataset", str(dataset), "--judge-model", "sim", "--save"]
    return runner.invoke(cli, [*args, "--format", "json"])


def saved(env: Path) -> list[tuple[Any, ...]]:
    """The set names of the records stored (none: a bench refused before any call opens no database)."""
    if not (env / "w.db").exists():
        return []
    with sqlite3.connect(env / "w.db") as connection:
        return connection.execute("SELECT set_name FROM validity_records").fetchall()


def test_defect_1_a_panel_that_refuses_every_sound_version_gets_no_warrant(
    env: Path, simulator_server: SimulatorServer
) -> None:
    judges_score(simulator_server, 40)  # refuses everything: no false accepts, and no sound passed
    refused = validate_save(env / "items.jsonl")
    assert refused.exit_code == 1, refused.output
    assert "error: the panel passed 0 of 21 sound versions (0.0%), below the floor of 50%" in refused.stderr
    assert "no validity record was saved" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert json.loads(refused.stdout)["record"] is None and saved(env) == []
    judges_score(simulator_server, 90)  # the same panel identity, now passing everything
    run = runner.invoke(cli, REFINE)
    assert run.exit_code == 0, run.output
    assert "accepted — no warrant: this panel has never been validated" in run.stdout


def test_the_floor_is_a_setting(
    env: Path, simulator_server: SimulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the judges refuse one control of 21: 20 of 21 sound versions passed (95.2 %)
    one = Rule(role="^Judge", contains="Ana has 2 bags with 3 apples in each bag", score=40)
    simulator_server.state.configure(SimConfig(rules=[one]))
    monkeypatch.setenv("THINKLOOP_SPECIFICITY_FLOOR", "0.96")
    refused = validate_save(env / "items.jsonl")
    assert refused.exit_code == 1, refused.output
    assert "error: the panel passed 20 of 21 sound versions (95.2%), below the floor of 96%" in refused.stderr
    monkeypatch.delenv("THINKLOOP_SPECIFICITY_FLOOR")  # the default floor, 50 %
    assert validate_save(env / "items.jsonl").exit_code == 0
    assert saved(env) == [("items.jsonl",)]


def test_a_set_with_too_few_sound_versions_is_refused_before_any_call(
    env: Path, simulator_server: SimulatorServer
) -> None:
    flawed_only = [{k: v for k, v in item.items() if k != "corrected"} for item in HELD[:2]]
    for items, sound in ((flawed_only, 0), (HELD[:19], 19)):  # 2 corrected + 17 controls: 19
        result = validate_save(write(env / "few.jsonl", items))
        assert result.exit_code == 1, result.output
        assert f"error: the held-out split holds {sound} sound version(s)" in result.stderr
        assert "a record needs at least 20" in result.stderr and result.stdout == ""
    assert simulator_server.state.requests == [] and saved(env) == []


def test_defect_2_a_file_named_shipped_does_not_pass_for_the_shipped_set(
    env: Path, simulator_server: SimulatorServer
) -> None:
    # the shipped set's name on other content (sound versions relabelled, or any other set)
    relabelled = [item | {"kind": "flawed", "flaws": HELD[0]["flaws"]} for item in HELD[:3]] + HELD[3:]
    for name in ("shipped", "Shipped.jsonl"):
        result = validate_save(write(env / name, relabelled))
        assert result.exit_code == 1, result.output
        assert f"error: the set name {name!r} is reserved for the set shipped with thinkloop" in result.stderr
        assert (
            "no validity record was saved" in result.stderr and len(result.stderr.strip().splitlines()) == 1
        )
    assert simulator_server.state.requests == [] and saved(env) == []


def test_a_file_keeps_its_own_name_and_its_hash_is_the_documented_one(env: Path) -> None:
    result = validate_save(env / "items.jsonl")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)["record"]
    hashed = runner.invoke(cli, ["datasets", "hash", str(env / "items.jsonl")])
    assert (record["set_name"], record["set_hash"]) == ("items.jsonl", hashed.stdout.strip())
    assert record["set_hash"] == canonical_hash(HELD)
    said = " ".join(result.stderr.split())  # the line may wrap
    assert f"set items.jsonl, sha256 {record['set_hash'][:12]}; sources: items.jsonl (own, 2 flawed))" in said
    assert (record["n_flawed"], record["n_sound"], record["n_twins"], record["split"]) == (
        2,
        21,
        0,
        "heldout",
    )


def test_labels_that_contradict_themselves_are_refused(env: Path, simulator_server: SimulatorServer) -> None:
    # the first flawed problem is also labelled a sound control, with its spacing changed
    twin = HELD[0]
    spaced = {"question": "  " + twin["question"].replace(" ", "  "), "solution": twin["solution"] + " "}
    control = {"id": "same", "split": "heldout", "kind": "control"} | spaced
    result = validate_save(write(env / "mixed.jsonl", [*HELD, control]))
    assert result.exit_code == 1, result.output
    assert "error: the labels contradict themselves: choir (flawed) = same (control)" in result.stderr
    assert simulator_server.state.requests == [] and saved(env) == []


async def test_the_api_refuses_what_cannot_be_recorded_with_a_422(
    service: Service, simulator_server: SimulatorServer, database_url: str
) -> None:
    async def save(**fields: Any) -> dict[str, Any]:
        body = {"items": HELD, "judge_model": "sim", "save": True} | fields
        response = await service.client.post(
            "/v1/judges/validate", json=body, headers=service.keys.auth("validator")
        )
        return assert_problem(response, 422)

    reserved = await save(set_name="shipped")
    assert "the set name 'shipped' is reserved" in str(reserved["detail"])
    contradicted = [*HELD, {"id": "same", "split": "heldout", "kind": "control"} | _problem(HELD[1])]
    assert "trays (flawed) = same (control)" in str((await save(items=contradicted))["detail"])
    assert simulator_server.state.requests == []  # refused before any call
    judges_score(simulator_server, 40)
    assert "passed 0 of 21 sound versions" in str((await save())["detail"])
    assert await stored_records(database_url) == []


async def test_the_api_hashes_the_items_as_sent(service: Service) -> None:
    padded = [HELD[0] | {"question": HELD[0]["question"] + "  "}, *HELD[1:]]  # stripped when read
    body = {"items": padded, "judge_model": "sim", "save": True, "set_name": "district"}
    response = await service.client.post(
        "/v1/judges/validate", json=body, headers=service.keys.auth("validator")
    )
    assert response.status_code == 200, response.text
    record = response.json()["record"]
    assert record["set_name"] == "district" and record["set_hash"] == canonical_hash(padded)
    assert record["set_hash"] != canonical_hash(HELD)


def _problem(item: dict[str, Any]) -> dict[str, str]:
    return {"question": item["question"], "solution": item["solution"]}


async def test_a_project_may_require_both_bounds(service: Service) -> None:
    body = {"items": HELD, "judge_model": "sim", "save": True}
    saved_ = await service.client.post(
        "/v1/judges/validate", json=body, headers=service.keys.auth("validator")
    )
    record = saved_.json()["record"]  # 2 of 2 flawed accepted, 21 of 21 sound passed: ≥ 84.5 %
    admin = service.keys.auth("admin")
    projects = (await service.client.get("/v1/projects", headers=admin)).json()["items"]
    default = next(p for p in projects if p["name"] == "default")
    assert default["require_specificity"] is None

    async def require(**bounds: Any) -> dict[str, Any]:
        changed = await service.client.patch(f"/v1/projects/{default['id']}", json=bounds, headers=admin)
        assert changed.status_code == 200, changed.text
        sound = {"question": HELD[2]["question"], "solution": HELD[2]["solution"]}
        options = {"model": "sim", "judge_model": "sim", "max_rounds": 1}
        response = await service.client.post(
            "/v1/runs",
            json={"problem": sound, "options": options},
            params={"wait": "true"},
            headers=service.keys.auth(),
        )
        trace: dict[str, Any] = response.json()
        return trace

    strict = await require(require_warrant=1.0, require_specificity=0.9)
    assert strict["status"] == "needs_review" and strict["stop_reason"] == (
        f"panel not certified: its cited validity record ({record['id']}) bounds sound passed at "
        "≥ 84.5% (95 %), below the required 90.0%"
    )
    met = await require(require_specificity=0.8)
    assert met["status"] == "accepted" and met["warrant"]["sound_passed_lower"] == pytest.approx(
        0.8454, abs=1e-4
    )
    assert met["warrant"]["set_hash"] == record["set_hash"][:12] and met["warrant"]["set"] == "items"
    for bad in (0, 1.5, "0.7"):
        refused = await service.client.patch(
            f"/v1/projects/{default['id']}", json={"require_specificity": bad}, headers=admin
        )
        assert_problem(refused, 422)


def test_the_setting_may_require_both_bounds(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = json.loads(validate_save(env / "items.jsonl").stdout)["record"]  # sound passed ≥ 84.5 %
    monkeypatch.setenv("THINKLOOP_REQUIRE_WARRANT", "1,0.9")  # any false-accept bound; ≥ 90 % passed
    ended = json.loads(runner.invoke(cli, [*REFINE, "--json"]).stdout)
    assert ended["outcome"] == "needs_review" and ended["stop_reason"] == (
        f"panel not certified: its cited validity record ({record['id']}) bounds sound passed at "
        "≥ 84.5% (95 %), below the required 90.0%"
    )
    monkeypatch.setenv("THINKLOOP_REQUIRE_WARRANT", "1,0.8")
    assert json.loads(runner.invoke(cli, [*REFINE, "--json"]).stdout)["outcome"] == "accepted"
    monkeypatch.setenv("THINKLOOP_REQUIRE_WARRANT", "0.1,0.8,0.9")
    bad = runner.invoke(cli, REFINE)
    assert bad.exit_code != 0 and "FALSE_ACCEPT[,SOUND_PASSED]" in str(bad.exception)  # as any bad setting


def test_a_record_without_the_sound_bound_meets_no_requirement(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = json.loads(validate_save(env / "items.jsonl").stdout)["record"]
    with sqlite3.connect(env / "w.db") as connection:  # as a record saved before migration 0026 reads
        connection.execute("UPDATE validity_records SET specificity_low = NULL")
    shown = runner.invoke(cli, REFINE)
    assert "sound passed: not recorded (saved before records kept it)" in shown.stdout
    monkeypatch.setenv("THINKLOOP_REQUIRE_WARRANT", "1")  # any false-accept bound, and the floor
    ended = json.loads(runner.invoke(cli, [*REFINE, "--json"]).stdout)
    assert ended["outcome"] == "needs_review" and ended["stop_reason"] == (
        f"panel not certified: its cited validity record ({record['id']}) holds no lower bound of sound "
        "versions passed (saved before records kept it): validate the panel again (required: sound "
        "passed ≥ 50.0%)"
    )
