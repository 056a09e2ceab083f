"""`thinkloop serve`, `thinkloop migrate` and `thinkloop purge`."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.support import MODELS_FILE_HELP

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker


def migrate_command() -> None:
    """Bring the database (THINKLOOP_DATABASE_URL) to the newest schema."""
    from app.cli.support import migrated
    from app.settings import get_settings

    asyncio.run(migrated(get_settings().database_url))
    typer.echo("database at head")


def serve(
    host: Annotated[str | None, typer.Option(help="Address to bind (default: settings)")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535)] = None,
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
) -> None:
    """Migrate the database, then serve the HTTP API and the viewer with uvicorn; once it listens,
    print where."""
    from app.cli.support import migrated
    from app.cli.view import app_settings, local_url, serve_announcing

    settings = app_settings(models_file)
    asyncio.run(migrated(settings.database_url))
    bound, chosen = host or settings.host, port or settings.port
    url = local_url(bound, chosen)
    serve_announcing(
        settings, bound, chosen, [f"thinkloop API at {url}: the viewer at /, docs at /docs; stop with Ctrl+C"]
    )


def purge_command(
    older_than_days: Annotated[
        float | None, typer.Option(min=0.0, help="Delete ended runs older than this (default: the setting)")
    ] = None,
) -> None:
    """Delete every ended run submitted over the API that is older than N days, with every trace of it
    (rows, transcript, deliveries, checkpoints); batches are kept until deleted."""
    from app.checkpoints import open_checkpointer
    from app.cli.support import fail, with_database
    from app.runs.service import purge
    from app.settings import get_settings

    settings = get_settings()
    days = older_than_days if older_than_days is not None else settings.retention_days
    if days is None:
        fail("give --older-than-days, or set THINKLOOP_RETENTION_DAYS")

    async def work(sessions: async_sessionmaker[AsyncSession]) -> int:
        async with open_checkpointer(settings.database_url, 2) as saver:

            async def forget(run_ids: list[str]) -> None:
                for run_id in run_ids:
                    await saver.adelete_thread(run_id)

            return await purge(sessions, forget, timedelta(days=days))

    typer.echo(f"deleted {asyncio.run(with_database(settings, work))} run(s)")
