"""The benchmarks import the project as installed: no bench/ script edits sys.path or imports from
tests/ (the real-model helper they share with the ``realmodel`` tier is ``agents.realmodel``), and a
script that uses that helper starts from any folder."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(BENCH.glob("*.py"))


def _imported(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_no_bench_script_edits_sys_path(script: Path) -> None:
    # Text, not the syntax tree: code a script runs in a subprocess (a string) counts too.
    assert "sys.path" not in script.read_text(encoding="utf-8"), f"{script.name} edits sys.path"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_no_bench_script_imports_from_tests(script: Path) -> None:
    from_tests = {name for name in _imported(script) if name == "tests" or name.startswith("tests.")}
    assert not from_tests, f"{script.name} imports {sorted(from_tests)}"


def test_a_script_using_the_real_model_helper_starts_from_another_folder(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "layout_validity.py"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout
