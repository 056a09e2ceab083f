"""One executor, composed: a temporary store and the service run the same class with different
recorders (and no leases for the store nobody else reaches); nothing subclasses it, and nothing
outside it writes its state or imports its private names."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from agents.llm.models import ModelRegistry
from agents.panel import PanelFactory
from app.db import create_engine, session_factory
from app.runs.executor import RunExecutor, open_executor
from app.runs.recorder import DeferredRecorder, DurableRecorder
from app.runs.temporary import temporary_runs
from app.settings import Settings
from tests.helpers import driving

APP = Path(__file__).parents[2] / "app"
EXECUTOR = Path(inspect.getfile(RunExecutor)).resolve()
EXECUTOR_MODULE = RunExecutor.__module__


def trees() -> list[tuple[Path, ast.Module]]:
    """Every module of app/ but the executor's own, parsed."""
    paths = sorted(p for p in APP.rglob("*.py") if p.resolve() != EXECUTOR)
    return [(path, ast.parse(path.read_text(), str(path))) for path in paths]


def test_no_class_in_app_subclasses_the_executor() -> None:
    subclasses = [
        f"{path.relative_to(APP.parent)}: {node.name}"
        for path, tree in trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).split(".")[-1] == RunExecutor.__name__ for base in node.bases)
    ]
    assert subclasses == []


def test_nothing_outside_the_executor_imports_its_private_names_or_writes_its_maps() -> None:
    found = []
    for path, tree in trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == EXECUTOR_MODULE:
                found += [f"{path.name} imports {a.name}" for a in node.names if a.name.startswith("_")]
            elif isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    # ``executor.<map>[run_id] = ...``: per-run state written from outside
                    if isinstance(target, ast.Subscript) and "executor." in ast.unparse(target.value):
                        found.append(f"{path.name} writes {ast.unparse(target)}")
    assert found == []


async def test_a_temporary_store_and_the_service_compose_one_executor_class(database_url: str) -> None:
    async with temporary_runs(driving.settings()) as store:
        temporary = store.executor
        assert type(temporary) is RunExecutor
        assert isinstance(temporary.recorder, DeferredRecorder) and temporary.leases is None
    engine = create_engine(database_url)
    settings = Settings(_env_file=None, database_url=database_url)
    try:
        factory = PanelFactory(ModelRegistry({}), {})
        async with open_executor(settings, session_factory(engine), factory) as service:
            assert type(service) is RunExecutor
            assert isinstance(service.recorder, DurableRecorder) and service.leases is not None
            assert service.recorder.leases is service.leases and service.recorder.notifier is service.notifier
    finally:
        await engine.dispose()
