"""Database access for runs. Round, verdict and revision inserts are idempotent."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, delete, func, insert, or_, update
from sqlalchemy import select as sa_select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import SQLModel, col, select

from agents.llm.calls import Usage
from agents.schemas import CallRecord, HolisticReply, JudgeResult, RevisionResult
from app.access import reserve, usage
from app.db import project_row
from app.models import (
    RUN_TERMINAL,
    RUN_UNFINISHED,
    BatchItem,
    DatasetItem,
    JudgementRow,
    ProblemRow,
    ReviewDecision,
    ReviewItem,
    RevisionRow,
    RoundRow,
    Run,
    RunFacts,
    TranscriptEvent,
    WebhookDelivery,
    utcnow,
)
from app.pagination import created_between, page
from app.problems import content_hash
from graphs.events import JudgeVerdict
from graphs.result import RunResult
from graphs.state import Round, RoundFigures


async def get_or_create_problem(session: AsyncSession, question: str, solution: str) -> ProblemRow:
    """The stored problem with this content, created if new (shared by every submitter of the same
    text, so it carries no submitter's metadata)."""
    digest = content_hash(question, solution)
    row = (
        (await session.execute(select(ProblemRow).where(col(ProblemRow.content_hash) == digest)))
        .scalars()
        .first()
    )
    if row is not None:
        return row
    try:
        async with session.begin_nested():
            row = ProblemRow(content_hash=digest, question=question, solution=solution)
            session.add(row)
    except IntegrityError:  # a concurrent request stored it first
        row = (
            (await session.execute(select(ProblemRow).where(col(ProblemRow.content_hash) == digest)))
            .scalars()
            .one()
        )
    return row


async def find_idempotent(session: AsyncSession, project_id: str, key: str) -> Run | None:
    """The run created earlier with this Idempotency-Key in this project, by any of its API keys: a
    client that rotates its key and retries gets the same run, never a second one."""
    query = select(Run).where(col(Run.project_id) == project_id, col(Run.idempotency_key) == key)
    return (await session.execute(query)).scalars().first()


async def project_run(session: AsyncSession, run_id: str, project_id: str) -> Run | None:
    """The project's run with this id; None for an unknown id and for another project's run alike."""
    return await project_row(session, Run, run_id, project_id)


async def list_runs(
    session: AsyncSession,
    *,
    project_id: str,
    limit: int,
    cursor: str | None,
    status: str | None,
    model: str | None,
    metadata: tuple[str, str] | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    source: str | None = None,
    batch_id: str | None = None,
) -> tuple[Sequence[Run], str | None]:
    """A page of the project's runs, newest first, and the cursor of the next page; ``metadata`` is
    a (key, text value) the run's metadata must hold; ``source`` "batch" keeps batch items' runs,
    "api" the others; ``batch_id`` one batch's."""
    query = select(Run).where(col(Run.project_id) == project_id)
    if metadata is not None:
        key, value = metadata
        query = query.where(col(Run.meta)[key].as_string() == value)
    query = created_between(query, Run, created_after, created_before)
    if status:
        query = query.where(col(Run.status) == status)
    if model:
        query = query.where(col(Run.model) == model)
    if source == "batch":
        query = query.where(col(Run.batch_id).is_not(None))
    elif source == "api":
        query = query.where(col(Run.batch_id).is_(None))
    if batch_id:
        query = query.where(col(Run.batch_id) == batch_id)
    return await page(session, query, Run, limit, cursor)


async def record_rounds(
    session: AsyncSession,
    run_id: str,
    rounds: Iterable[Round],
    revisions: Iterable[RevisionResult],
    *,
    none_stored: bool = False,
    owner: usage.Owner | None = None,
    held: bool = True,
) -> list[int]:
    """Store those of a run's scored rounds (each with its seven judgements) and revisions that are
    not stored yet, and charge their calls to the usage ledgers once, in the same transaction (the
    daily caps' ledger, kept past deletion). What is stored already is kept as it is, so a run whose
    stream recorded some of them loses and repeats none. Returns the numbers of the rounds stored.

    ``none_stored``: the caller knows that nothing of the run's is stored yet (its transcript is
    empty, and rounds and revisions are only ever stored with their events), so nothing is looked
    up. ``owner``: the run's (project, key) to charge, when the caller has them (see
    ``usage.charge``)."""
    rounds, revisions = list(rounds), list(revisions)
    stored_rounds: set[int] = set()
    stored_revisions: set[int] = set()
    if rounds and not none_stored:
        query = select(col(RoundRow.round)).where(col(RoundRow.run_id) == run_id)
        stored_rounds = set((await session.execute(query)).scalars())
    if revisions and not none_stored:
        query = select(col(RevisionRow.round)).where(col(RevisionRow.run_id) == run_id)
        stored_revisions = set((await session.execute(query)).scalars())
    spent: list[Usage] = []
    added: list[int] = []
    round_rows: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    revision_rows: list[dict[str, Any]] = []
    now = utcnow()  # rows are plain dicts (no model instances): their one Python-side default
    for record in rounds:
        if record.round in stored_rounds:
            continue
        stored_rounds.add(record.round)
        added.append(record.round)
        round_rows.append(
            {
                "run_id": run_id,
                "round": record.round,
                "question": record.problem.question,
                "solution": record.problem.solution,
                "verification": record.verification or None,
                "solver": record.solver.model_dump(mode="json") if record.solver else None,
                "escalations": record.escalations or None,
                **record.model_dump(include=FIGURES),
                "created_at": now,
            }
        )
        verdicts += [_judgement(run_id, outcome) for outcome in record.outcomes]
        spent += usage.of_round(record)
    for outcome in revisions:
        if outcome.round in stored_revisions:
            continue
        stored_revisions.add(outcome.round)
        revision_rows.append(_revision(run_id, outcome))
        spent.append(outcome.usage)
    for table, rows in ((RoundRow, round_rows), (JudgementRow, verdicts), (RevisionRow, revision_rows)):
        if rows:
            await session.execute(_BULK[table], rows)
    await usage.charge(session, run_id, spent, owner, held=held)
    return added


FIGURES = set(RoundFigures.model_fields)
TABLES: dict[type[SQLModel], str] = {RoundRow: "rounds", JudgementRow: "judgements", RevisionRow: "revisions"}
# Rows of one shape each: one executemany per table, on the table itself, without the ORM's unit of
# work or its bulk INSERT (which costs CPU per row and splits rows by which values are None).
_BULK = {model: insert(SQLModel.metadata.tables[name]) for model, name in TABLES.items()}


_ACCOUNTED = {"input_tokens", "cached_input_tokens", "output_tokens", "latency_s", "cost_usd"}


def call_record(outcome: CallRecord) -> dict[str, Any]:
    """The call-record columns of a judgement or revision (``CallRecordColumns``, and its raw
    replies), from its ``CallRecord``: the one place they are filled."""
    usage = outcome.usage.model_dump(
        include={"input_tokens", "cached_input_tokens", "output_tokens", "latency_s", "cost_usd"}
    )
    return {
        "model": outcome.model,
        "reported_model": outcome.reported_model,
        "system_fingerprint": outcome.system_fingerprint,
        "prompt_version": outcome.prompt_version,
        "raw_outputs": outcome.raw_outputs,
        **usage,
    }


def _judgement(run_id: str, outcome: JudgeResult) -> dict[str, Any]:
    """A judgement's row (``JudgementRow``'s columns)."""
    verdict = outcome.verdict
    details: dict[str, Any] | None = None
    if isinstance(verdict, HolisticReply):
        details = {"five_keys": verdict.five_keys.model_dump(), "suggestions": verdict.suggestions}
    if verdict is not None and verdict.own_answer:
        details = (details or {}) | {"own_answer": verdict.own_answer}
    return {
        "run_id": run_id,
        "round": outcome.round,
        "judge": outcome.judge,
        "score": verdict.score if verdict else None,
        "confidence": verdict.confidence if verdict else None,
        "rationale": verdict.rationale if verdict else None,
        "details": details,
        "abstain_reason": outcome.abstain_reason,
        "failure": outcome.failure.model_dump() if outcome.failure else None,
        "reasoning": outcome.reasoning,
        **call_record(outcome),
    }


def _revision(run_id: str, outcome: RevisionResult) -> dict[str, Any]:
    """A revision's row (``RevisionRow``'s columns)."""
    problem = outcome.problem
    return {
        "run_id": run_id,
        "round": outcome.round,
        "question": problem.question if problem else None,
        "solution": problem.solution if problem else None,
        "thinking": outcome.thinking,
        "error": outcome.error,
        "failure": outcome.failure.model_dump() if outcome.failure else None,
        **call_record(outcome),
    }


async def last_event(session: AsyncSession, run_id: str) -> tuple[int, set[str]]:
    """The highest sequence number of a run's transcript and its dedupe keys."""
    top = (
        await session.execute(
            select(func.max(col(TranscriptEvent.seq))).where(col(TranscriptEvent.run_id) == run_id)
        )
    ).scalar()
    keys_query = select(col(TranscriptEvent.dedupe_key)).where(
        col(TranscriptEvent.run_id) == run_id,
        col(TranscriptEvent.dedupe_key).is_not(None),
    )
    keys = {k for k in (await session.execute(keys_query)).scalars().all() if k}
    return int(top or 0), keys


async def events_after(
    session: AsyncSession, run_id: str, after: int, limit: int = 500
) -> Sequence[TranscriptEvent]:
    """Transcript events with seq > ``after``, in order."""
    query = (
        select(TranscriptEvent)
        .where(col(TranscriptEvent.run_id) == run_id, col(TranscriptEvent.seq) > after)
        .order_by(col(TranscriptEvent.seq))
        .limit(limit)
    )
    return (await session.execute(query)).scalars().all()


_VERDICT = "judge.verdict"
_EVENTS = SQLModel.metadata.tables["transcript_events"]
_JUDGEMENTS = SQLModel.metadata.tables["judgements"]
# A shortened event's data, by its id: one executemany for all of a run's.
_SHORTEN = update(_EVENTS).where(_EVENTS.c.id == bindparam("event_id")).values(data=bindparam("headline"))


def _holds_text(data: dict[str, Any]) -> bool:
    return any(key in data for key in JudgeVerdict.TEXT)


def _judge_of(data: dict[str, Any]) -> tuple[int, str]:
    return int(data.get("round", 0)), str(data.get("judge"))


def _row_text(row: Any) -> dict[str, Any]:
    """The text a judgement row keeps (a row as read, or as ``_judgement`` writes it), by the names
    a ``judge.verdict`` event gives it (``JudgeVerdict.TEXT``)."""
    return {
        "rationale": row["rationale"],
        "own_answer": (row["details"] or {}).get("own_answer"),
        "abstain_reason": row["abstain_reason"],
        "failure": row["failure"],
        "reasoning": row["reasoning"],
    }


def judgement_text(outcome: JudgeResult) -> dict[str, Any]:
    """The text the judgement row of ``outcome`` keeps (``_row_text``), before it is stored."""
    return _row_text(_judgement("", outcome))


async def _row_texts(
    session: AsyncSession, run_id: str, rounds: Collection[int] | None = None
) -> dict[tuple[int, str], dict[str, Any]]:
    """The text of each stored judgement of a run (of ``rounds`` only, when given), by (round, judge)."""
    table = _JUDGEMENTS
    query = sa_select(
        table.c.round,
        table.c.judge,
        table.c.rationale,
        table.c.details,
        table.c.abstain_reason,
        table.c.failure,
        table.c.reasoning,
    ).where(table.c.run_id == run_id)
    if rounds is not None:
        query = query.where(table.c.round.in_(list(rounds)))
    return {(row.round, row.judge): _row_text(row._mapping) for row in await session.execute(query)}


async def keep_verdict_text_once(session: AsyncSession, run_id: str) -> int:
    """Cut the run's stored ``judge.verdict`` events down to their headline wherever the judgement
    row gives the text back exactly (``JudgeVerdict.cut``), so that the row keeps the one durable
    copy; ``with_verdict_text`` joins it back for readers. Called as the run ends; returns how many
    events it cut."""
    query = sa_select(_EVENTS.c.id, _EVENTS.c.data).where(
        _EVENTS.c.run_id == run_id, _EVENTS.c.type == _VERDICT
    )
    holding = [(event_id, data) for event_id, data in await session.execute(query) if _holds_text(data)]
    if not holding:
        return 0
    texts = await _row_texts(session, run_id)
    shortened = []
    for event_id, data in holding:
        headline = JudgeVerdict.cut(data, texts.get(_judge_of(data)))
        if headline is not None:
            shortened.append({"event_id": event_id, "headline": headline})
    if shortened:
        await session.execute(_SHORTEN, shortened)
    return len(shortened)


async def with_verdict_text(
    session: AsyncSession, run_id: str, rows: Sequence[TranscriptEvent]
) -> list[dict[str, Any]]:
    """The data of stored transcript events, each ``judge.verdict`` whole again: the text its
    judgement row keeps joined back, as the live event had it (the stream sends the same bytes)."""
    bare = [row for row in rows if row.type == _VERDICT and not _holds_text(row.data)]
    if not bare:
        return [row.data for row in rows]
    texts = await _row_texts(session, run_id, {_judge_of(row.data)[0] for row in bare})
    out = []
    for row in rows:
        text = texts.get(_judge_of(row.data)) if row.type == _VERDICT and not _holds_text(row.data) else None
        out.append(row.data if text is None else JudgeVerdict.joined(row.data, text))
    return out


async def claim_run(session: AsyncSession, run_id: str, owner: str, lease: timedelta) -> bool:
    """Take (or keep) an unfinished run: free, already ours, or held under a lapsed lease.

    One conditional update, so of any number of processes racing for a run exactly one wins.
    """
    now = utcnow()
    statement = (
        update(Run)
        .where(
            col(Run.id) == run_id,
            col(Run.status).in_(RUN_UNFINISHED),
            or_(
                col(Run.lease_owner).is_(None),
                col(Run.lease_owner) == owner,
                col(Run.lease_until) < now,
            ),
        )
        .values(lease_owner=owner, lease_until=now + lease)
    )
    return bool((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]


async def renew_leases(
    session: AsyncSession, run_ids: Collection[str], owner: str, lease: timedelta
) -> set[str]:
    """Extend this process's leases on ``run_ids``; the ids it still holds (the others were lost:
    the run ended elsewhere, was cancelled by another process, or was taken over)."""
    if not run_ids:
        return set()
    statement = (
        update(Run)
        .where(col(Run.id).in_(run_ids), col(Run.lease_owner) == owner, col(Run.status).in_(RUN_UNFINISHED))
        .values(lease_until=utcnow() + lease)
        .returning(col(Run.id))
    )
    return set((await session.execute(statement)).scalars().all())


async def holds(session: AsyncSession, run_id: str, owner: str) -> bool:
    """Whether ``owner`` still holds the unfinished run (a primary-key probe, made before each write)."""
    query = select(col(Run.id)).where(
        col(Run.id) == run_id, col(Run.lease_owner) == owner, col(Run.status).in_(RUN_UNFINISHED)
    )
    return (await session.execute(query)).first() is not None


async def release_leases(session: AsyncSession, owner: str) -> int:
    """Hand back this process's unfinished runs (a graceful stop): any process may take them now."""
    statement = (
        update(Run)
        .where(col(Run.lease_owner) == owner, col(Run.status).in_(RUN_UNFINISHED))
        .values(lease_owner=None, lease_until=None)
    )
    return int((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]


async def claimable_runs(session: AsyncSession, limit: int) -> list[str]:
    """Unfinished runs nobody holds: never claimed, released, or under a lapsed lease; oldest first.
    A batch item's run is not among them: it is claimed with its item, by a batch worker."""
    query = (
        select(col(Run.id))
        .where(
            col(Run.status).in_(RUN_UNFINISHED),
            col(Run.batch_id).is_(None),
            or_(col(Run.lease_owner).is_(None), and_(col(Run.lease_until) < utcnow())),
        )
        .order_by(col(Run.created_at))
        .limit(limit)
    )
    return list((await session.execute(query)).scalars().all())


async def unfinished_thinking(session: AsyncSession, run_id: str) -> list[int]:
    """The rounds whose revise step never finished (think-aloud, and no ``revision.proposed``): the
    resumed step thinks again. Their think-aloud so far stays in the transcript, whose seq numbers a
    client replays from (``Last-Event-ID``) and must never skip; the trace keeps the last attempt's."""
    rows = (
        await session.execute(
            select(col(TranscriptEvent.type), col(TranscriptEvent.data)).where(
                col(TranscriptEvent.run_id) == run_id,
                col(TranscriptEvent.type).in_(("reviser.thinking", "revision.proposed")),
            )
        )
    ).all()
    proposed = {int(data.get("round", 0)) for kind, data in rows if kind == "revision.proposed"}
    thought = {int(data.get("round", 0)) for kind, data in rows if kind == "reviser.thinking"}
    return sorted(thought - proposed)


def facts(result: RunResult) -> dict[str, Any]:
    """``runs.result`` of a finished run: its metrics, warrant and call counts (``RunFacts``); its
    rounds, verdicts and revisions are rows, stored by ``record_rounds`` in the same transaction."""
    usage = result.usage
    return RunFacts(
        metrics=result.metrics, warrant=result.warrant, llm_calls=usage.calls, retries=usage.retries
    ).model_dump(mode="json")


async def finish_run(
    session: AsyncSession,
    run_id: str,
    status: str,
    stop_reason: str,
    result: dict[str, Any] | None,
    failure: dict[str, Any] | None = None,
    owner: str | None = None,
    held: bool = True,
) -> bool:
    """Set a run's terminal state (its outcome, why, and the failure's cause if it ended in error).
    ``held``: the run may hold reservations of the daily ledgers (a temporary store's never does).

    Only an unfinished run ends, and with ``owner`` only while that process still holds it: a run
    cancelled or taken over elsewhere keeps the end state it got there. False when nothing changed.
    """
    conditions = [col(Run.id) == run_id, col(Run.status).in_(RUN_UNFINISHED)]
    if owner is not None:
        conditions.append(col(Run.lease_owner) == owner)
    statement = (
        update(Run)
        .where(*conditions)
        .values(
            status=status,
            stop_reason=stop_reason,
            result=result,
            failure=failure,
            finished_at=utcnow(),
            lease_until=None,
        )
    )
    changed = bool((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]
    if changed:
        session.expire_all()  # objects loaded earlier in this session show the end state
    if changed and held:
        await reserve.release(session, run_id)  # what it reserved and did not spend is given back
    return changed


async def trace_rows(
    session: AsyncSession, run_id: str
) -> tuple[Sequence[RoundRow], Sequence[JudgementRow], Sequence[RevisionRow]]:
    """Everything stored for a run's trace."""
    rounds = (
        (
            await session.execute(
                select(RoundRow).where(col(RoundRow.run_id) == run_id).order_by(col(RoundRow.round))
            )
        )
        .scalars()
        .all()
    )
    judgements = (
        (await session.execute(select(JudgementRow).where(col(JudgementRow.run_id) == run_id)))
        .scalars()
        .all()
    )
    revisions = (
        (await session.execute(select(RevisionRow).where(col(RevisionRow.run_id) == run_id))).scalars().all()
    )
    return rounds, judgements, revisions


async def questions(session: AsyncSession, ids: list[str]) -> dict[str, str]:
    """The question of each problem id."""
    rows = (
        await session.execute(
            select(col(ProblemRow.id), col(ProblemRow.question)).where(col(ProblemRow.id).in_(ids))
        )
    ).all()
    return {row[0]: row[1] for row in rows}


async def delete_runs(session: AsyncSession, run_ids: Collection[str]) -> set[str]:
    """Delete runs and every row recorded of them (verdicts, rounds, revisions, transcript, webhook
    deliveries, review items and decisions); returns their problems' ids, for
    ``delete_orphan_problems``. Checkpoints are the checkpointer's (``RunExecutor.delete_checkpoints``)."""
    if not run_ids:
        return set()
    ids = list(run_ids)
    query = select(col(Run.problem_id)).where(col(Run.id).in_(ids))
    problems = set((await session.execute(query)).scalars().all())
    for table in (JudgementRow, RoundRow, RevisionRow, TranscriptEvent, WebhookDelivery):
        await session.execute(delete(table).where(col(table.run_id).in_(ids)))
    # its review items and their decisions: the labels they gave leave the project's review set
    reviewed = select(col(ReviewItem.id)).where(col(ReviewItem.run_id).in_(ids))
    await session.execute(delete(ReviewDecision).where(col(ReviewDecision.item_id).in_(reviewed)))
    await session.execute(delete(ReviewItem).where(col(ReviewItem.run_id).in_(ids)))
    await session.execute(delete(Run).where(col(Run.id).in_(ids)))
    return problems


async def delete_orphan_problems(session: AsyncSession, problem_ids: Collection[str]) -> int:
    """Delete the problems that no run, dataset row or batch item refers to any more."""
    if not problem_ids:
        return 0
    ids = list(problem_ids)
    referrers = (
        select(col(Run.problem_id)).where(col(Run.problem_id).in_(ids)),
        select(col(DatasetItem.problem_id)).where(col(DatasetItem.problem_id).in_(ids)),
        select(col(BatchItem.problem_id)).where(col(BatchItem.problem_id).in_(ids)),
    )
    used: set[str] = set()
    for query in referrers:
        used |= set((await session.execute(query)).scalars().all())
    orphans = delete(ProblemRow).where(col(ProblemRow.id).in_([i for i in ids if i not in used]))
    result = await session.execute(orphans)
    return int(getattr(result, "rowcount", 0) or 0)


async def expired_runs(session: AsyncSession, before: datetime, limit: int = 500) -> list[tuple[str, str]]:
    """(id, project) of finished runs created before ``before`` that are no batch's item."""
    query = (
        select(col(Run.id), col(Run.project_id))
        .where(
            col(Run.created_at) < before,
            col(Run.status).in_(RUN_TERMINAL),
            col(Run.batch_id).is_(None),
        )
        .limit(limit)
    )
    return [(row[0], row[1]) for row in (await session.execute(query)).all()]
