"""The revision recorded in manifests and `thinkloop --version`: a modified checkout says so, and an
image without .git takes the revision its build was given."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import version


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository with one commit of one tracked file."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    _git(tmp_path, "add", "code.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "one")
    return tmp_path


@pytest.fixture
def fresh() -> Iterator[None]:
    version.git_revision.cache_clear()
    yield
    version.git_revision.cache_clear()


def test_a_clean_checkout_records_its_commit(checkout: Path) -> None:
    head = _git(checkout, "rev-parse", "--short=12", "HEAD")
    (checkout / "notes.txt").write_text("untracked files are not the code\n")
    assert version.checkout_revision(checkout) == head


def test_a_modified_checkout_is_marked_dirty(checkout: Path) -> None:
    head = _git(checkout, "rev-parse", "--short=12", "HEAD")
    (checkout / "code.py").write_text("x = 2\n")
    assert version.checkout_revision(checkout) == f"{head}+dirty"


def test_no_checkout_no_revision(tmp_path: Path) -> None:
    assert version.checkout_revision(tmp_path) is None


def test_a_build_time_revision_is_used_where_there_is_no_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    monkeypatch.setattr(version, "ROOT", tmp_path)  # as in the Docker image: no .git
    monkeypatch.delenv("THINKLOOP_GIT_REVISION", raising=False)
    assert version.git_revision() is None
    version.git_revision.cache_clear()
    monkeypatch.setenv("THINKLOOP_GIT_REVISION", "0123456789ab")
    assert version.git_revision() == "0123456789ab"
    assert version.describe().endswith("(git 0123456789ab)")
