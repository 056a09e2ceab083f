"""The real-model tier's server as the tests read it, and ``thinkloop`` run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.realmodel import (
    GEMMA_FILE,
    MODEL_ID,
    NAME,
    TIER_MAX_TOKENS,
    get_json,
)


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
