"""Every example in the README and docs/ runs as written (tests/docs/examples.py says how they are read).

Each page's examples run as one bash session in a temporary folder that sees the repository's data
folders, with `uv run` pointed at this project (UV_PROJECT; UV_NO_SYNC, since the suite's own
environment is already synced), a temporary SQLite database and free ports: `127.0.0.1:8000` (the
API's default) and the simulator's `8099` and `8001` in the text become ports nobody else uses on this
shared machine, and `THINKLOOP_PORT` says the same to `thinkloop serve`. A session fails on the first
command that fails (`set -euo pipefail`).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from tests.helpers.docs_examples import NOT_RUN, ROOT, Example, examples, pages

PORTS = ("8000", "8099", "8001")
NOT_RUN_CEILING = 29
# Pages whose examples another test runs, in the setting they are written for.
RUN_ELSEWHERE = {
    "docs/python-client.md": "tests/app/client/test_distribution.py installs the client's wheel into a "
    "clean virtual environment and runs this page's examples there against a live server",
}
LINKED = ("app", "agents", "bench", "docs", "prompts", "scripts", "tests")
BARE_CLI = re.compile(r"(^|[;&|(]\s*|\$\(\s*|\bthen\s+|\bdo\s+)thinkloop\s")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _runnable_pages() -> list[str]:
    return [
        str(page.relative_to(ROOT))
        for page in pages()
        if str(page.relative_to(ROOT)) not in RUN_ELSEWHERE
        and any(ex.not_run is None for ex in examples(page))
    ]


def session(found: list[Example], workdir: Path, ports: dict[str, int]) -> str:
    """The bash script that runs FOUND in order, with the documented ports replaced by free ones."""
    parts = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    for example in found:
        if example.not_run is not None:
            continue
        text = example.text
        for documented, port in ports.items():
            text = re.sub(rf"\b(127\.0\.0\.1|localhost):{documented}\b", rf"\g<1>:{port}", text)
            text = re.sub(rf"--port {documented}\b", f"--port {port}", text)
        parts.append(f"echo '>>> {example.page}:{example.line}'")
        if example.language == "python":
            script = workdir / f"example_{example.line}.py"
            script.write_text(text, encoding="utf-8")
            parts.append(f"uv run python {script.name}")
        else:
            parts.append(text)
    return "\n".join(parts) + "\n"


def test_not_run_markers_give_a_reason_and_are_few() -> None:
    marked = 0
    for page in pages():
        for number, line in enumerate(page.read_text(encoding="utf-8").split("\n"), 1):
            if line.strip().startswith("<!-- not-run"):
                assert NOT_RUN.match(line.strip()), f"{page}:{number}: write <!-- not-run: REASON -->"
                marked += 1
    # A ceiling that only goes down: each not-run block is a real model, a build, a benchmark, the suite
    # itself or a recorded session; turning one into a runnable session lowers it.
    assert marked <= NOT_RUN_CEILING, f"{marked} examples are marked not-run (at most {NOT_RUN_CEILING})"


def test_one_way_of_invoking_the_cli() -> None:
    """Shell examples call the CLI as `uv run thinkloop …`, never a bare `thinkloop` (not on PATH)."""
    bare = [
        f"{ex.page}:{ex.line}: {line.strip()}"
        for page in pages()
        for ex in examples(page)
        if ex.language == "bash"
        for line in ex.text.split("\n")
        if BARE_CLI.search(line.split("#", 1)[0])
    ]
    assert not bare, "call the CLI as `uv run thinkloop …`:\n" + "\n".join(bare)


@pytest.mark.slow  # processes: each page starts its own server or CLI runs (about 3 min in all)
@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", _runnable_pages())
def test_page_examples_run(page: str, tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    for name in LINKED:
        (workdir / name).symlink_to(ROOT / name)
    ports = {documented: _free_port() for documented in PORTS}
    script = session(examples(ROOT / page), workdir, ports)
    env = {key: value for key, value in os.environ.items() if not key.startswith("THINKLOOP_")}
    env |= {
        "UV_PROJECT": str(ROOT),
        "UV_FROZEN": "1",
        "UV_NO_SYNC": "1",
        "THINKLOOP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/docs.db",
        "THINKLOOP_PORT": str(ports["8000"]),
    }
    process = subprocess.Popen(
        ["bash", "-c", script],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=800)  # a hang guard, not a timing check
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)  # a background server the session started
        process.wait()
    if os.environ.get("THINKLOOP_DOCS_ECHO"):  # a writer checking the outputs a page quotes
        print(output)
    assert process.returncode == 0, (
        f"{page}: an example failed (exit {process.returncode}):\n{output[-6000:]}"
    )
