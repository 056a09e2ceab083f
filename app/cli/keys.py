"""`thinkloop keys create|revoke`."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from app.cli.support import fail, in_session
from app.keys import create_key, revoke_key

keys_cli = typer.Typer(help="Create and revoke API keys.", no_args_is_help=True)


@keys_cli.command("create")
def keys_create(
    name: Annotated[str, typer.Option(help="Who or what uses the key")],
    scope: Annotated[
        list[str] | None, typer.Option(help="read and/or write; repeat it (default both)")
    ] = None,
) -> None:
    """Create an API key and print it once; only its hash is stored."""
    scopes = scope or ["read", "write"]
    try:
        key = asyncio.run(in_session(lambda session: create_key(session, name, scopes)))
    except ValueError as exc:
        fail(str(exc))
    typer.echo(f"id {key.id}  scopes {','.join(key.scopes)}")
    typer.echo(key.secret)


@keys_cli.command("revoke")
def keys_revoke(key: Annotated[str, typer.Argument(help="The key's id or prefix")]) -> None:
    """Revoke an API key: it stops working at once."""
    row = asyncio.run(in_session(lambda session: revoke_key(session, key)))
    if row is None:
        fail(f"no API key {key!r}")
    typer.echo(f"revoked {row.id} ({row.name})")
