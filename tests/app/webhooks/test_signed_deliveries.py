"""Signed webhooks through the outbox: the payload, the signature, and the delivery log endpoints."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlmodel import col, select

from app.models import WebhookDelivery, utcnow
from app.webhooks.signing import ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, verify
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service, assert_problem
from tests.helpers.webhooks import SECRET, Receiver, enqueued, finished_run, wait_for

pytestmark = pytest.mark.both_databases


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
    from app.webhooks.schemas import RunFinishedWebhook

    event = RunFinishedWebhook.model_validate(payload)
    assert event.status == "screened" and len(event.id) == 32 and event.created.tzinfo is not None
    assert receiver.hits[0].body == receiver.hits[-1].body  # a retry sends the same event (same id)
