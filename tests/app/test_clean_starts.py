"""Clean starts: processes that start together on a fresh SQLite database migrate one at a time (a
file lock), and a database that cannot be reached is one line on stderr and a non-zero exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.app.conftest import free_port

COMMAND = [sys.executable, "-m", "app"]


def _env(url: str) -> dict[str, str]:
    return os.environ | {"THINKLOOP_DATABASE_URL": url, "THINKLOOP_LOG_LEVEL": "WARNING"}


@pytest.mark.parametrize(
    ("url", "said"),
    [
        pytest.param(
            "postgresql://thinkloop:secret@127.0.0.1:1/thinkloop", "127.0.0.1:1", id="postgres-refused"
        ),
        pytest.param(
            "postgresql://thinkloop@no-such-host.invalid/thinkloop", "no-such-host.invalid", id="no-host"
        ),
        pytest.param(
            "sqlite:////no/such/folder/thinkloop.db", "/no/such/folder/thinkloop.db", id="sqlite-no-folder"
        ),
    ],
)
@pytest.mark.parametrize(
    "args", [["serve", "--port", "1"], ["keys", "create", "--name", "app"], ["migrate"]], ids=str
)
def test_an_unreachable_database_is_one_line_and_a_non_zero_exit(
    url: str, said: str, args: list[str]
) -> None:
    done = subprocess.run([*COMMAND, *args], env=_env(url), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: cannot reach the database at ") and said in lines[0]
    assert "secret" not in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_serve_and_keys_create_started_together_on_a_fresh_sqlite_database_both_succeed(
    tmp_path: Path,
) -> None:
    for attempt in range(20):
        env = _env(f"sqlite+aiosqlite:///{tmp_path / f'fresh-{attempt}.db'}")
        serve = subprocess.Popen(
            [*COMMAND, "serve", "--port", str(free_port())],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            key = subprocess.run(
                [*COMMAND, "keys", "create", "--name", "app"],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert key.returncode == 0, (attempt, key.stderr[-2000:])
            header, secret = key.stdout.strip().splitlines()
            assert header.startswith("id ") and secret.startswith("tlk_") and len(secret) > 20
            assert serve.stdout is not None
            announced = serve.stdout.readline()  # printed once it listens, after its migration
            assert announced.startswith("thinkloop API at "), (attempt, announced, serve.poll())
        finally:
            serve.terminate()
            _, errors = serve.communicate(timeout=60)
        assert "Traceback" not in errors and "already exists" not in errors, (attempt, errors[-2000:])
