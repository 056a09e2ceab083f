"""`thinkloop reviews list|show|decide|export` and `judges validate --review-set` on the database
the service writes: the same queue, decisions and review set as over HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agents.simulator import SimulatorServer
from app.cli import cli
from tests.helpers.reviewing import corrected, make_key, queue, submit, unread
from tests.helpers.service import Service

runner = CliRunner()


@pytest.fixture
def env(database_url: str, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer) -> None:
    """The CLI on the service's database, the simulator as model ``sim``."""
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", database_url)
    monkeypatch.setenv("THINKLOOP_MODELS__SIM__MODEL", "sim-1")
    monkeypatch.setenv("THINKLOOP_MODELS__SIM__BASE_URL", simulator_server.base_url)
    monkeypatch.delenv("THINKLOOP_REQUIRE_WARRANT", raising=False)


async def invoke(*args: str) -> Result:
    """The CLI in a thread of its own (it runs its own event loop)."""
    return await asyncio.to_thread(runner.invoke, cli, list(args))


async def test_a_teacher_lists_shows_and_decides_from_the_command_line(
    service: Service, env: None, database_url: str, tmp_path: Path
) -> None:
    teacher, _ = await make_key(database_url, "ms-okafor", ["review"])
    runs = [
        await submit(service, service.keys.both, unread(n) | {"metadata": {"pupil": f"P-{n}"}})
        for n in (1, 2)
    ]
    listed = await invoke("reviews", "list", "--json")
    assert listed.exit_code == 0, listed.output
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert {row["run_id"] for row in rows} == {run["id"] for run in runs}
    first = rows[0]
    table = await invoke("reviews", "list", "--status", "pending")
    assert first["id"] in table.stdout and "P-" in table.stdout and "needs_review" in table.stdout
    shown = await invoke("reviews", "show", first["id"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["verdicts"]
    n = int(first["question"].split("beach ")[1].split(".")[0])
    fix = corrected(n)
    decided = await invoke(
        "reviews", "decide", first["id"], "flawed", "--flaw", "missing_data=Lena's count is never given",
        "--corrected-question", fix["question"], "--corrected-solution", fix["solution"],
        "--reviewer", "mr-ito",
    )  # fmt: skip
    assert decided.exit_code == 0, decided.output
    [item] = await queue(service, teacher, status="decided")
    assert item["decision"]["reviewer"] == "mr-ito" and item["decision"]["corrected"] == fix
    again = await invoke("reviews", "decide", first["id"], "sound")
    assert again.exit_code == 1 and "no longer in the queue" in again.output
    unknown = await invoke("reviews", "decide", rows[1]["id"], "flawed", "--flaw", "typo=x")
    assert unknown.exit_code == 2 and "the valid ones are false_proportionality" in unknown.output
    foreign = await invoke("reviews", "show", first["id"], "--project", "nowhere")
    assert foreign.exit_code == 1
    exported = await invoke("reviews", "export")
    path = tmp_path / "reviews.jsonl"
    path.write_bytes(exported.stdout_bytes)
    hashed = await invoke("datasets", "hash", str(path))
    the_set: dict[str, Any] = (
        await service.client.get("/v1/reviews/set", headers=service.keys.auth("read"))
    ).json()
    assert hashed.stdout.split()[0] == the_set["hash"] and len(path.read_text().splitlines()) == 1


async def test_judges_validate_measures_a_review_set_and_refuses_what_cannot_be_recorded(
    service: Service, env: None, database_url: str
) -> None:
    teacher, _ = await make_key(database_url, "ms-okafor", ["review"])
    await submit(service, service.keys.both, unread(3))
    empty = await invoke("judges", "validate", "--review-set", "default", "--judge-model", "sim")
    assert empty.exit_code == 1 and "no decided review yet" in empty.output
    [item] = await queue(service, teacher)
    await asyncio.to_thread(
        runner.invoke,
        cli,
        ["reviews", "decide", item["id"], "sound", "--corrected-question", corrected(3)["question"]],
    )
    measured = await invoke(
        "judges", "validate", "--review-set", "default", "--judge-model", "sim", "--format", "json"
    )
    assert measured.exit_code == 0, measured.output
    assert json.loads(measured.stdout)["versions"] == 2  # the decided version and the teacher's edit
    refused = await invoke("judges", "validate", "--review-set", "default", "--judge-model", "sim", "--save")
    assert refused.exit_code == 1 and "a record needs at least 20" in refused.output
    both = await invoke("judges", "validate", "--review-set", "default", "--dataset", "x.jsonl")
    assert both.exit_code == 2 and "give one" in both.output
    crossing = await invoke("judges", "validate", "--review-set", "default", "--project", "north", "--save")
    assert crossing.exit_code == 2 and "never crosses projects" in crossing.output
