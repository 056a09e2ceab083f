"""What every CLI command shares: the error exit, the model registry, and a migrated database for
one unit of work."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agents.models import ModelConfigError, ModelRegistry
from app.db import create_engine, migrate, session_factory, short_session
from app.panels import load_registry
from app.settings import Settings, get_settings

T = TypeVar("T")
err = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print an error to stderr (verbatim, unwrapped) and exit non-zero."""
    err.print(f"[red]error:[/red] {escape(message)}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


async def with_database(
    settings: Settings, work: Callable[[async_sessionmaker[AsyncSession]], Awaitable[T]]
) -> T:
    """Migrate the configured database, hand ``work`` a session factory, and dispose of the engine."""
    await migrate(settings.database_url)
    engine = create_engine(settings.database_url)
    try:
        return await work(session_factory(engine))
    finally:
        await engine.dispose()


async def in_session(work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """``work`` in one transaction on the configured (migrated) database."""

    async def run(sessions: async_sessionmaker[AsyncSession]) -> T:
        async with short_session(sessions) as session:
            return await work(session)

    return await with_database(get_settings(), run)


def registry_from(settings: Settings, models_file: Path | None) -> ModelRegistry:
    """The model registry from the file and the environment; a clear exit when it is unusable."""
    try:
        return load_registry(settings, models_file)
    except ModelConfigError as exc:
        fail(str(exc))
