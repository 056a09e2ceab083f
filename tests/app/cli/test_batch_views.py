"""What `thinkloop batch status|list` and the progress bar show a person: a finished batch ran (it is
not running), the list's JSON names each batch's models and creation time, and the bar is readable at
80 columns without a terminal."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from app.cli import cli
from app.cli.batch_exec import bar
from app.cli.batch_views import status_text
from app.models import Batch, utcnow
from tests.helpers.paths import SAMPLES

SAMPLE = SAMPLES / "datasets" / "flawed-problems.jsonl"


def _state(finished: int, total: int) -> dict[str, Any]:
    return {
        "items": {"accepted": finished, "queued": total - finished}
        if total > finished
        else {"accepted": total},
        "total": total,
        "finished": finished,
        "stop_reason": None,
        "eta_s": None,
        "waiting": [],
        "input_tokens": 10,
        "output_tokens": 5,
        "cost_usd": 0.0,
        "latency_s": 1.0,
    }


def _batch(status: str, ran: timedelta, finished: bool) -> Batch:
    created = utcnow() - ran - timedelta(hours=1)
    return Batch(
        id="b" * 32,
        dataset_id="d",
        models=["m"],
        judge_model="m",
        policy="default",
        max_rounds=3,
        repeats=1,
        status=status,
        created_at=created,
        finished_at=created + ran if finished else None,
    )


def test_a_finished_batch_ran_for_its_duration_and_says_when_it_finished() -> None:
    batch = _batch("completed", timedelta(minutes=3, seconds=22), finished=True)
    text = status_text(batch, _state(12, 12), {})
    assert "ran for 3m 22s, finished " in text and "running" not in text
    assert batch.finished_at is not None and f"{batch.finished_at:%Y-%m-%d %H:%M} UTC" in text


def test_a_running_batch_is_running_and_a_paused_one_is_paused() -> None:
    running = status_text(_batch("running", timedelta(0), finished=False), _state(3, 12), {})
    assert "· running for 1h 00m" in running
    paused = status_text(_batch("paused", timedelta(0), finished=False), _state(3, 12), {})
    assert "· paused, 1h 00m since it was created" in paused and "running for" not in paused


def test_the_progress_bar_is_readable_at_80_columns_without_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False, color_system=None)
    with bar(console) as shown:
        overall = shown.add_task(f"batch {'0123456789ab'}", total=600, rate="")
        shown.update(overall, completed=123, rate="41.0/min")
        model = shown.add_task("  gpt-4o-mini", total=300, rate="")
        shown.update(model, completed=61)
        shown.spent = "  errors 2 · tokens 1,234,567 · $0.0133"
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines) and "…" not in out.getvalue(), out.getvalue()
    first = next(line for line in lines if line.startswith("batch 0123456789ab"))
    assert "123/600" in first and "41.0/min" in first and "eta" in first
    assert any("gpt-4o-mini" in line and "61/300" in line for line in lines)
    assert "errors 2 · tokens 1,234,567 · $0.0133" in out.getvalue()


def test_batch_list_json_names_models_and_creation_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    dataset = tmp_path / "two.jsonl"
    dataset.write_text("\n".join(SAMPLE.read_text().splitlines()[:2]) + "\n")
    runner = CliRunner()
    made = runner.invoke(cli, ["batch", "run", "--dataset", str(dataset), "--models", "rubric"])
    assert made.exit_code in (0, 1), made.output
    listed = runner.invoke(cli, ["batch", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    (entry,) = json.loads(listed.output)
    assert entry["models"] == ["rubric"] and entry["judge_model"] == "rubric"
    assert entry["created_at"].endswith("+00:00") and entry["status"] == "completed"
    status = runner.invoke(cli, ["batch", "status", entry["id"][:8]])
    assert "ran for " in status.output and "running for" not in status.output
