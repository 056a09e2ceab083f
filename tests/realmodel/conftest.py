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
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.realmodel import (
    LlamaServer,
    health,
    prepared,
    start_server,
)
from tests.helpers.realmodel import RealModel, command

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


@pytest.fixture
def thinkloop(tmp_path: Path, models_file: Path) -> Any:
    """Run the ``thinkloop`` command as a user would: its own process, the tier's models file, a
    fresh SQLite database in the test's directory."""
    return command(tmp_path, models_file)
