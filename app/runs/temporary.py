"""Runs where nothing should persist, driven the service's way: its executor on a temporary store.

`thinkloop refine`, the judges' validity bench and the benchmarks run the refinement graph through
``RunExecutor``, the one driver of the graph: each run is a row held under a lease, its transcript
and its verdict rows are recorded as they happen, and it ends through the same code as an API run
or a batch item. Only the store differs: a SQLite file in a temporary folder, a copy of a template
migrated to head once per machine and kept between processes (``migrated_template``), deleted on
exit (no database to set up, nothing left behind). Its graph keeps no checkpoints: they serve only
resumption, and no later process can resume a run of a store that is gone. No other process reads
the store while a run runs, so a run is stored in two transactions: its row, created running under
this process's lease, and at its end everything it recorded with its end state (the caller follows
the run live through the events it observes). So a temporary store is the service's executor
composed with the deferred recorder and no leases (``RunExecutor.deferred``), not a subclass.

The caller builds each run's context (its panel, policy and warrants: ``app.panels.build_context``):
a temporary store holds no validity records, so the executor must not look warrants up in it.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine

from agents.llm.calls import CallFailure
from agents.llm.models import ModelRegistry
from agents.panel import PanelFactory
from agents.schemas import Problem
from app.db import RollingBackConnection, migrate, session_factory, short_session
from app.heap import freeze_startup_heap
from app.metrics import ServiceMetrics
from app.models import Run
from app.runs import repository as repo
from app.runs.executor import RunExecutor
from app.settings import Settings, get_settings
from graphs.context import RunContext
from graphs.result import EventSink, RunResult

DATABASE_NAME = "thinkloop.db"


def _pragmas(dbapi_connection: Any, _: Any) -> None:
    """Foreign keys as in every store; no waiting for the disk and the rollback journal in memory (a
    temporary store is deleted on exit whatever happens)."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=OFF")
    cursor.execute("PRAGMA journal_mode=MEMORY")
    cursor.close()


async def _nothing(_: AsyncSession, __: RunResult | None) -> None:
    """A run of a temporary store settles nothing of its caller's in its end transaction."""


class TemporaryRuns:
    """Runs on a temporary store, each executed in the calling task by the service's executor."""

    def __init__(self, executor: RunExecutor, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.executor, self.sessions = executor, sessions

    async def run(
        self,
        problem: Problem,
        context: RunContext,
        *,
        model: str,
        judge_model: str,
        arm: str = "loop",
        on_event: EventSink | None = None,
    ) -> RunResult:
        """Execute one run of ``problem`` on ``context`` to its end, its typed events to
        ``on_event`` as they happen; ``arm`` "control": the zero-shot control arm. The run's row
        names the models and the policy its context was built on (as an API run's does).

        The run is created running, held by this process, and no other process can reach the store,
        so its lease needs no renewal. An exception ends the run in ``error`` and propagates.
        """
        executor = self.executor
        async with short_session(self.sessions) as session:
            row = await repo.get_or_create_problem(session, problem.question, problem.solution)
            run = Run(
                problem_id=row.id,
                status="running",
                model=model,
                judge_model=judge_model,
                policy=context.policy.name,
                max_rounds=context.policy.max_rounds,
                arm=arm,
                lease_owner=executor.worker,
                lease_until=executor.lease_deadline(),
            )
            session.add(run)
        created = run, Problem(question=row.question, solution=row.solution)
        try:
            result = await executor.execute_here(run.id, context=context, created=created, observe=on_event)
        except Exception as exc:
            reason = f"internal error: {type(exc).__name__}: {exc}"[:500]
            failure = CallFailure.internal(model, exc).model_dump()
            await executor.fail_here(run.id, "error", reason, failure, _nothing)
            raise
        assert result is not None, "a run created here cannot have ended elsewhere"
        return result


_template: Path | None = None
_template_lock = threading.Lock()


@cache
def template_name() -> str:
    """``store-<sha256[:16]>.db``: the hash of every migration's source and of the versions of
    Alembic and SQLAlchemy that run them, so a template is never one that other migrations made."""
    digest = hashlib.sha256()
    for package in ("alembic", "sqlalchemy"):
        digest.update(f"{package}={metadata.version(package)}\0".encode())
    root = resources.files("migrations")
    for folder in (root, root.joinpath("versions")):
        for name in sorted(p.name for p in folder.iterdir() if p.name.endswith((".py", ".mako"))):
            digest.update(name.encode() + b"\0" + folder.joinpath(name).read_bytes() + b"\0")
    return f"store-{digest.hexdigest()[:16]}.db"


def template_folder() -> Path | None:
    """Where migrated templates are kept between processes (``$XDG_CACHE_HOME/thinkloop``, else
    ``~/.cache/thinkloop``); None when it cannot be made (a read-only home)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    folder = Path(base) / "thinkloop"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def _migrate_into(path: Path) -> None:
    """Migrate a new SQLite file at ``path`` to head, all of it in the file (its WAL emptied)."""
    asyncio.run(migrate(f"sqlite+aiosqlite:///{path}"))
    connection = sqlite3.connect(path)
    try:  # everything in the one file that is copied, nothing left behind in its WAL
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()


def _kept_template(folder: Path) -> Path:
    """The template kept in ``folder``, migrated there first when it is not yet: into a file of
    this process's own, then renamed into place, so a process never copies a half-made one."""
    path = folder / template_name()
    if path.exists():
        return path
    scratch = Path(tempfile.mkdtemp(prefix=".thinkloop-template-", dir=folder))
    try:
        _migrate_into(scratch / DATABASE_NAME)
        os.replace(scratch / DATABASE_NAME, path)  # atomic: another process may have won the race
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return path


def migrated_template() -> Path:
    """A store migrated to head, which every temporary store starts as a copy of: migrating costs
    about 0.4 CPU s (and loads Alembic), copying the file a millisecond. It is kept between
    processes in ``template_folder()``, named by what made it (``template_name``), so only a
    machine's first `thinkloop refine` after an install or an upgrade migrates; where no folder can
    be kept, once per process, deleted at exit. Blocking, in a thread with no event loop running
    (``temporary_runs`` calls it through ``asyncio.to_thread``): a migration runs with an event
    loop of its own. Made anew if something deleted it (a cache or /tmp cleaned)."""
    global _template
    with _template_lock:
        if _template is None or not _template.exists():
            folder = template_folder()
            if folder is not None:
                _template = _kept_template(folder)
            else:
                scratch = Path(tempfile.mkdtemp(prefix="thinkloop-template-"))
                atexit.register(shutil.rmtree, scratch, True)
                _migrate_into(scratch / DATABASE_NAME)
                _template = scratch / DATABASE_NAME
        return _template


@asynccontextmanager
async def temporary_runs(
    settings: Settings | None = None, factory: PanelFactory | None = None
) -> AsyncIterator[TemporaryRuns]:
    """A temporary store and an executor on it, both gone on exit. The store is a copy of this
    process's ``migrated_template`` (made by the first store opened). ``factory`` is only the
    executor's registry: every run brings its own context.
    """
    base = settings or get_settings()
    template = await asyncio.to_thread(migrated_template)
    with tempfile.TemporaryDirectory(prefix="thinkloop-") as folder:
        path = Path(folder) / DATABASE_NAME
        url = f"sqlite+aiosqlite:///{path}"
        shutil.copyfile(template, path)
        # One connection, so one writer thread: runs queue for it in the event loop instead of
        # contending for SQLite's lock (the busy handler sleeps) and the GIL.
        # Its connection rolls back before it closes, as every SQLite store's does (``app.db``).
        engine = create_async_engine(
            url, pool_size=1, max_overflow=0, connect_args={"factory": RollingBackConnection}
        )
        event.listen(engine.sync_engine, "connect", _pragmas)
        try:
            sessions = session_factory(engine)
            from graphs.refinement import build_refinement_graph

            graph = build_refinement_graph(None)  # no checkpoints: nothing can resume these runs
            executor = RunExecutor.deferred(
                sessions,
                graph,
                factory or PanelFactory(ModelRegistry({}), {}),
                base.model_copy(update={"database_url": url}),
                ServiceMetrics(),
            )
            freeze_startup_heap()
            yield TemporaryRuns(executor, sessions)
        finally:
            await engine.dispose()
