"""`thinkloop view`: the API and its browser viewer on this machine's settings, with the address to open
and (by default) a read-only key to sign in with."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli.support import MODELS_FILE_HELP

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from app.settings import Settings

KEY_DAYS = 1.0  # a key made for one viewing session stops working after a day


def view(
    host: Annotated[str | None, typer.Option(help="Address to bind (default: settings)")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535)] = None,
    key: Annotated[
        bool, typer.Option("--key/--no-key", help="Make a read-only key for this session and print it")
    ] = True,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the viewer in the default browser")
    ] = False,
    models_file: Annotated[Path | None, typer.Option(help=MODELS_FILE_HELP)] = None,
) -> None:
    """Serve the API and the viewer (as `thinkloop serve` does) and print the viewer's address.
    Looking never changes data: unlike `serve`, it does not take up other batches' unfinished items."""
    import asyncio

    from app.cli.support import migrated

    settings = app_settings(models_file, resume_batches=False)
    asyncio.run(migrated(settings.database_url))
    bound, chosen = host or settings.host, port or settings.port
    url = local_url(bound, chosen)
    lines = [f"thinkloop viewer: {url}"]
    if key:
        secret = asyncio.run(_viewer_key())
        lines.append(f"sign in with this read-only key (expires in {KEY_DAYS:g} day; shown once): {secret}")
    lines.append("the API's documentation is at /docs; stop with Ctrl+C")
    serve_announcing(settings, bound, chosen, lines, url if open_browser else None)


def app_settings(models_file: Path | None, **overrides: Any) -> Settings:
    """This machine's settings, with a models file given on the command line and ``overrides``."""
    from app.settings import get_settings

    settings = get_settings()
    if models_file is not None:
        overrides["models_file"] = models_file
    return settings.model_copy(update=overrides) if overrides else settings


def local_url(host: str, port: int) -> str:
    """The address to open for a server bound to ``host``: loopback for a wildcard bind."""
    where = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://{where if ':' not in where else f'[{where}]'}:{port}/"


async def _viewer_key() -> str:
    """A read-only key of the default project that expires, recorded in the audit log as others are."""
    from datetime import timedelta

    from app import audit
    from app.cli.support import in_session
    from app.models import DEFAULT_PROJECT, utcnow
    from app.projects.keys import create_key

    async def make(session: AsyncSession) -> str:
        expires = utcnow() + timedelta(days=KEY_DAYS)
        made = await create_key(session, "viewer (thinkloop view)", ["read"], DEFAULT_PROJECT, expires)
        audit.record(session, None, "created", "key", made.id, DEFAULT_PROJECT, {"scopes": made.scopes})
        return made.secret

    return await in_session(make)


def serve_announcing(
    settings: Settings, host: str, port: int, lines: list[str], browse: str | None = None
) -> None:
    """uvicorn on the app; ``lines`` are printed once it listens (not before: the address must answer)."""
    import uvicorn

    from app.limits_http import MAX_HEAD_BYTES, guarded_protocol
    from app.main import create_app

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                for line in lines:
                    typer.echo(line)
                if browse:
                    import webbrowser

                    webbrowser.open(browse)

    # log_config=None: uvicorn's own records go through our handler (JSON lines with
    # THINKLOOP_LOG_JSON), not the plain-text handlers its default configuration installs.
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        log_config=None,
        # slow clients: header and body read deadlines, an idle timeout and a connection cap
        http=guarded_protocol(settings.http_header_timeout_s, settings.http_body_timeout_s),
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,  # the protocol holds whole heads to it too
        timeout_keep_alive=max(1, round(settings.http_keep_alive_s)),
        limit_concurrency=settings.http_max_connections or None,
        backlog=settings.http_backlog,
    )
    Announcing(config).run()
