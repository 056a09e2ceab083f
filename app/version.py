"""Which thinkloop this is: the installed version and the revision it was built or checked out from."""

from __future__ import annotations

import os
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


# Set at build time where there is no checkout (the Dockerfile's GIT_REVISION build argument).
BUILD_REVISION_ENV = "THINKLOOP_GIT_REVISION"


@cache
def git_revision() -> str | None:
    """The revision this code came from: the build's (``THINKLOOP_GIT_REVISION``, e.g. a Docker
    image's, which has no .git), else the checkout's commit (12 hex digits) with ``+dirty`` when
    tracked files differ from it; None when neither is known."""
    built = os.environ.get(BUILD_REVISION_ENV, "").strip()
    return built or checkout_revision(ROOT)


def checkout_revision(root: Path) -> str | None:
    """``root``'s HEAD as 12 hex digits, ``+dirty`` when a tracked file is modified; None outside a
    checkout or without git. (Read-only: ``git describe --dirty`` and a plain ``git status``
    refresh the index, which another git command may hold; untracked files are not the code.)"""
    if not (root / ".git").exists():
        return None
    head = _git(root, "rev-parse", "--short=12", "HEAD")
    if not head:
        return None
    changes = _git(root, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no")
    return f"{head}+dirty" if changes else head


def _git(root: Path, *args: str) -> str | None:
    """The stripped output of ``git args`` in ``root``; None when it fails."""
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=5, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def describe() -> str:
    """``thinkloop 0.1.0 (git 0123456789ab)``, as `thinkloop --version` prints it."""
    revision = git_revision()
    return f"thinkloop {version()}" + (f" (git {revision})" if revision else "")
