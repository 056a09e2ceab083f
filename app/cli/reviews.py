"""`thinkloop reviews list|show|decide|export`: a project's review queue from the command line, on
the configured database (the API's /v1/reviews does the same over HTTP)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from app.cli.support import fail, in_session

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

T = TypeVar("T")
DEFAULT_PROJECT = "default"  # app.models.DEFAULT_PROJECT, without loading the tables for --help

reviews_cli = typer.Typer(help="Read and decide a project's review queue.", no_args_is_help=True)
Project = Annotated[str, typer.Option(help="The project's id or name")]
ReviewId = Annotated[str, typer.Argument(help="The review item's id")]


def _run(work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """``work`` in one transaction; an unknown project, a refused decision: one line, exit 1."""
    from app.errors import AppError
    from app.projects.keys import ProjectError

    try:
        return asyncio.run(in_session(work))
    except ProjectError as exc:
        fail(str(exc), code=1)
    except AppError as exc:
        fail(exc.detail, code=1)


async def _project(session: AsyncSession, project: str) -> Any:
    from app.projects.keys import find_project

    return await find_project(session, project)


@reviews_cli.command("list")
def reviews_list(
    project: Project = DEFAULT_PROJECT,
    status: Annotated[str | None, typer.Option(help="pending or decided")] = None,
    reason: Annotated[str | None, typer.Option(help="needs_review, audit or requested")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many items")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per item")] = False,
) -> None:
    """The project's review queue, newest first: status, reason, the run, the pupil and the question."""
    if status not in (None, "pending", "decided") or reason not in (
        None,
        "needs_review",
        "audit",
        "requested",
    ):
        fail("--status is pending or decided; --reason is needs_review, audit or requested")
    from app.reviews.decisions import queue_page
    from app.reviews.views import review_rows

    async def rows(session: AsyncSession) -> list[Any]:
        owner = await _project(session, project)
        items, _ = await queue_page(session, owner.id, status=status, reason=reason, limit=limit, cursor=None)
        return await review_rows(session, items)

    found = _run(rows)
    if as_json:
        for row in found:
            typer.echo(row.model_dump_json())
        return
    typer.echo("id\tstatus\treason\trun\tpupil\tdecision\tquestion")
    for row in found:
        pupil = str(row.metadata.get("pupil", "-"))
        decision = row.decision.decision if row.decision else "-"
        question = row.question if len(row.question) <= 60 else row.question[:59] + "…"
        typer.echo("\t".join([row.id, row.status, row.reason, row.run_id, pupil, decision, question]))


@reviews_cli.command("show")
def reviews_show(review_id: ReviewId, project: Project = DEFAULT_PROJECT) -> None:
    """One item as JSON: the version, each judge's words on it, the warrant, the think-aloud and
    every decision."""
    from app.reviews.decisions import get_item
    from app.reviews.views import review_detail

    async def detail(session: AsyncSession) -> str:
        owner = await _project(session, project)
        return (await review_detail(session, await get_item(session, review_id, owner.id))).model_dump_json(
            indent=2
        )

    typer.echo(_run(detail))


@reviews_cli.command("decide")
def reviews_decide(
    review_id: ReviewId,
    decision: Annotated[str, typer.Argument(help="sound or flawed")],
    flaw: Annotated[
        list[str] | None, typer.Option(help="With flawed: TYPE=EVIDENCE (repeat for several flaws)")
    ] = None,
    corrected_question: Annotated[str | None, typer.Option(help="A corrected version's question")] = None,
    corrected_solution: Annotated[str, typer.Option(help="A corrected version's solution")] = "",
    note: Annotated[str | None, typer.Option(help="A note kept with the decision")] = None,
    reviewer: Annotated[str, typer.Option(help="Who decides (recorded as the reviewer)")] = "cli",
    replaces: Annotated[str | None, typer.Option(help="The decision id this one replaces")] = None,
    project: Project = DEFAULT_PROJECT,
) -> None:
    """Decide a queued version (sound, or flawed with TYPE=EVIDENCE flaws); it is written to the
    audit log and announced to the project's webhooks, as over the API."""
    from pydantic import ValidationError

    from app.reviews.decisions import decide, get_item
    from app.reviews.schemas import DecisionIn

    fields: dict[str, Any] = {"decision": decision, "flaws": [_flaw(f) for f in flaw or []]}
    fields |= {"note": note, "reviewer": reviewer, "replaces": replaces}
    if corrected_question is not None:
        fields["corrected"] = {"question": corrected_question, "solution": corrected_solution}
    try:
        body = DecisionIn.model_validate(fields)
    except ValidationError as exc:
        fail("; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors()))

    async def work(session: AsyncSession) -> str:
        owner = await _project(session, project)
        done = await decide(session, await get_item(session, review_id, owner.id), body, None, None)
        return f"decided {review_id} {done.decision.decision} (decision {done.decision.id})"

    typer.echo(_run(work))


def _flaw(text: str) -> dict[str, str]:
    kind, sep, evidence = text.partition("=")
    if not sep or not evidence.strip():
        fail(f"--flaw is TYPE=EVIDENCE, e.g. missing_data='the price is never given' (got {text!r})")
    return {"type": kind.strip(), "evidence": evidence.strip()}


@reviews_cli.command("export")
def reviews_export(project: Project = DEFAULT_PROJECT) -> None:
    """The project's review set as labelled JSONL on stdout, in its canonical form: `thinkloop datasets
    hash` of it prints the set's hash (the one a record measured on it names)."""
    from app.reviews.labels import review_set

    async def export(session: AsyncSession) -> bytes:
        return (await review_set(session, await _project(session, project))).jsonl()

    sys.stdout.buffer.write(_run(export))
    sys.stdout.flush()
