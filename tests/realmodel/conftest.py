"""The ``realmodel`` tier's fixtures: Gemma 3 270M on llama.cpp's ``llama-server``, and thinkloop
configured to use it as a user would (a models file, the CLI, the API).

Where the server comes from:
- ``THINKLOOP_REALMODEL_URL`` set (``.ci/run`` starts one server for the whole run with
  ``scripts/realmodel.sh start``): that server, which must answer ``/health``;
- otherwise the tier builds or reuses ``llama-server`` (``scripts/llama-server.sh``, cached by
  version) and the model, before any test runs (so the first machine's build is not charged to one
  test's timeout), and each pytest process that runs the tier starts its own server.

Nothing here skips: a server that cannot be built, started or reached fails the tier.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agents.realmodel import (
    GEMMA_FILE,
    MODEL_ID,
    NAME,
    TIER_MAX_TOKENS,
    LlamaServer,
    get_json,
    health,
    prepared,
    start_server,
)

URL_VARIABLE = "THINKLOOP_REALMODEL_URL"
_PREPARED = pytest.StashKey[tuple[Path, Path]]()  # the binary and the model, once prepared


def pytest_configure(config: pytest.Config) -> None:
    """The marker, for a tree whose pyproject does not list it yet (listing it twice is harmless)."""
    config.addinivalue_line("markers", "realmodel: runs a real language model on a local server")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Build or reuse the server and the model before the first test, when the tier is selected and
    no server was given: the build takes minutes on a new machine, longer than a test may."""
    if os.environ.get(URL_VARIABLE) or session.config.option.collectonly:
        return
    if any(item.get_closest_marker("realmodel") for item in session.items):
        session.config.stash[_PREPARED] = prepared()


@dataclass(frozen=True)
class RealModel:
    """The running server, and what the tests read from it."""

    url: str

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL."""
        return f"{self.url}/v1"

    def slots(self) -> list[dict[str, Any]]:
        """``/slots``: one entry per slot, with ``is_processing`` and the task it runs."""
        found = get_json(f"{self.url}/slots")
        assert isinstance(found, list)
        return found

    def total_slots(self) -> int:
        """How many requests the server generates for at once (``/props``)."""
        props = get_json(f"{self.url}/props")
        assert isinstance(props, dict)
        return int(props["total_slots"])

    def reported_model(self) -> str:
        """The model id thinkloop records for this server's replies: its ``--alias`` with the model
        file it serves (``/props`` ``model_path``, ``/v1/models`` ``meta``)."""
        listed = get_json(f"{self.url}/v1/models")
        assert isinstance(listed, dict)
        meta = listed["data"][0]["meta"]
        return f"{MODEL_ID} [file {GEMMA_FILE}, {meta['size']} bytes, {meta['n_params']} parameters]"

    def metrics(self) -> dict[str, float]:
        """``/metrics`` (Prometheus text) as name → value."""
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as response:
            text = response.read().decode()
        values: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                values[name] = float(value)
        return values

    def models_toml(self, **fields: Any) -> str:
        """A models file with this server as model ``gemma`` (``fields`` override or add keys), with
        the tier's reply bounds (``TIER_MAX_TOKENS``)."""
        entry: dict[str, Any] = {"model": MODEL_ID, "base_url": self.base_url} | fields
        lines = [f"[models.{NAME}]"] + [f"{key} = {_toml(value)}" for key, value in entry.items()]
        lines += [f"[models.{NAME}.max_tokens]"]
        lines += [f"{kind} = {bound}" for kind, bound in TIER_MAX_TOKENS.items()]
        return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _given_server(url: str) -> RealModel:
    deadline = time.monotonic() + 120  # a server started just before may still be loading
    status = health(url)
    while status != 200 and time.monotonic() < deadline:
        time.sleep(0.5)
        status = health(url)
    if status != 200:
        pytest.fail(f"{URL_VARIABLE}={url}: /health answered {status} (a running llama-server answers 200)")
    return RealModel(url)


@pytest.fixture(scope="session")
def realmodel(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RealModel]:
    """The server: the one ``THINKLOOP_REALMODEL_URL`` names, or one this process starts."""
    given = os.environ.get(URL_VARIABLE)
    if given:
        yield _given_server(given.rstrip("/"))
        return
    ready = request.config.stash.get(_PREPARED, None) or prepared()
    server: LlamaServer = start_server(*ready, tmp_path_factory.mktemp("llama-server"))
    with server:
        yield RealModel(server.url)


@pytest.fixture
def models_file(realmodel: RealModel, tmp_path: Path) -> Path:
    """A models file naming the server ``gemma``, with thinkloop's defaults for everything else."""
    path = tmp_path / "models.toml"
    path.write_text(realmodel.models_toml(), "utf-8")
    return path


@dataclass(frozen=True)
class Result:
    """A finished CLI command."""

    code: int
    out: str
    err: str


def command(directory: Path, models_file: Path) -> Any:
    """``thinkloop`` as a user runs it: its own process in ``directory``, the models file, a SQLite
    database in ``directory`` (one for every command run through the same ``directory``)."""
    executable = Path(sys.executable).with_name("thinkloop")

    def run(*args: str, models: Path | None = None, timeout: float = 600) -> Result:
        env = os.environ | {
            "THINKLOOP_MODELS_FILE": str(models or models_file),
            "THINKLOOP_DATABASE_URL": f"sqlite+aiosqlite:///{directory / 'thinkloop.db'}",
            "THINKLOOP_LOG_LEVEL": "WARNING",
            "COLUMNS": "200",  # Rich wraps at the terminal's width: one line per line in the tests
        }
        done = subprocess.run(
            [str(executable), *args],
            cwd=directory,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        # Kept beside the test (pytest keeps its last three runs' directories): what Gemma wrote.
        (directory / f"{args[0]}-{done.returncode}.out").write_text(done.stdout + done.stderr, "utf-8")
        return Result(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture
def thinkloop(tmp_path: Path, models_file: Path) -> Any:
    """Run the ``thinkloop`` command as a user would: its own process, the tier's models file, a
    fresh SQLite database in the test's directory."""
    return command(tmp_path, models_file)


__all__ = ["NAME", "TIER_MAX_TOKENS", "RealModel", "Result", "command"]
