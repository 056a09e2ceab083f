"""What every CLI command shares: the error exit, the model registry, and a migrated database for
one unit of work.

Only Typer and Rich are imported when the CLI loads: `thinkloop --help` and every command pay for
what they use and no more (SQLAlchemy, LangChain, the OpenAI SDK and the batch stack load inside
the commands that need them; `tests/app/test_cli_imports.py` holds the line)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from agents.llm.models import ModelRegistry
    from app.settings import Settings

T = TypeVar("T")
err = Console(stderr=True)
MODELS_FILE_HELP = "TOML model registry (default: THINKLOOP_MODELS_FILE)"


def fail(message: str, code: int = 2) -> NoReturn:
    """Print an error to stderr (verbatim, unwrapped) and exit non-zero."""
    err.print(f"[red]error:[/red] {escape(message)}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


async def migrated(url: str) -> None:
    """Bring the database to head (one process at a time); when it cannot be reached, one line with
    where and why on stderr and exit 1, never a traceback."""
    from app.db import DatabaseUnreachable, migrate

    try:
        await migrate(url)
    except DatabaseUnreachable as exc:
        fail(str(exc), code=1)


async def with_database(
    settings: Settings, work: Callable[[async_sessionmaker[AsyncSession]], Awaitable[T]]
) -> T:
    """Migrate the configured database, hand ``work`` a session factory, and dispose of the engine."""
    from app.db import create_engine, session_factory

    await migrated(settings.database_url)
    engine = create_engine(settings.database_url)
    try:
        return await work(session_factory(engine))
    finally:
        await engine.dispose()


async def in_session(work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """``work`` in one transaction on the configured (migrated) database."""
    from app.db import short_session
    from app.settings import get_settings

    async def run(sessions: async_sessionmaker[AsyncSession]) -> T:
        async with short_session(sessions) as session:
            return await work(session)

    return await with_database(get_settings(), run)


def registry_from(
    settings: Settings, models_file: Path | None, required: tuple[str, ...] = ()
) -> ModelRegistry:
    """The model registry from the file and the environment, with every ``required`` name known;
    a clear exit when it is unusable."""
    from agents.llm.models import ModelConfigError, UnknownModelError
    from app.panels import load_registry

    try:
        registry = load_registry(settings, models_file)
        for name in required:
            registry.get(name)
    except (ModelConfigError, UnknownModelError) as exc:
        fail(str(exc))
    return registry
