"""The browser the viewer's tests drive: Chromium, or a skip (a failure where CI requires it)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def chromium_path() -> str:
    """Debian's chromium (THINKLOOP_CHROMIUM overrides). Where the browser is required (CI sets
    THINKLOOP_REQUIRE_BROWSER=1, after installing it) a missing one fails the tests; on a machine
    without it, the README's test command reports them skipped, naming the package to install."""
    found = (
        os.environ.get("THINKLOOP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    if not found or not Path(found).is_file():
        message = "Chromium is not installed: `apt-get install -y chromium` (.ci/run installs it)"
        if os.environ.get("THINKLOOP_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


# A bound for conditions on a busy 2-core machine, never a timing assertion.
WAIT_MS = int(os.environ.get("VIEWER_WAIT_MS", "90000"))
