"""Where things are, from the repository's root: a test module reads files through these, not through
its own depth (``Path(__file__).parents[N]``), so it can move between folders of the suite."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "app" / "samples"
APP_DATA = ROOT / "tests" / "app" / "data"  # stored reports and databases the app's tests read
FIXTURES = ROOT / "tests" / "fixtures"
