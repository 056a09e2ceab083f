"""The CLI starts fast because it loads little: checked by what a fresh interpreter has imported,
never by a stopwatch (`bench/cold_start.py` prints the times)."""

from __future__ import annotations

import json
import subprocess
import sys
import typing

import pytest

from tests.helpers.paths import ROOT

HEAVY: tuple[str, ...] = (
    "langchain_openai",
    "langchain_core",
    "openai",
    "sqlalchemy",
    "sqlmodel",
    "taskiq",
    "langgraph",
)
HEAVY += ("app.batches", "app.db", "numpy", "pyarrow", "matplotlib")


def loaded_after(code: str) -> set[str]:
    """The heavy top-level packages (and app modules) a fresh interpreter holds after ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    modules = json.loads(done.stdout.splitlines()[-1])
    return {name for name in HEAVY if any(m == name or m.startswith(name + ".") for m in modules)}


@pytest.mark.parametrize(
    "code",
    [
        "import app.cli",
        "from app.cli import cli\ntry:\n    cli(['--help'])\nexcept SystemExit:\n    pass",
        "from app.cli import cli\ntry:\n    cli(['batch', '--help'])\nexcept SystemExit:\n    pass",
        "from app.cli import cli\ntry:\n    cli(['models'])\nexcept SystemExit:\n    pass",
    ],
    ids=["import", "help", "batch-help", "models"],
)
def test_the_cli_loads_no_client_database_or_batch_stack(code: str) -> None:
    assert loaded_after(code) == set()


def test_the_cli_knows_the_names_it_repeats_to_stay_light() -> None:
    from app.batches.endpoints import FigureName
    from app.cli import batch, keys, refine
    from app.models import DEFAULT_PROJECT
    from app.problems import example_names
    from app.reporting.figures import FIGURES
    from app.reporting.formats import REPORT_FORMATS
    from app.reporting.item_export import ITEM_FORMATS

    assert keys.DEFAULT_PROJECT == DEFAULT_PROJECT and refine.example_names() == example_names()
    assert batch.REPORT_FORMATS == REPORT_FORMATS and batch.ITEM_FORMATS == ITEM_FORMATS
    assert batch.FIGURES == tuple(FIGURES) == typing.get_args(FigureName)


def test_version_names_the_release_and_revision() -> None:
    from typer.testing import CliRunner

    from app.cli import cli

    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("thinkloop ")


def test_the_offline_main_job_loads_no_model_client_or_redis() -> None:
    """`thinkloop refine --example orchestra` on the offline panel needs LangGraph, not the OpenAI
    client stack or redis-py (a second of every start between them)."""
    code = (
        "from app.cli import cli\nimport contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        cli(['refine', '--example', 'orchestra'])\n    except SystemExit:\n        pass"
    )
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    modules = json.loads(done.stdout.splitlines()[-1])
    assert "graphs.refinement" in modules  # it did run the loop
    assert not {m for m in modules if m.split(".")[0] in {"openai", "langchain_openai", "redis"}}


# What only a server needs: the web framework, its server and SSE, the migration tool, the
# provider-limit windows. LangGraph (and langsmith, which langchain-core imports) loads with the loop.
SERVER_ONLY = ("fastapi", "starlette", "uvicorn", "sse_starlette", "alembic", "limits")
WITH_THE_LOOP = ("langgraph", "langchain_core", "langsmith")


def modules_after(code: str) -> set[str]:
    """The top-level packages a fresh interpreter holds after ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return {name.split(".")[0] for name in json.loads(done.stdout.splitlines()[-1])}


# What only some stores or some commands need: PostgreSQL's driver (a listener), NumPy and SciPy (figures),
# httpx (a webhook sender's client), redis-py (a broker).
NOT_FOR_A_TEMPORARY_STORE = ("psycopg", "numpy", "scipy", "statsmodels", "httpx", "redis")


@pytest.mark.parametrize("module", ["app.cli", "app.runs.temporary", "app.runs.executor"])
def test_importing_the_cli_or_its_store_loads_no_server_and_no_langsmith(module: str) -> None:
    loaded = modules_after(f"import {module}")
    assert loaded & {*SERVER_ONLY, *WITH_THE_LOOP, *NOT_FOR_A_TEMPORARY_STORE} == set()


def test_the_offline_main_job_runs_without_the_server_stack() -> None:
    """`thinkloop refine --example orchestra` migrates no database (it copies a template migrated
    once per machine) and starts no server: no FastAPI, no uvicorn, no Alembic, no limits."""
    code = (
        "from app.cli import cli\nimport contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        cli(['refine', '--example', 'orchestra'])\n    except SystemExit:\n        pass"
    )
    loaded = modules_after(code)
    assert "langgraph" in loaded  # it did run the loop
    assert loaded & {*SERVER_ONLY, "psycopg", "numpy", "scipy", "statsmodels"} == set()
