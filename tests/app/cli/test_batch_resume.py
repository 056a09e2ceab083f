"""A researcher's round trip in the CLI: interrupt a batch (a real signal to a real process), list it,
resume it by an id prefix, export its items to Parquet and open them in pandas."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from typer.testing import CliRunner

from agents.simulator import SimulatorServer
from app.cli import cli
from tests.helpers.batches import VERDICTS
from tests.helpers.paths import ROOT

SAMPLE = ROOT / "app" / "samples" / "datasets" / "flawed-problems.jsonl"
runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulator_server: SimulatorServer) -> dict[str, str]:
    """The database and the simulator as model ``sim``, for this process and the subprocess; leases
    far longer than the test, so only a release lets a resume take the items."""
    values = {
        "THINKLOOP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'b.db'}",
        "THINKLOOP_MODELS__SIM__MODEL": "sim-1",
        "THINKLOOP_MODELS__SIM__BASE_URL": simulator_server.base_url,
        "THINKLOOP_MODELS__SIM__TIMEOUT_S": "120",
        "THINKLOOP_RUN_LEASE_S": "600",
        "THINKLOOP_LOG_LEVEL": "WARNING",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


def three_problems(tmp_path: Path) -> Path:
    path = tmp_path / "three.jsonl"
    path.write_text("\n".join(SAMPLE.read_text().splitlines()[:3]) + "\n")
    return path


def query(database: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(database) as connection:
        return connection.execute(sql).fetchall()


def wait_for(condition: Callable[[], bool], what: str, within_s: float = 120.0) -> None:
    """Poll a condition (the bound only stops a hung test; nothing is timed)."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.1)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP])
def test_interrupt_list_resume_by_prefix_and_export_to_pandas(
    tmp_path: Path, env: dict[str, str], sim: Callable[..., SimulatorServer], signum: signal.Signals
) -> None:
    database = tmp_path / "b.db"
    sim(latency_s=60.0)  # every call hangs: the items are in flight when the signal comes
    command = [sys.executable, "-m", "app", "batch", "run", "--dataset", str(three_problems(tmp_path))]
    command += ["--models", "sim", "--judge-model", "sim"]
    process = subprocess.Popen(
        command, cwd=ROOT, env=os.environ | env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        in_flight = "SELECT count(*) FROM batch_items WHERE status = 'running'"
        wait_for(lambda: database.exists() and _count(database, in_flight) == 3, "three items in flight")
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 128 + signum, stderr
    (batch_id,) = [row[0] for row in query(database, "SELECT id FROM batches")]
    said = " ".join(stderr.split())
    assert f"interrupted by {signum.name}: 0 of 3 item(s) finished, 3 left (3 in flight handed back)" in said
    assert f"resume with: thinkloop batch resume {batch_id[:12]}" in said
    # handed back at once, items and their runs: nothing waits for the 600 s leases to lapse
    assert query(database, "SELECT status FROM batch_items") == [("queued",)] * 3
    held = "SELECT count(*) FROM runs WHERE lease_owner IS NOT NULL AND status IN ('queued', 'running')"
    assert _count(database, held) == 0

    listed = runner.invoke(cli, ["batch", "list"])
    assert listed.exit_code == 0 and re.search(rf"{batch_id[:12]} .* running .* sim .* 0/3", listed.output)
    status = runner.invoke(cli, ["batch", "status", batch_id[:8]])
    assert f"resume     thinkloop batch resume {batch_id[:12]}" in status.output

    sim(latency_s=0.0)
    resumed = runner.invoke(cli, ["batch", "resume", batch_id[:8], "--format", "json"])
    assert resumed.exit_code == 0, resumed.output
    report = json.loads(resumed.output[resumed.output.index("{") : resumed.output.rindex("}") + 1])
    assert report["batch"]["status"] == "completed" and report["outcomes"]["total"] == 3
    assert "unfinished" not in {k for k, n in report["outcomes"].items() if n}

    exported = tmp_path / "items.parquet"
    done = runner.invoke(cli, ["batch", "items", batch_id[:8], "--format", "parquet", "-o", str(exported)])
    assert done.exit_code == 0, done.output
    frame = pd.read_parquet(exported)
    assert len(frame) == 3 and set(frame["status"]) <= VERDICTS and set(frame["model"]) == {"sim"}
    assert list(frame["trace"]) == [f"/v1/runs/{run}" for run in frame["run_id"]]
    assert (frame["attempts"] == 2).all()  # the interrupted claim, then the resumed one
    manifest = json.loads(pq.read_schema(exported).metadata[b"thinkloop.manifest"])
    assert manifest["batch_id"] == batch_id and manifest["dataset"]["problems"] == 3


def _count(database: Path, sql: str) -> int:
    try:
        return int(query(database, sql)[0][0])
    except sqlite3.OperationalError:  # not migrated yet
        return 0


def test_batch_run_leaves_another_batchs_items_alone(tmp_path: Path, env: dict[str, str]) -> None:
    dataset = three_problems(tmp_path)
    first = _run(["--dataset", str(dataset), "--models", "rubric"])
    database = tmp_path / "b.db"
    with sqlite3.connect(database) as connection:  # as a process stopped mid-batch leaves it
        connection.execute("UPDATE batch_items SET status = 'queued', run_id = NULL")
        connection.execute("UPDATE batches SET status = 'running', finished_at = NULL")
    second = runner.invoke(cli, ["batch", "run", "--dataset", str(dataset), "--models", "rubric"])
    assert second.exit_code == 0, second.output
    assert f"note: batch {first[:12]} (running) has 3 item(s) left" in " ".join(second.output.split())
    left = query(database, f"SELECT status FROM batch_items WHERE batch_id = '{first}'")
    assert left == [("queued",)] * 3


def _run(args: list[str]) -> str:
    result = runner.invoke(cli, ["batch", "run", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return str(
        json.loads(result.output[result.output.index("{") : result.output.rindex("}") + 1])["batch"]["id"]
    )


def test_ids_by_prefix_unique_ambiguous_or_none(tmp_path: Path, env: dict[str, str]) -> None:
    first = _run(["--dataset", str(three_problems(tmp_path)), "--models", "rubric"])
    asyncio.run(_twin(first, "abc1" + first[4:], "abc2" + first[4:]))
    ambiguous = runner.invoke(cli, ["batch", "status", "abc"])
    assert ambiguous.exit_code == 2
    said = " ".join(ambiguous.output.split())
    assert "'abc' fits several batches" in said and "abc1" + first[4:] in said and "abc2" + first[4:] in said
    assert runner.invoke(cli, ["batch", "report", "abc2", "--format", "json"]).exit_code == 0
    for missing in ("fff0", "not-hex", ""):
        result = runner.invoke(cli, ["batch", "items", missing])
        assert result.exit_code == 2 and "no batch" in result.output


async def _twin(source: str, *ids: str) -> None:
    """Copies of a batch's row under chosen ids (prefixes that collide on purpose)."""
    from app.db import create_engine, session_factory, short_session
    from app.models import Batch
    from app.settings import get_settings

    engine = create_engine(get_settings().database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            batch = await session.get(Batch, source)
            assert batch is not None
            for new in ids:
                session.add(Batch(**batch.model_dump() | {"id": new}))
    finally:
        await engine.dispose()


def test_status_is_for_people_and_json_for_machines(tmp_path: Path, env: dict[str, str]) -> None:
    batch_id = _run(["--dataset", str(three_problems(tmp_path)), "--models", "rubric", "--control"])
    text = runner.invoke(cli, ["batch", "status", batch_id[:6]]).output
    assert f"batch {batch_id} — completed" in text
    # How the items ended, in their runs' words (the offline panel screens, or exhausts the rounds).
    tally = re.search(r"6 of 6 finished: (.*)", text)
    counted = re.findall(r"(\d+) (\w+)", tally[1]) if tally else []
    assert sum(int(n) for n, status in counted if status in VERDICTS) == 6
    assert "resume" not in text and not re.search(r"\d\.\d{7,}", text)
    state = json.loads(runner.invoke(cli, ["batch", "status", batch_id[:6], "--json"]).output)
    assert state["finished"] == state["total"] == 6 and state["status"] == "completed"


def test_csv_export_writes_its_manifest_beside_it(tmp_path: Path, env: dict[str, str]) -> None:
    batch_id = _run(["--dataset", str(three_problems(tmp_path)), "--models", "rubric"])
    target = tmp_path / "items.csv"
    result = runner.invoke(cli, ["batch", "items", batch_id, "--format", "csv", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert len(pd.read_csv(target, engine="python")) == 3  # the C parser crashed once in CI (SIGSEGV)
    manifest = json.loads((tmp_path / "items.csv.manifest.json").read_text())
    assert manifest["batch_id"] == batch_id and manifest["models"][0]["offline"] is True
    on_stdout = runner.invoke(cli, ["batch", "items", batch_id, "--format", "csv"])
    assert len(pd.read_csv(io.StringIO(on_stdout.stdout), engine="python")) == 3
    said = " ".join(on_stdout.stderr.split())
    assert "CSV on stdout has no manifest" in said and "--format csv -o FILE" in said
    lines = runner.invoke(cli, ["batch", "items", batch_id]).output.splitlines()
    assert json.loads(lines[0])["manifest"]["dataset"] == manifest["dataset"] and len(lines) == 4
    bad = runner.invoke(cli, ["batch", "items", batch_id, "--format", "xlsx"])
    assert bad.exit_code == 2 and "unknown format" in bad.output


def test_models_file_on_batch_run(tmp_path: Path, env: dict[str, str]) -> None:
    registry = tmp_path / "models.toml"
    registry.write_text('[models.filed]\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n')
    args = ["batch", "run", "--dataset", str(three_problems(tmp_path)), "--models", "nowhere"]
    result = runner.invoke(cli, [*args, "--models-file", str(registry)])
    assert result.exit_code == 2 and "unknown model 'nowhere'" in result.output and "filed" in result.output
