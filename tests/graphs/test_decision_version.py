"""The decision code's version: a panel's identity holds ``graphs.decision.decision_version()``, a
hash of the installed source of the graphs modules that turn verdicts into a decision, so a record
measured under one decision logic warrants nothing under another, with no number to remember to bump
(it replaced the hand-bumped ``decide@1``)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

import graphs
from agents.identity import source_hash
from graphs.decision import DECISION_MODULES, decision_version


def test_the_decision_version_is_a_hash_of_the_decision_modules() -> None:
    version = decision_version()
    assert version == source_hash("graphs", DECISION_MODULES, "decide")
    assert version.startswith("decide@") and len(version) == len("decide@") + 12
    assert {"scoring", "refinement"} <= set(DECISION_MODULES)


@pytest.mark.parametrize("module", DECISION_MODULES)
def test_any_edit_of_a_decision_module_is_another_version(
    module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"graphs_copy_{uuid.uuid4().hex[:8]}"  # a copy of the package as another install of it
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(Path(graphs.__file__).parent, tmp_path / name, ignore=ignore)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = source_hash(name, DECISION_MODULES, "decide")
    assert before == decision_version()  # the same bytes, the same version
    source = tmp_path / name / f"{module}.py"
    source.write_text(source.read_text(encoding="utf-8") + "\n# a comment is an edit too\n", encoding="utf-8")
    source_hash.cache_clear()
    assert source_hash(name, DECISION_MODULES, "decide") != before


def test_a_module_renamed_away_is_never_silently_unhashed() -> None:
    with pytest.raises(FileNotFoundError):
        source_hash("graphs", (*DECISION_MODULES, "no_such_module"), "decide")
