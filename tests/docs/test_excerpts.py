"""The command output the docs show is what the current code prints (scripts/docs_excerpts.py).

When one of these fails, the code's output changed: run `uv run python scripts/docs_excerpts.py`,
read the new excerpt, and commit it (and the README's copy of the main job's lines).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _excerpts() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_excerpts", ROOT / "scripts" / "docs_excerpts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


excerpts = _excerpts()


@pytest.fixture(scope="module")
def refine_now() -> str:
    return str(excerpts.refine_orchestra())


def test_the_main_jobs_excerpt_is_current(refine_now: str) -> None:
    assert not excerpts.differs(excerpts.EXCERPTS / "refine-orchestra.txt", refine_now), (
        "docs/excerpts/refine-orchestra.txt is stale: run uv run python scripts/docs_excerpts.py"
    )


def test_the_readme_quotes_the_main_jobs_current_lines(refine_now: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert refine_now in readme, "the README's excerpt of the main job differs from what it prints now"


def test_a_stale_excerpt_is_caught(refine_now: str, tmp_path: Path) -> None:
    """A committed copy one character away from the output (an old score) is reported stale."""
    shutil.copy(excerpts.EXCERPTS / "refine-orchestra.txt", tmp_path / "refine-orchestra.txt")
    assert not excerpts.differs(tmp_path / "refine-orchestra.txt", refine_now)
    old = refine_now.replace("Q = 0.984", "Q = 0.980")
    assert old != refine_now
    (tmp_path / "refine-orchestra.txt").write_text(old, encoding="utf-8")
    assert excerpts.differs(tmp_path / "refine-orchestra.txt", refine_now)


def test_check_mode_exits_1_naming_a_stale_excerpt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`scripts/docs_excerpts.py --check` fails CI's way: exit 1 and the file's name."""
    (tmp_path / "refine-orchestra.txt").write_text("pass rate 0.500 · an old run\n", encoding="utf-8")
    monkeypatch.setattr(excerpts, "EXCERPTS", tmp_path)
    monkeypatch.setattr(sys, "argv", ["docs_excerpts.py", "--check", "refine-orchestra.txt"])
    assert excerpts.main() == 1


@pytest.mark.slow  # the batch runs 48 items (about 40 s on 2 cores)
def test_the_batch_reports_excerpt_is_current() -> None:
    assert excerpts.stale(names=["batch-report.md"]) == [], (
        "docs/excerpts/batch-report.md is stale: run uv run python scripts/docs_excerpts.py batch-report.md"
    )
