"""`thinkloop view`: a real process that prints the viewer's address once it answers, and a read-only
key that signs in to it."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.problems import PROBLEM
from tests.helpers.service import free_port

START_S = 120  # imports alone take seconds on a busy machine: a bound, not a measure


@pytest.fixture
def viewing(tmp_path: Path) -> Iterator[list[str]]:
    """`python -m app view` on a fresh SQLite file; yields what it printed once the address came."""
    yield from _started(tmp_path, "view")


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[list[str]]:
    """`python -m app serve`, likewise."""
    yield from _started(tmp_path, "serve")


def _started(tmp_path: Path, verb: str) -> Iterator[list[str]]:
    env = os.environ | {
        "THINKLOOP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'view.db'}",
        "PYTHONUNBUFFERED": "1",
    }
    command = [sys.executable, "-m", "app", verb, "--port", str(free_port())]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None

    def read() -> None:
        for line in process.stdout or []:
            lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    printed: list[str] = []
    deadline = time.monotonic() + START_S
    try:
        while not any("stop with Ctrl+C" in line for line in printed):
            assert time.monotonic() < deadline and process.poll() is None, printed
            try:
                printed.append(lines.get(timeout=1))
            except queue.Empty:
                continue
        yield printed
    finally:
        process.terminate()
        process.wait(timeout=30)
        reader.join(timeout=30)  # it ends at the pipe's end, once the process has gone
        process.stdout.close()


def test_view_prints_an_address_that_answers_and_a_key_that_reads_but_cannot_write(
    viewing: list[str],
) -> None:
    text = "".join(viewing)
    url = re.search(r"thinkloop viewer: (http://127\.0\.0\.1:\d+/)", text)
    key = re.search(r"read-only key .*: (tlk_\S+)", text)
    assert url and key, text
    page = httpx.get(url.group(1), timeout=30)
    assert page.status_code == 200 and "thinkloop viewer" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    auth = {"Authorization": f"Bearer {key.group(1)}"}
    assert httpx.get(url.group(1) + "v1/runs", headers=auth, timeout=30).status_code == 200
    refused = httpx.post(url.group(1) + "v1/runs", json={"problem": PROBLEM}, headers=auth, timeout=30)
    assert refused.status_code == 403  # the viewer's key reads; it cannot start or cancel anything


def test_serve_says_where_it_listens_once_it_answers(serving: list[str]) -> None:
    text = "".join(serving)
    url = re.search(r"thinkloop API at (http://127\.0\.0\.1:\d+/)", text)
    assert url and "the viewer at /" in text, text
    assert httpx.get(url.group(1), timeout=30).status_code == 200
    assert httpx.get(url.group(1) + "healthz", timeout=30).json()["status"] == "ok"


@pytest.mark.parametrize(("verb", "resumes"), [("view", False), ("serve", True)])
def test_view_takes_up_no_batch_and_both_read_a_models_file(
    verb: str, resumes: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Looking changes nothing: `view` starts the app without re-sending other batches' unfinished
    items (`serve`, the service, does); both take `--models-file` into the app's settings."""
    from typer.testing import CliRunner

    import app.cli.view as view_module
    from app.cli import cli
    from app.settings import Settings

    models = tmp_path / "models.toml"
    models.write_text('[models.sim]\nmodel = "sim-1"\nbase_url = "http://127.0.0.1:9/v1"\n', "utf-8")
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'view.db'}")
    started: list[Settings] = []
    monkeypatch.setattr(view_module, "serve_announcing", lambda settings, *_, **__: started.append(settings))
    plain = CliRunner().invoke(cli, [verb, "--no-key"] if verb == "view" else [verb])
    assert plain.exit_code == 0, plain.output
    result = CliRunner().invoke(
        cli, [verb, "--models-file", str(models), *(["--no-key"] if verb == "view" else [])]
    )
    assert result.exit_code == 0, result.output
    assert [s.resume_batches for s in started] == [resumes, resumes]
    assert started[-1].models_file == models and started[0].models_file != models
