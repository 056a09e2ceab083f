"""`thinkloop judges records list|show|pin|unpin|publish`: the validity records a project's runs may
cite, which one they cite, and the operator's choices over that."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from app.cli.support import fail, in_session

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from app.models import ValidityRecord

T = TypeVar("T")
DEFAULT_PROJECT = "default"  # app.models.DEFAULT_PROJECT, without loading the tables for --help
TARGET = "validity-record"  # app.validity.record_endpoints.TARGET: the audit log's target type
PROJECT_HELP = "The project's id or name (its runs cite the records listed)"

records_cli = typer.Typer(
    help="List and inspect validity records; choose the one a project's runs cite.", no_args_is_help=True
)
Project = Annotated[str, typer.Option(help=PROJECT_HELP)]
RecordId = Annotated[str, typer.Argument(help="The record's id (a warrant's record_id)")]


def _run(work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """``work`` in one transaction; an unknown project or record: one line, exit 1."""
    from app.projects.keys import ProjectError
    from app.validity.selection import RecordNotFound

    try:
        return asyncio.run(in_session(work))
    except (ProjectError, RecordNotFound) as exc:
        fail(str(exc), code=1)


async def _project_id(session: AsyncSession, project: str) -> str:
    from app.projects.keys import find_project

    return (await find_project(session, project)).id


def _bound(record: ValidityRecord) -> str:
    return "-" if record.false_accept_high is None else f"{record.false_accept_high:.1%}"


@records_cli.command("list")
def records_list(
    project: Project = DEFAULT_PROJECT,
    judge_model: Annotated[str | None, typer.Option(help="Only this judge model's")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per record")] = False,
) -> None:
    """Every validity record the project's runs may cite (its own and published ones), newest
    first, cited or not; ``cited`` marks the one its runs cite for each panel (``pinned``: by its pin)."""
    from app.validity import selection

    async def rows(session: AsyncSession) -> list[tuple[ValidityRecord, str]]:
        owner = await _project_id(session, project)
        found = await selection.citable_records(session, owner, judge_model=judge_model)
        pins = await selection.pins_of(session, owner)
        cited = {r.id for r in selection.choose(found, pins).values()}
        return [(r, _mark(r, cited, pins)) for r in found]

    listed = _run(rows)
    if as_json:
        for record, mark in listed:
            typer.echo(json.dumps(_public(record) | {"cited": mark}))
        return
    typer.echo("id\tpanel\tjudge\tset\tsplit\tflawed\tsound\tfalse accepts ≤\tmeasured\tpublished\tcited")
    for r, mark in listed:
        published = f"{r.published_at:%Y-%m-%d}" if r.published_at else "-"
        cells = [r.id, r.panel_id, r.judge_model, r.set_name, r.split, str(r.n_flawed), str(r.n_sound)]
        typer.echo("\t".join([*cells, _bound(r), f"{r.measured_at:%Y-%m-%d %H:%M}", published, mark or "-"]))


def _mark(record: ValidityRecord, cited: set[str], pins: dict[str, str]) -> str:
    """``cited``, ``cited (pinned)`` or empty."""
    if record.id not in cited:
        return ""
    return "cited (pinned)" if pins.get(record.panel_id) == record.id else "cited"


def _public(record: ValidityRecord) -> dict[str, Any]:
    from app.validity.panel_schemas import RecordPublic

    return RecordPublic.of(record).model_dump(mode="json")


@records_cli.command("show")
def records_show(record_id: RecordId, project: Project = DEFAULT_PROJECT) -> None:
    """One record the project's runs may cite, as JSON: its figures, its panel's identity, and
    whether the project's runs cite it (``cited``) and pinned it (``pinned``)."""
    from app.validity import selection

    async def show(session: AsyncSession) -> dict[str, Any]:
        owner = await _project_id(session, project)
        record = await selection.find_record(session, record_id, owner)
        cited, pinned = (await selection.cited_records(session, owner, [record.panel_id]))[record.panel_id]
        mine = cited.id == record.id
        return _public(record) | {"identity": record.identity, "cited": mine, "pinned": pinned and mine}

    typer.echo(json.dumps(_run(show), indent=2))


@records_cli.command("pin")
def records_pin(record_id: RecordId, project: Project = DEFAULT_PROJECT) -> None:
    """Make this record the one the project's accepted runs cite for its panel identity, over the
    default (the record of the most held-out flawed versions), until `unpin`. Audited."""
    from app import audit
    from app.validity import selection

    async def pin(session: AsyncSession) -> tuple[str, str]:
        owner = await _project_id(session, project)
        made = await selection.pin(session, owner, record_id)
        audit.record(session, None, "pinned", TARGET, record_id, owner, {"panel_id": made.panel_id})
        return made.panel_id, owner

    panel, owner = _run(pin)
    typer.echo(f"pinned validity record {record_id} of panel {panel}: project {owner}'s runs cite it")


@records_cli.command("unpin")
def records_unpin(record_id: RecordId, project: Project = DEFAULT_PROJECT) -> None:
    """Lift the project's pin of this record: its runs cite by the default rule again. Audited."""
    from app import audit
    from app.validity import selection

    async def unpin(session: AsyncSession) -> str:
        owner = await _project_id(session, project)
        lifted = await selection.unpin(session, owner, record_id)
        audit.record(session, None, "unpinned", TARGET, record_id, owner, {"panel_id": lifted.panel_id})
        return owner

    owner = _run(unpin)
    typer.echo(f"unpinned validity record {record_id}: project {owner}'s runs cite by the default rule")


@records_cli.command("publish")
def records_publish(
    record_id: RecordId,
    withdraw: Annotated[
        bool, typer.Option("--withdraw", help="Withdraw it: only its own project's runs cite it again")
    ] = False,
) -> None:
    """Publish a record for every project's runs to cite (the instance operator's choice); audited
    in the record's project's log."""
    from app import audit
    from app.validity import selection

    async def publish(session: AsyncSession) -> str:
        record = await selection.publish(session, record_id, not withdraw)
        action = "unpublished" if withdraw else "published"
        audit.record(
            session, None, action, TARGET, record_id, record.project_id, {"panel_id": record.panel_id}
        )
        return record.project_id

    owner = _run(publish)
    if withdraw:
        typer.echo(f"withdrew validity record {record_id}: only project {owner}'s runs cite it")
    else:
        typer.echo(f"published validity record {record_id} (of project {owner}) for every project's runs")
