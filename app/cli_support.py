"""What every CLI command shares: the error exit and a migrated database for one unit of work."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import create_engine, migrate, session_factory
from app.settings import Settings

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
