"""`thinkloop judges repair`: the loop on labelled flawed problems, each run classified against its
answer key. The reviser is the simulator, scripted: a plausible repair with the wrong answer passes
the offline screen and is counted accepted but wrong, never repaired."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agents.simulator import Rule, SimulatorServer
from app.cli import cli
from tests.helpers.repair_items import CORRECTED, ITEM, QUESTION

runner = CliRunner()
WRONG = {"question": QUESTION, "solution": "4 × 12 = 48 rolls; 48 − 12 = 36 rolls are left."}
# A given the story never had (5 customers): the answer is still 33 and the screen passes it, but
# the question is neither the original nor the correction.
OTHER_GIVENS = {
    "question": QUESTION.replace("15 rolls", "15 rolls to 5 customers"),
    "solution": "4 × 12 = 48 rolls; 48 − 15 = 33 rolls are left.",
}
RIGHT = {"question": CORRECTED.question, "solution": CORRECTED.solution}


def labelled_set(tmp_path: Path) -> Path:
    path = tmp_path / "set.jsonl"
    control = {"id": "control", "split": "heldout", "kind": "control", **RIGHT}
    path.write_text(ITEM.model_dump_json(exclude_none=True) + "\n" + json.dumps(control) + "\n")
    return path


def models_file(tmp_path: Path, server: SimulatorServer) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(f'[models.student]\nmodel = "s"\nbase_url = "{server.base_url}"\nmax_retries = 0\n')
    return path


def repair(tmp_path: Path, server: SimulatorServer, *extra: str) -> dict[str, Any]:
    args = ["judges", "repair", "--dataset", str(labelled_set(tmp_path)), "--json"]
    args += ["--reviser", "student", "--models-file", str(models_file(tmp_path, server)), *extra]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@pytest.mark.parametrize(
    ("revision", "verdict"),
    [(WRONG, "accepted_but_wrong"), (OTHER_GIVENS, "givens_changed"), (RIGHT, "repaired")],
    ids=["plausible-but-wrong", "a-given-changed", "the-real-repair"],
)
def test_a_scripted_reviser_is_classified_by_its_final_version(
    tmp_path: Path, sim: Callable[..., SimulatorServer], revision: dict[str, str], verdict: str
) -> None:
    server = sim([Rule(role="^Reviser", json={"thinking": "I fix the computation.", **revision})])
    report = repair(tmp_path, server)
    (run,) = report["runs"]  # the control has no corrected version: it is not a repair problem
    # round 1 refused the flawed original, the scripted revision passed the screen in round 2
    assert (run["item"], run["reviser"], run["outcome"], run["rounds"]) == ("rolls", "student", "screened", 2)
    assert run["verdict"] == verdict and run["final"] == revision
    assert [r.role for r in server.state.requests] == ["Reviser"]  # the judges are the offline screen
    overall = report["figures"]["student"]["overall"]
    assert overall["counts"][verdict] == 1 and overall["decided"] == 1
    assert overall["repaired"]["count"] == (verdict == "repaired")
    assert overall["accepted_but_wrong"]["count"] == (verdict == "accepted_but_wrong")
    assert overall["repaired"]["n"] == 1 and overall["repaired"]["high"] > overall["repaired"]["low"]
    assert list(report["figures"]["student"]["by_flaw"]) == ["arithmetic_symbolic"]


def test_a_reviser_that_keeps_the_flaw_gave_up(tmp_path: Path, sim: Callable[..., SimulatorServer]) -> None:
    flawed = {"question": ITEM.question, "solution": ITEM.solution}
    server = sim([Rule(role="^Reviser", json={"thinking": "Unchanged.", **flawed})])
    report = repair(tmp_path, server, "--max-rounds", "2")
    (run,) = report["runs"]
    # an echo is no revision: the run ends after round 1, "the model under test did not revise"
    assert (run["outcome"], run["verdict"], run["rounds"]) == ("exhausted", "gave_up", 1)
    assert report["figures"]["student"]["overall"]["gave_up"]["rate"] == 1.0


def test_the_offline_reviser_prints_the_table(tmp_path: Path) -> None:
    result = runner.invoke(cli, ["judges", "repair", "--dataset", str(labelled_set(tmp_path))])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        "# Repair: 1 flawed problems with a corrected version (set.jsonl, heldout)"
    )
    assert "## Reviser `rubric`" in result.stdout
    # the offline reviser does not find this wrong product: the loop gives up after three rounds
    gave_up = "| 1 | 0/1 0.0 % (0.0–79.3) | 0/1 0.0 % (0.0–79.3) | 1/1 100.0 % (20.7–100.0) | 0 | 0 | 0 | 0 |"
    assert f"| **all** {gave_up}" in result.stdout and f"| arithmetic_symbolic {gave_up}" in result.stdout


def test_a_set_without_the_split_or_an_unknown_reviser_is_refused(tmp_path: Path) -> None:
    dataset = str(labelled_set(tmp_path))
    no_split = runner.invoke(cli, ["judges", "repair", "--dataset", dataset, "--split", "tune"])
    assert no_split.exit_code == 2 and "no items in the tune split" in no_split.output
    unknown = runner.invoke(cli, ["judges", "repair", "--dataset", dataset, "--reviser", "nobody"])
    assert unknown.exit_code == 2 and "nobody" in unknown.output


def test_a_reviser_that_cannot_be_reached_is_undecided_and_exits_1(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on: every call is refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    models = tmp_path / "models.toml"
    models.write_text(
        f'[models.gone]\nmodel = "g"\nbase_url = "http://127.0.0.1:{port}/v1"\nmax_retries = 0\n'
    )
    args = ["judges", "repair", "--dataset", str(labelled_set(tmp_path)), "--json"]
    result = runner.invoke(cli, [*args, "--reviser", "gone", "--models-file", str(models)])
    assert result.exit_code == 1 and "1 run(s) ended in error: the figures exclude them" in result.output
    report = json.loads(result.stdout)
    (run,) = report["runs"]
    assert (run["outcome"], run["verdict"]) == ("error", "undecided")
    overall = report["figures"]["gone"]["overall"]
    assert overall["decided"] == 0 and overall["repaired"]["n"] == 0 and overall["repaired"]["excluded"] == 1


def test_a_saved_repair_measurement_is_stored_per_reviser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from sqlmodel import select

    from app.db import create_engine, session_factory, short_session
    from app.models import RepairRecord

    url = f"sqlite+aiosqlite:///{tmp_path / 'r.db'}"
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", url)
    args = ["judges", "repair", "--dataset", str(labelled_set(tmp_path)), "--save"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "saved repair record" in result.output and "reviser rubric" in result.output

    async def stored() -> list[RepairRecord]:
        engine = create_engine(url)
        try:
            async with short_session(session_factory(engine)) as session:
                return list((await session.execute(select(RepairRecord))).scalars().all())
        finally:
            await engine.dispose()

    (row,) = asyncio.run(stored())
    assert (row.reviser, row.judge_model, row.set_name, row.split, row.decided) == (
        "rubric",
        "rubric",
        "set.jsonl",
        "heldout",
        1,
    )
    assert row.gave_up["count"] == 1 and row.gave_up["low"] > 0.2 and row.repaired["count"] == 0
    assert len(row.set_hash) == 64 and row.identity["judge_model"] == "rubric" and row.panel_id
    unknown = runner.invoke(cli, [*args, "--project", "nowhere"])
    assert unknown.exit_code == 1 and "nowhere" in unknown.output
