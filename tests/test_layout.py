"""The suite's layout: what one test needs from another lives in ``tests/helpers/`` (functions,
constants, classes) or in a ``conftest.py`` (fixtures), so no module of the suite imports a test
module, a conftest, or a module beside the tests (read with ``ast``, nothing imported)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent
HELPERS = "tests.helpers"


def imported(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of the suite's own modules in ``path`` (in the suite at
    ``root``): ``tests`` or ``tests.*`` absolutely, and any relative import (resolved against the
    file's package)."""
    package = ".".join(path.relative_to(root.parent).with_suffix("").parts[:-1])
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _ours(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                module = ".".join(
                    parts[: len(parts) - node.level + 1] + ([node.module] if node.module else [])
                )
            else:
                module = node.module or ""
            if _ours(module):
                # `from tests import driving` (or `from . import driving`) imports the module tests.driving
                whole = module == "tests" or (node.level and not node.module)
                names = [f"{module}.{alias.name}" for alias in node.names] if whole else [module]
                found += [(node.lineno, name) for name in names]
    return found


def _ours(module: str) -> bool:
    return module == "tests" or module.startswith("tests.")


def _helper(module: str) -> bool:
    return module == HELPERS or module.startswith(f"{HELPERS}.")


def wrong_imports(root: Path) -> list[str]:
    """``file:line imports module`` for every import, in the suite under ``root``, of one of the
    suite's modules that is not a helper."""
    wrong = []
    for path in sorted(root.rglob("*.py")):
        for line, module in imported(path, root):
            if not _helper(module):
                wrong.append(f"{path.relative_to(root.parent)}:{line} imports {module}")
    return wrong


def test_no_module_of_the_suite_imports_a_test_module_or_a_conftest() -> None:
    assert wrong_imports(TESTS) == [], "move what is shared to tests/helpers/ (fixtures: a conftest.py)"


def test_the_check_sees_an_import_of_a_test_module(tmp_path: Path) -> None:
    suite = tmp_path / "tests"
    (suite / "app").mkdir(parents=True)
    (suite / "app" / "test_a.py").write_text("from tests.app.test_b import helper\nfrom . import test_c\n")
    (suite / "app" / "test_d.py").write_text("from tests.app.conftest import PROBLEM\nimport tests.app.x\n")
    (suite / "test_e.py").write_text("from tests import driving\nfrom tests.helpers.service import Keys\n")
    assert wrong_imports(suite) == [
        "tests/app/test_a.py:1 imports tests.app.test_b",
        "tests/app/test_a.py:2 imports tests.app.test_c",
        "tests/app/test_d.py:1 imports tests.app.conftest",
        "tests/app/test_d.py:2 imports tests.app.x",
        "tests/test_e.py:1 imports tests.driving",
    ]
