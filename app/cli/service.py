"""`thinkloop serve` and `thinkloop migrate`."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from app.db import migrate
from app.settings import get_settings


def migrate_command() -> None:
    """Bring the database (THINKLOOP_DATABASE_URL) to the newest schema."""
    asyncio.run(migrate(get_settings().database_url))
    typer.echo("database at head")


def serve(
    host: Annotated[str | None, typer.Option(help="Address to bind (default: settings)")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535)] = None,
) -> None:
    """Migrate the database, then serve the HTTP API with uvicorn."""
    import uvicorn

    from app.main import create_app

    settings = get_settings()
    asyncio.run(migrate(settings.database_url))
    uvicorn.run(
        create_app(settings), host=host or settings.host, port=port or settings.port, log_level="warning"
    )
