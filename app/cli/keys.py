"""`thinkloop projects create|list` and `thinkloop keys create|list|revoke`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.support import fail, in_session

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from app.models import ApiKey, Project
    from app.projects.keys import NewKey

DEFAULT_PROJECT = "default"  # app.models.DEFAULT_PROJECT, without loading the tables for --help

keys_cli = typer.Typer(help="Create, list and revoke API keys.", no_args_is_help=True)
projects_cli = typer.Typer(help="Create and list projects (tenants).", no_args_is_help=True)


@projects_cli.command("create")
def projects_create(
    name: Annotated[str, typer.Argument(help="A unique name")],
    daily_tokens: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=10**15,
            help="Tokens its runs may spend per UTC day (default: THINKLOOP_PROJECT_DAILY_TOKENS)",
        ),
    ] = None,
    daily_cost_usd: Annotated[
        float | None,
        typer.Option(
            min=0, help="USD its runs may spend per UTC day (default: THINKLOOP_PROJECT_DAILY_COST_USD)"
        ),
    ] = None,
) -> None:
    """Create a project; its keys will see its runs, datasets and batches only."""
    from app import audit
    from app.projects.keys import ProjectError, create_project

    async def make(session: AsyncSession) -> Project:
        project = await create_project(session, name, daily_tokens, daily_cost_usd)
        caps = {"daily_tokens": daily_tokens, "daily_cost_usd": daily_cost_usd}
        detail = {"name": project.name} | {k: v for k, v in caps.items() if v is not None}
        audit.record(session, None, "created", "project", project.id, project.id, detail)
        return project

    try:
        project = asyncio.run(in_session(make))
    except ProjectError as exc:
        fail(str(exc))
    typer.echo(f"{project.id}\t{project.name}")


@projects_cli.command("list")
def projects_list() -> None:
    """Every project: id and name."""
    from app.projects.keys import list_projects

    rows: Sequence[Project] = asyncio.run(in_session(list_projects))
    for project in rows:
        typer.echo(f"{project.id}\t{project.name}")


@keys_cli.command("create")
def keys_create(
    name: Annotated[str, typer.Option(help="Who or what uses the key")],
    scope: Annotated[
        list[str] | None,
        typer.Option(
            help="read, write, validate (save and pin the project's validity records) and/or admin "
            "(the project's own keys and settings); repeat it (default read and write)"
        ),
    ] = None,
    operator: Annotated[
        bool,
        typer.Option(
            "--operator",
            help="The instance's operator key: makes projects, sets their caps, manages every "
            "project's keys (alone: no read or write of runs)",
        ),
    ] = False,
    project: Annotated[str, typer.Option(help="The project's id or name")] = DEFAULT_PROJECT,
    expires_in_days: Annotated[
        float | None, typer.Option(min=0.001, help="It stops working after this many days (default never)")
    ] = None,
) -> None:
    """Create an API key of a project and print it once; only its hash is stored."""
    from app import audit
    from app.models import utcnow
    from app.projects.keys import create_key, find_project

    scopes = [*(scope or []), "operator"] if operator else (scope or ["read", "write"])
    expires = utcnow() + timedelta(days=expires_in_days) if expires_in_days else None

    async def make(session: AsyncSession) -> NewKey:
        owner = await find_project(session, project)
        made = await create_key(session, name, scopes, owner.id, expires)
        audit.record(session, None, "created", "key", made.id, owner.id, {"scopes": made.scopes})
        return made

    try:
        key = asyncio.run(in_session(make))
    except ValueError as exc:
        fail(str(exc))
    until = f"  expires {key.expires_at:%Y-%m-%d %H:%M} UTC" if key.expires_at else ""
    typer.echo(f"id {key.id}  project {key.project_id}  scopes {','.join(key.scopes)}{until}")
    typer.echo(key.secret)


@keys_cli.command("list")
def keys_list(
    project: Annotated[str | None, typer.Option(help="Only this project's (id or name)")] = None,
) -> None:
    """Keys with their project, scopes, expiry, last use and revocation; never a secret."""
    from app.projects.keys import ProjectError, find_project, list_keys

    async def read(session: AsyncSession) -> Sequence[ApiKey]:
        owner = await find_project(session, project) if project else None
        return await list_keys(session, owner.id if owner else None)

    try:
        rows = asyncio.run(in_session(read))
    except ProjectError as exc:
        fail(str(exc))
    typer.echo("id\tprefix\tproject\tname\tscopes\texpires\tlast used\trevoked")
    for key in rows:
        cells = (key.expires_at, key.last_used_at, key.revoked_at)
        when = [f"{t:%Y-%m-%d %H:%M}" if t else "-" for t in cells]
        typer.echo("\t".join([key.id, key.prefix, key.project_id, key.name, ",".join(key.scopes), *when]))


@keys_cli.command("revoke")
def keys_revoke(key: Annotated[str, typer.Argument(help="The key's id or prefix")]) -> None:
    """Revoke an API key: it stops working at once."""
    from app import audit
    from app.projects.keys import revoke_key

    async def revoke(session: AsyncSession) -> ApiKey | None:
        row = await revoke_key(session, key)
        if row is not None:
            audit.record(session, None, "revoked", "key", row.id, row.project_id)
        return row

    row = asyncio.run(in_session(revoke))
    if row is None:
        fail(f"no API key {key!r}")
    typer.echo(f"revoked {row.id} ({row.name})")
