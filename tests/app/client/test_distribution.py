"""The Python client as its own distribution (clients/python): its wheel carries every module of
thinkloop_client, installs alone into a clean virtual environment with only httpx, pydantic and
their dependencies, and the examples of docs/python-client.md run there against a live server."""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from agents.simulator import SimulatorServer
from tests.helpers.paths import ROOT
from tests.helpers.service import live_server
from thinkloop_client import Client

PAGE = ROOT / "docs" / "python-client.md"
SERVER_PACKAGES = {"fastapi", "uvicorn", "langgraph", "langchain-core", "sqlalchemy", "sqlmodel", "httpx-sse"}


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.M | re.S)


def _documented_methods(text: str) -> set[str]:
    """The names in the method column of the page's table."""
    names: set[str] = set()
    for line in text.splitlines():
        cells = line.split("|")
        if line.startswith("|") and len(cells) > 3:
            names |= set(re.findall(r"`(\w+)`", cells[2]))
    return names


def test_the_docs_method_table_names_every_public_method_and_no_other() -> None:
    public = {name for name, _ in inspect.getmembers(Client, inspect.isfunction) if not name.startswith("_")}
    assert _documented_methods(PAGE.read_text(encoding="utf-8")) == public


def _closure(*names: str) -> set[str]:
    """The distributions ``names`` need, transitively (as installed here; extras left out)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        for spec in metadata.requires(name) or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def _uv(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    uv = shutil.which("uv")
    assert uv is not None, "uv is not on PATH"
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"}}
    return subprocess.run([uv, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _install(wheel: Path, venv: Path, constraints: Path) -> None:
    """Into ``venv``: the wheel and what it needs, at the versions of uv.lock (so uv's cache, which
    ``uv sync`` filled, has their files). Offline first; the package index is asked only when uv's
    cache has not seen its pages yet (a machine's first run)."""
    args = ("pip", "install", "-p", str(venv / "bin" / "python"), "-c", str(constraints), str(wheel))
    offline = _uv(*args, "--offline")
    if offline.returncode != 0:
        online = _uv(*args)
        assert online.returncode == 0, offline.stderr + online.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_the_client_installs_alone_and_its_docs_examples_run(
    tmp_path: Path, database_url: str, simulator_server: SimulatorServer
) -> None:
    built = _uv("build", "--wheel", "--offline", "clients/python", "--out-dir", str(tmp_path / "dist"))
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("thinkloop_client-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("thinkloop_client/")}
    ours = {f"thinkloop_client/{p.name}" for p in (ROOT / "thinkloop_client").iterdir() if p.is_file()}
    assert ours <= shipped, ours - shipped  # every module, including any added later

    venv = tmp_path / "venv"
    assert _uv("venv", "-q", "--python", sys.executable, str(venv)).returncode == 0
    constraints = tmp_path / "constraints.txt"
    exported = _uv("export", "--frozen", "--no-hashes", "--no-emit-project", "--all-groups", "-q")
    assert exported.returncode == 0, exported.stderr
    constraints.write_text(exported.stdout)
    _install(wheel, venv, constraints)

    frozen = _uv("pip", "freeze", "-p", str(venv / "bin" / "python"))
    installed = {line.split("==")[0].split(" @ ")[0].lower() for line in frozen.stdout.splitlines()}
    assert {"httpx", "pydantic", "thinkloop-client"} <= installed
    assert installed - {"thinkloop-client"} <= _closure("httpx", "pydantic"), installed
    assert not installed & SERVER_PACKAGES

    blocks = _python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 3  # the quick start, the batch, the async client (and the errors)
    async with live_server(database_url, simulator_server) as (server, keys):
        env = {"PATH": os.environ["PATH"], "THINKLOOP_URL": server.url, "THINKLOOP_API_KEY": keys.both}
        for number, code in enumerate(blocks, 1):
            script = tmp_path / f"example_{number}.py"
            script.write_text(code, encoding="utf-8")
            process = await asyncio.create_subprocess_exec(
                str(venv / "bin" / "python"),
                "-I",  # isolated: the checkout's own thinkloop_client is not on the path
                str(script),
                cwd=tmp_path,
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await process.communicate()
            assert process.returncode == 0, f"example {number}:\n{code}\n{err.decode()}"
            assert out.strip(), f"example {number} printed nothing"
