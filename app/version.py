"""Which thinkloop this is: the installed version and, in a git checkout, the revision."""

from __future__ import annotations

import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@cache
def version() -> str:
    """The installed package's version ("unknown" when it runs from an uninstalled tree)."""
    try:
        return metadata.version("thinkloop")
    except metadata.PackageNotFoundError:
        return "unknown"


@cache
def git_revision() -> str | None:
    """The checkout's commit (12 hex digits); None outside a checkout or without git. (Read-only:
    ``git describe --dirty`` would refresh the index, which another git command may hold.)"""
    if not (ROOT / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def describe() -> str:
    """``thinkloop 0.1.0 (git 0123456789ab)``, as `thinkloop --version` prints it."""
    revision = git_revision()
    return f"thinkloop {version()}" + (f" (git {revision})" if revision else "")
