"""Data lifecycle: deleting runs and batches removes every trace (rows, transcript, checkpoints,
cached replies only they used); retention purges old runs; the audit log says who did what."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from sqlalchemy import func, select, text
from sqlmodel import col

from app.db import create_engine, session_factory, short_session
from app.models import (
    AuditEvent,
    Batch,
    BatchItem,
    CachedResponse,
    CacheUse,
    JudgementRow,
    ProblemRow,
    RevisionRow,
    RoundRow,
    Run,
    TranscriptEvent,
)
from app.runs.service import purge
from tests.helpers.batches import settle, start
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service

pytestmark = pytest.mark.both_databases

PER_RUN = (JudgementRow, RoundRow, RevisionRow, TranscriptEvent)


async def _count(database_url: str, table: Any, *where: Any) -> int:
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            return int(
                (await session.execute(select(func.count()).select_from(table).where(*where))).scalar_one()
            )
    finally:
        await engine.dispose()


async def _checkpointed(service: Service, run_id: str) -> bool:
    saver = service.app.state.executor.graph.checkpointer
    return await saver.aget_tuple({"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}) is not None


async def _states_gone(service: Service, run_ids: list[str]) -> bool:
    """Whether the runs' checkpoints are gone; a run deletes its own just after its end commits,
    so a batch seen settled may still be deleting its last run's."""
    for _ in range(200):  # a hang guard, not a timing check
        if not any([await _checkpointed(service, r) for r in run_ids]):
            return True
        await asyncio.sleep(0.05)
    return False


async def _leave_state(service: Service, run_id: str) -> None:
    """A checkpoint of an ended run, as a run whose end could not delete its states leaves them
    (or one that ended before runs deleted theirs): deleting the run or purging it removes it."""
    saver = service.app.state.executor.graph.checkpointer
    config: Any = {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}
    await saver.aput(config, empty_checkpoint(), {}, {})


async def _finished_run(service: Service, question: str | None = None) -> str:
    problem = PROBLEM | ({"question": question} if question else {})
    response = await service.client.post(
        "/v1/runs", json={"problem": problem}, params={"wait": "true"}, headers=service.keys.auth()
    )
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


async def _audit(service: Service, **params: str) -> list[dict[str, Any]]:
    response = await service.client.get("/v1/audit", params=params, headers=service.keys.auth("admin"))
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


async def test_deleting_a_run_removes_every_trace_of_it(service: Service, database_url: str) -> None:
    run_id = await _finished_run(service, "A tank fills in 3 hours with one pump. How long with 3 pumps?")
    assert await _states_gone(service, [run_id])  # an ended run's states go with its end
    await _leave_state(service, run_id)
    assert await _checkpointed(service, run_id)
    assert all([await _count(database_url, t, col(t.run_id) == run_id) for t in PER_RUN])
    problem_id = (await service.client.get(f"/v1/runs/{run_id}", headers=service.keys.auth())).json()

    other = await service.client.delete(f"/v1/runs/{run_id}", headers=service.keys.auth("other"))
    assert other.status_code == 404  # another project's keys cannot delete it
    reader = await service.client.delete(f"/v1/runs/{run_id}", headers=service.keys.auth("read"))
    assert reader.status_code == 403
    gone = await service.client.delete(f"/v1/runs/{run_id}", headers=service.keys.auth())
    assert gone.status_code == 204 and gone.content == b""

    assert (await service.client.get(f"/v1/runs/{run_id}", headers=service.keys.auth())).status_code == 404
    assert (await service.client.delete(f"/v1/runs/{run_id}", headers=service.keys.auth())).status_code == 404
    for table in PER_RUN:
        assert await _count(database_url, table, col(table.run_id) == run_id) == 0, table
    assert await _count(database_url, Run, col(Run.id) == run_id) == 0
    assert not await _checkpointed(service, run_id)
    # its problem was nobody else's
    question = problem_id["problem"]["question"]
    assert await _count(database_url, ProblemRow, col(ProblemRow.question) == question) == 0

    entries = await _audit(service, target_id=run_id)
    assert [(e["action"], e["target_type"]) for e in entries] == [("deleted", "run"), ("created", "run")]
    assert entries[0]["key_id"] and entries[0]["actor"].startswith("both (")


async def test_a_shared_problem_outlives_one_of_its_runs(service: Service, database_url: str) -> None:
    first, second = await _finished_run(service), await _finished_run(service)
    assert (await service.client.delete(f"/v1/runs/{first}", headers=service.keys.auth())).status_code == 204
    trace = (await service.client.get(f"/v1/runs/{second}", headers=service.keys.auth())).json()
    assert trace["problem"]["question"] == PROBLEM["question"]
    assert await _count(database_url, ProblemRow, col(ProblemRow.question) == PROBLEM["question"]) == 1


async def test_deleting_batches_removes_their_runs_and_the_replies_only_they_used(
    service: Service, database_url: str
) -> None:
    first = await start(service)
    active = await service.client.delete(f"/v1/batches/{first['id']}", headers=service.keys.auth())
    assert active.status_code in (204, 409)  # 409 while it runs; it may already have ended
    await settle(service, first["id"])
    second = await start(service)  # the same problems: it reuses the first one's cached replies
    await settle(service, second["id"])
    used_by = {}
    for batch in (first, second):
        used_by[batch["id"]] = await _count(database_url, CacheUse, col(CacheUse.batch_id) == batch["id"])
    assert used_by[first["id"]] > 0 and used_by[second["id"]] > 0
    cached = await _count(database_url, CachedResponse)
    runs = await _batch_runs(database_url, first["id"])
    assert runs and await _states_gone(service, runs)  # gone with their ends
    await _leave_state(service, runs[0])

    other = await service.client.delete(f"/v1/batches/{first['id']}", headers=service.keys.auth("other"))
    assert other.status_code == 404
    gone = await service.client.delete(f"/v1/batches/{first['id']}", headers=service.keys.auth())
    assert gone.status_code == 204
    assert await _count(database_url, Batch, col(Batch.id) == first["id"]) == 0
    assert await _count(database_url, BatchItem, col(BatchItem.batch_id) == first["id"]) == 0
    assert await _count(database_url, Run, col(Run.id).in_(runs)) == 0
    for table in PER_RUN:
        assert await _count(database_url, table, col(table.run_id).in_(runs)) == 0, table
    assert not any([await _checkpointed(service, r) for r in runs])
    # every reply the first batch used, the second used too: all kept
    assert await _count(database_url, CachedResponse) == cached

    assert (
        await service.client.delete(f"/v1/batches/{second['id']}", headers=service.keys.auth())
    ).status_code == 204
    assert await _count(database_url, CachedResponse) == 0 and await _count(database_url, CacheUse) == 0
    assert (
        await service.client.get(f"/v1/batches/{second['id']}", headers=service.keys.auth())
    ).status_code == 404
    actions = [(e["action"], e["target_id"]) for e in await _audit(service, action="deleted")]
    assert ("deleted", first["id"]) in actions and ("deleted", second["id"]) in actions


async def _batch_runs(database_url: str, batch_id: str) -> list[str]:
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            query = select(col(Run.id)).where(col(Run.batch_id) == batch_id)
            return list((await session.execute(query)).scalars().all())
    finally:
        await engine.dispose()


async def test_a_batch_still_active_cannot_be_deleted(service: Service) -> None:
    batch = await start(service)
    paused = await service.client.post(f"/v1/batches/{batch['id']}/pause", headers=service.keys.auth())
    if paused.status_code == 200:  # it had not ended yet
        refused = await service.client.delete(f"/v1/batches/{batch['id']}", headers=service.keys.auth())
        assert refused.status_code == 409 and "cancel it first" in refused.json()["detail"]
        await service.client.post(f"/v1/batches/{batch['id']}/cancel", headers=service.keys.auth())
    await settle(service, batch["id"])
    assert (
        await service.client.delete(f"/v1/batches/{batch['id']}", headers=service.keys.auth())
    ).status_code == 204


async def test_retention_purges_old_api_runs_and_keeps_batches(service: Service, database_url: str) -> None:
    run_id = await _finished_run(service)
    batch = await start(service)
    await settle(service, batch["id"])
    batch_runs = await _batch_runs(database_url, batch["id"])
    await _leave_state(service, run_id)
    executor = service.app.state.executor
    sessions = service.app.state.sessions
    assert await purge(sessions, executor.delete_checkpoints, timedelta(days=1)) == 0  # nothing that old
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            await session.execute(
                text("UPDATE runs SET created_at = :old"), {"old": (await _an_old_time(session))}
            )
    finally:
        await engine.dispose()
    assert await purge(sessions, executor.delete_checkpoints, timedelta(days=1)) == 1
    assert (await service.client.get(f"/v1/runs/{run_id}", headers=service.keys.auth())).status_code == 404
    assert not await _checkpointed(service, run_id)
    assert await _count(database_url, Run, col(Run.id).in_(batch_runs)) == len(batch_runs)
    (entry,) = await _audit(service, target_id=run_id, action="deleted")
    assert entry["actor"] == "retention" and entry["key_id"] is None
    assert await _count(database_url, AuditEvent, col(AuditEvent.actor) == "retention") == 1


async def _an_old_time(session: Any) -> Any:
    from app.models import utcnow

    old = utcnow() - timedelta(days=3)
    return old.replace(tzinfo=None) if session.get_bind().dialect.name == "sqlite" else old


async def test_the_audit_log_is_for_admins(service: Service) -> None:
    await _finished_run(service, "What is 2 + 3?")
    run_id = await _finished_run(service)
    await service.client.post(f"/v1/runs/{run_id}/cancel", headers=service.keys.auth())  # 409: it ended
    for which in ("read", "write", "both", "other"):
        assert (await service.client.get("/v1/audit", headers=service.keys.auth(which))).status_code == 403
    entries = await _audit(service, project_id="default")
    assert [e["action"] for e in entries if e["target_id"] == run_id] == ["created"]
    page = (
        await service.client.get("/v1/audit", params={"limit": 1}, headers=service.keys.auth("admin"))
    ).json()
    assert len(page["items"]) == 1 and page["next_cursor"]


async def test_deleting_a_dataset_waits_for_its_batches(service: Service, database_url: str) -> None:
    from app.models import Dataset, DatasetItem

    batch = await start(service)
    await settle(service, batch["id"])
    dataset_id = batch["dataset_id"]
    busy = await service.client.delete(f"/v1/datasets/{dataset_id}", headers=service.keys.auth())
    assert busy.status_code == 409 and batch["id"] in busy.json()["detail"]
    assert (
        await service.client.delete(f"/v1/batches/{batch['id']}", headers=service.keys.auth())
    ).status_code == 204
    gone = await service.client.delete(f"/v1/datasets/{dataset_id}", headers=service.keys.auth())
    assert gone.status_code == 204
    assert await _count(database_url, Dataset, col(Dataset.id) == dataset_id) == 0
    assert await _count(database_url, DatasetItem, col(DatasetItem.dataset_id) == dataset_id) == 0
    assert await _count(database_url, ProblemRow) == 0  # nothing else referred to its problems
    actions = [(e["action"], e["target_type"]) for e in await _audit(service, target_id=dataset_id)]
    assert actions == [("deleted", "dataset"), ("created", "dataset")]
