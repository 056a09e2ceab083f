"""An edited install never inherits a record (issue 49, defect 5): a record saved by this install is
cited by a byte-identical copy of it, and no longer by a copy whose solver comparison
(agents/answers.py) was changed, since that code decides solver refusals and so acceptances."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agents
from agents.llm.models import ModelRegistry, ModelSpec
from app.db import create_engine, session_factory, short_session
from app.validity.records import identity_of, new_record
from graphs.scoring import get_policy
from tests.helpers.validity import report

ROOT = Path(agents.__file__).parent.parent
PACKAGES = ("agents", "graphs", "app", "prompts")
REGISTRY = ModelRegistry({"judge": ModelSpec(name="judge", model="qwen", base_url="http://127.0.0.1:9/v1")})
# Run by the install under test: the warrant its panel (judge, its endpoint reporting "qwen") cites.
CITE = """
import asyncio, json, sys
import agents
from agents.llm.models import ModelRegistry, ModelSpec
from app.db import create_engine, session_factory, short_session
from app.models import DEFAULT_PROJECT
from app.validity.records import run_warrants
from graphs.scoring import get_policy

REGISTRY = ModelRegistry({"judge": ModelSpec(name="judge", model="qwen", base_url="http://127.0.0.1:9/v1")})

async def main(url):
    engine = create_engine(url)
    async with short_session(session_factory(engine)) as session:
        warrants = await run_warrants(
            session, REGISTRY, "judge", get_policy("default"), DEFAULT_PROJECT, None
        )
    await engine.dispose()
    panel = warrants.identity("qwen")
    print(json.dumps({"from": agents.__file__, "panel": panel.id, "warrant": warrants.warrant("qwen")}))

asyncio.run(main(sys.argv[1]))
"""


def install(tmp_path: Path, name: str) -> Path:
    """A copy of thinkloop's packages under ``tmp_path / name`` (an install to edit)."""
    target = tmp_path / name
    for package in PACKAGES:
        shutil.copytree(ROOT / package, target / package, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def cited_by(copy: Path, url: str) -> dict[str, Any]:
    """What the install at ``copy`` cites from the database at ``url``, run in its own interpreter."""
    env = os.environ | {"PYTHONPATH": str(copy)}
    done = subprocess.run(
        [sys.executable, "-c", CITE, url], cwd=copy, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(found["from"]).is_relative_to(copy)  # the copy ran, not this tree
    return found


@pytest.fixture
async def database(tmp_path: Path, sqlite_template: Path) -> str:
    """A database holding one record of this install's panel (judge, reporting "qwen")."""
    path = tmp_path / "thinkloop.db"
    shutil.copyfile(sqlite_template, path)
    url = f"sqlite+aiosqlite:///{path}"
    identity = identity_of(REGISTRY, "judge", get_policy("default")).reporting("qwen")
    engine = create_engine(url)
    try:
        async with short_session(session_factory(engine)) as session:
            session.add(new_record(identity, report((2, 120)), "district", "ab" * 32))
    finally:
        await engine.dispose()
    return url


async def test_an_edit_of_the_solver_comparison_is_a_new_unmeasured_panel(
    tmp_path: Path, database: str
) -> None:
    measured = identity_of(REGISTRY, "judge", get_policy("default")).reporting("qwen").id
    same = cited_by(install(tmp_path, "same"), database)
    assert same["panel"] == measured and same["warrant"]["status"] == "valid"  # the copy is this install
    edited = install(tmp_path, "edited")
    answers = edited / "agents" / "answers.py"
    source = answers.read_text(encoding="utf-8")
    # any edit counts: the hash cannot tell an edit that changes no acceptance from one that does
    edited_source = source.replace("_PERCENT_UNITS = {", '_PERCENT_UNITS = {"pc", ', 1)
    answers.write_text(edited_source, encoding="utf-8")
    assert answers.read_text(encoding="utf-8") != source
    changed = cited_by(edited, database)
    assert changed["panel"] != measured and changed["warrant"] == {"status": "none"}
