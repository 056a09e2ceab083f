"""Signed webhooks through the outbox: the payload, the signature, and the delivery log endpoints."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import col, select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.db import short_session
from app.models import ProblemRow, Run, WebhookDelivery, new_id, utcnow
from app.webhook_signing import ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, verify
from app.webhooks import enqueue
from tests.app.conftest import PROBLEM, LiveServer, Service
from tests.app.test_api import assert_problem

pytestmark = pytest.mark.both_databases

SECRET = "whsec-test"  # as configured by service_settings
Sessions = async_sessionmaker[AsyncSession]


@dataclass
class Hit:
    """One POST the receiver got, and what it answered."""

    headers: dict[str, str]
    body: bytes
    status: int

    @property
    def delivery(self) -> str:
        """The webhook-id header: the delivery's id."""
        return self.headers["webhook-id"]


class Receiver:
    """A webhook receiver on loopback: answers ``answers`` in turn, then ``then`` (changeable).

    With ``gate`` set, each request waits for ``gate.set()`` after setting ``arrived``.
    """

    def __init__(self, answers: Iterable[int] = (), then: int = 204, gate: bool = False) -> None:
        self.answers, self.then = list(answers), then
        self.hits: list[Hit] = []
        self.arrived, self.gate = threading.Event(), None if not gate else threading.Event()

    async def hook(self, request: Request) -> Response:
        body = await request.body()
        self.arrived.set()
        if self.gate is not None:
            await asyncio.to_thread(self.gate.wait, 60)
        status = self.answers.pop(0) if self.answers else self.then
        self.hits.append(Hit(dict(request.headers), body, status))
        return Response(status_code=status)

    def serve(self) -> LiveServer:
        """The receiver on a free loopback port, at ``<url>/hook``."""
        return LiveServer(Starlette(routes=[Route("/hook", self.hook, methods=["POST"])]))  # type: ignore[arg-type]

    def by_delivery(self) -> dict[str, list[int]]:
        """Statuses answered, by delivery id."""
        seen: dict[str, list[int]] = {}
        for hit in self.hits:
            seen.setdefault(hit.delivery, []).append(hit.status)
        return seen


async def finished_run(sessions: Sessions, webhook_url: str | None) -> Run:
    """A run that ended (accepted), as the executor leaves it, without executing anything."""
    async with short_session(sessions) as session:
        problem = ProblemRow(content_hash=new_id(), question="q", solution="s")
        session.add(problem)
        await session.flush()
        run = Run(
            problem_id=problem.id,
            status="accepted",
            model="rubric",
            judge_model="rubric",
            policy="default",
            max_rounds=1,
            webhook_url=webhook_url,
            finished_at=utcnow(),
        )
        session.add(run)
    return run


async def enqueued(sessions: Sessions, run: Run, **changes: Any) -> WebhookDelivery:
    """A run.finished delivery of the run, committed (with ``changes`` to its row)."""
    async with short_session(sessions) as session:
        (delivery,) = await enqueue(session, run, "run.finished", {"outcome": "accepted"})
        for name, value in changes.items():
            setattr(delivery, name, value)
    return delivery


async def delivery_row(sessions: Sessions, delivery_id: str) -> WebhookDelivery:
    """The delivery as stored now."""
    async with sessions() as session:
        row = await session.get(WebhookDelivery, delivery_id)
    assert row is not None
    return row


async def wait_for(
    sessions: Sessions, delivery_id: str, status: str, within_s: float = 60
) -> WebhookDelivery:
    """The delivery once it has ``status`` (polled: a condition, with a generous bound)."""
    for _ in range(int(within_s / 0.05)):
        row = await delivery_row(sessions, delivery_id)
        if row.status == status:
            return row
        await asyncio.sleep(0.05)
    raise AssertionError(f"delivery {delivery_id} never became {status}: {row}")


def test_signature_covers_id_timestamp_and_body() -> None:
    signature = sign("k", "msg_1", "1700000000", b'{"a":1}')
    assert signature.startswith("v1,") and signature != sign("k", "msg_1", "1700000001", b'{"a":1}')
    assert signature != sign("k", "msg_1", "1700000000", b'{"a":2}')
    assert signature != sign("k", "msg_2", "1700000000", b'{"a":1}')
    assert verify("k", "msg_1", "1700000000", b'{"a":1}', signature, now=1700000000)
    assert not verify("k", "msg_1", "1700000000", b'{"a":1}', signature)  # too old


async def test_a_signed_delivery_is_retried_after_a_failure_with_the_same_id(service: Service) -> None:
    sessions, receiver = service.app.state.sessions, Receiver(answers=[500])
    with receiver.serve() as hooks:
        run = await finished_run(sessions, f"{hooks.url}/hook?token=t")
        delivery = await enqueued(sessions, run)
        service.app.state.outbox.wake()
        stored = await wait_for(sessions, delivery.id, "delivered")
    assert [hit.status for hit in receiver.hits] == [500, 204]
    assert {hit.delivery for hit in receiver.hits} == {delivery.id}
    assert (stored.attempts, stored.last_status_code) == (2, 204) and stored.delivered_at is not None
    headers, raw = receiver.hits[-1].headers, receiver.hits[-1].body
    signed = (headers[ID_HEADER], headers[TIMESTAMP_HEADER], raw, headers[SIGNATURE_HEADER])
    assert verify(SECRET, *signed) and not verify("wrong", *signed)
    assert headers["thinkloop-event"] == "run.finished"
    body = json.loads(raw)
    assert {body.pop("id"), body.pop("created")} and body == {
        "type": "run.finished",
        "run_id": run.id,
        "outcome": "accepted",
        "status": "accepted",
        "metadata": {},
    }


async def test_deliveries_are_listed_newest_first_with_urls_redacted(service: Service) -> None:
    sessions = service.app.state.sessions
    run = await finished_run(sessions, "http://user:pw@127.0.0.1:9/hook?token=URL-SECRET")
    older = await enqueued(
        sessions, run, status="failed", attempts=5, last_error="HTTP 503", last_status_code=503
    )
    newer = await enqueued(sessions, run, status="delivered", created_at=utcnow() + timedelta(seconds=1))
    response = await service.client.get(f"/v1/runs/{run.id}/deliveries", headers=service.keys.auth("read"))
    assert response.status_code == 200
    items = response.json()["items"]
    assert [item["id"] for item in items] == [newer.id, older.id]
    assert items[1] | {"created_at": None, "next_attempt_at": None} == {
        "id": older.id,
        "event": "run.finished",
        "url": "http://127.0.0.1:9/hook",
        "status": "failed",
        "attempts": 5,
        "next_attempt_at": None,
        "last_status_code": 503,
        "last_error": "HTTP 503",
        "created_at": None,
        "delivered_at": None,
    }
    assert "URL-SECRET" not in response.text and "pw" not in response.text
    unknown = await service.client.get("/v1/runs/nope/deliveries", headers=service.keys.auth("read"))
    assert_problem(unknown, 404)


async def test_redeliver_makes_a_new_delivery_that_is_sent(service: Service) -> None:
    sessions, receiver = service.app.state.sessions, Receiver()
    with receiver.serve() as hooks:
        run = await finished_run(sessions, f"{hooks.url}/hook")
        original = await enqueued(sessions, run, status="failed", attempts=5, last_error="HTTP 500")
        path = f"/v1/runs/{run.id}/deliveries/{original.id}/redeliver"
        assert_problem(await service.client.post(path, headers=service.keys.auth("read")), 403)
        response = await service.client.post(path, headers=service.keys.auth("write"))
        assert response.status_code == 202
        again = response.json()
        assert again["id"] != original.id and (again["status"], again["attempts"]) == ("pending", 0)
        await wait_for(sessions, again["id"], "delivered")
    assert receiver.by_delivery() == {again["id"]: [204]}
    sent = json.loads(receiver.hits[0].body)
    assert sent == original.payload and sent["id"] == original.payload["id"]  # the same event, same id
    assert (sent["type"], sent["run_id"], sent["status"]) == ("run.finished", run.id, "accepted")
    listed = await service.client.get(f"/v1/runs/{run.id}/deliveries", headers=service.keys.auth("read"))
    assert [(d["id"], d["status"]) for d in listed.json()["items"]] == [
        (again["id"], "delivered"),
        (original.id, "failed"),
    ]


async def test_redeliver_404s_for_an_unknown_run_or_delivery_or_another_runs_delivery(
    service: Service,
) -> None:
    sessions, auth = service.app.state.sessions, service.keys.auth("write")
    run, other = await finished_run(sessions, "http://127.0.0.1:9/a"), await finished_run(sessions, None)
    delivery = await enqueued(sessions, run, status="failed")
    for path in (
        f"/v1/runs/nope/deliveries/{delivery.id}/redeliver",
        f"/v1/runs/{run.id}/deliveries/nope/redeliver",
        f"/v1/runs/{other.id}/deliveries/{delivery.id}/redeliver",
    ):
        assert_problem(await service.client.post(path, headers=auth), 404)
    async with sessions() as session:
        query = select(WebhookDelivery).where(col(WebhookDelivery.run_id).in_((run.id, other.id)))
        assert len((await session.execute(query)).scalars().all()) == 1  # nothing was added


async def test_a_finished_run_is_delivered_through_the_outbox(service: Service) -> None:
    sessions, receiver = service.app.state.sessions, Receiver(answers=[500])
    with receiver.serve() as hooks:
        body = {"problem": PROBLEM, "webhook_url": f"{hooks.url}/hook"}
        response = await service.client.post(
            "/v1/runs", json=body, headers=service.keys.auth(), params={"wait": "true"}
        )
        run_id = response.json()["id"]
        listed = await service.client.get(f"/v1/runs/{run_id}/deliveries", headers=service.keys.auth("read"))
        (item,) = listed.json()["items"]  # written with the run's end state
        await wait_for(sessions, item["id"], "delivered")
    assert receiver.by_delivery() == {item["id"]: [500, 204]}
    payload = json.loads(receiver.hits[-1].body)
    assert (payload["type"], payload["run_id"], payload["outcome"]) == ("run.finished", run_id, "screened")
    assert "metrics" in payload
    # the envelope every event has, and the schema the OpenAPI document gives it
    from app.runs.schemas import RunFinishedWebhook

    event = RunFinishedWebhook.model_validate(payload)
    assert event.status == "screened" and len(event.id) == 32 and event.created.tzinfo is not None
    assert receiver.hits[0].body == receiver.hits[-1].body  # a retry sends the same event (same id)
