"""Webhooks fit for production: every delivery signed (a run's own webhook_url with the project's
secret when the instance sets none), a retry schedule that outlasts a receiver's outage (on a moved
clock, not a waited one), deliveries filtered, paged and redelivered in bulk, payloads that carry
the run's metadata, and the client's verification helper checking a real delivery."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from sqlmodel import col

from agents.simulator import SimulatorServer
from app.db import create_engine, migrate, session_factory, short_session
from app.main import create_app
from app.models import DEFAULT_PROJECT, Project, utcnow
from app.webhooks.outbox import WebhookOutbox
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service, assert_problem, seed_keys, service_settings
from tests.helpers.webhooks import (
    Receiver,
    Sessions,
    delivery_row,
    enqueued,
    finished_run,
    settings,
    wait_for,
)
from thinkloop_client.webhooks import WebhookVerificationError, verify

pytestmark = pytest.mark.both_databases


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Sessions]:
    """Sessions on a migrated database, with no sender running."""
    await migrate(database_url)
    engine = create_engine(database_url)
    try:
        yield session_factory(engine)
    finally:
        await engine.dispose()


@pytest.fixture
async def unsigned_service(database_url: str, simulator_server: SimulatorServer) -> AsyncIterator[Service]:
    """The API as installed by default: THINKLOOP_WEBHOOK_SECRET unset."""
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"rules": []}))
    await migrate(database_url)
    keys = await seed_keys(database_url)
    app = create_app(service_settings(database_url, simulator_server, webhook_secret=None))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield Service(app, client, keys)


async def project_secret(service: Service) -> str:
    response = await service.client.get(
        f"/v1/projects/{DEFAULT_PROJECT}/webhook-secret", headers=service.keys.auth("admin")
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["project_id"] == DEFAULT_PROJECT and body["in_use"] is True
    assert body["secret"].startswith("whsec_")
    return str(body["secret"])


async def test_a_runs_own_webhook_is_signed_with_the_projects_secret_and_verifies_with_the_client(
    unsigned_service: Service,
) -> None:
    service, receiver = unsigned_service, Receiver()
    metadata = {"pupil": "P-17", "class": "4b"}
    with receiver.serve() as hooks:
        body = {"problem": PROBLEM | {"metadata": metadata}, "webhook_url": f"{hooks.url}/hook"}
        response = await service.client.post(
            "/v1/runs", json=body, headers=service.keys.auth(), params={"wait": "true"}
        )
        run_id = response.json()["id"]
        listed = await service.client.get(f"/v1/runs/{run_id}/deliveries", headers=service.keys.auth("read"))
        (item,) = listed.json()["items"]
        await wait_for(service.app.state.sessions, item["id"], "delivered")
    (hit,) = receiver.hits
    secret = await project_secret(service)
    event = verify(secret, hit.headers, hit.body)  # the whsec_… string as shown
    assert (event["type"], event["run_id"], event["metadata"]) == ("run.finished", run_id, metadata)
    assert hit.headers["webhook-id"] == hit.headers["thinkloop-delivery"] == item["id"]
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify(secret, hit.headers, hit.body.replace(b"P-17", b"P-18"))  # tampered
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify(secret.removeprefix("whsec_") + "x", hit.headers, hit.body)  # another key
    late = int(hit.headers["webhook-timestamp"]) + 301
    with pytest.raises(WebhookVerificationError, match="timestamp"):
        verify(secret, hit.headers, hit.body, now=late)  # replayed after the tolerance
    unsigned = {name: value for name, value in hit.headers.items() if name != "webhook-signature"}
    with pytest.raises(WebhookVerificationError, match="missing"):
        verify(secret, unsigned, hit.body)


async def test_the_projects_secret_is_its_admins_to_read_and_rotate(unsigned_service: Service) -> None:
    service, receiver = unsigned_service, Receiver()
    path = f"/v1/projects/{DEFAULT_PROJECT}/webhook-secret"
    before = await project_secret(service)
    assert_problem(await service.client.get(path, headers=service.keys.auth("both")), 403)
    other = await service.client.get("/v1/projects", headers=service.keys.auth("operator"))
    others = [p["id"] for p in other.json()["items"] if p["id"] != DEFAULT_PROJECT]
    foreign = f"/v1/projects/{others[0]}/webhook-secret"
    assert_problem(await service.client.get(foreign, headers=service.keys.auth("admin")), 404)
    assert (await service.client.get(foreign, headers=service.keys.auth("operator"))).status_code == 200
    ended = {"keep_previous_s": 0}  # a leaked secret: the old one stops signing at once
    rotated = await service.client.post(f"{path}/rotate", params=ended, headers=service.keys.auth("admin"))
    assert rotated.status_code == 200 and rotated.json()["previous_until"] is None
    after = rotated.json()["secret"]
    assert after != before and after == await project_secret(service)
    with receiver.serve() as hooks:
        run = await finished_run(service.app.state.sessions, f"{hooks.url}/hook")
        delivery = await enqueued(service.app.state.sessions, run)
        service.app.state.outbox.wake()
        await wait_for(service.app.state.sessions, delivery.id, "delivered")
    verify(after, receiver.hits[0].headers, receiver.hits[0].body)
    with pytest.raises(WebhookVerificationError):
        verify(before, receiver.hits[0].headers, receiver.hits[0].body)


async def test_a_rotated_project_secret_signs_beside_the_new_one(unsigned_service: Service) -> None:
    service, receiver = unsigned_service, Receiver()
    before = await project_secret(service)
    path = f"/v1/projects/{DEFAULT_PROJECT}/webhook-secret"
    rotated = await service.client.post(f"{path}/rotate", headers=service.keys.auth("admin"))
    after, until = rotated.json()["secret"], rotated.json()["previous_until"]
    assert after != before and until is not None
    assert (await service.client.get(path, headers=service.keys.auth("admin"))).json()[
        "previous_until"
    ] == until
    with receiver.serve() as hooks:
        delivery = await enqueued(
            service.app.state.sessions, await finished_run(service.app.state.sessions, f"{hooks.url}/hook")
        )
        service.app.state.outbox.wake()
        await wait_for(service.app.state.sessions, delivery.id, "delivered")
    (hit,) = receiver.hits
    assert len(hit.headers["webhook-signature"].split()) == 2
    assert verify(before, hit.headers, hit.body) == verify(after, hit.headers, hit.body)


async def test_a_delivery_with_no_secret_to_sign_it_is_failed_and_never_sent_unsigned(
    store: Sessions,
) -> None:
    receiver = Receiver()
    with receiver.serve() as hooks:
        run = await finished_run(store, f"{hooks.url}/hook")
        delivery = await enqueued(store, run, project_id=None)  # names no project, no endpoint
        async with httpx.AsyncClient() as http:
            sender = WebhookOutbox(store, http, settings(webhook_secret=None), "a")
            assert await sender.send_due() == 1
    stored = await delivery_row(store, delivery.id)
    assert (stored.status, stored.attempts) == ("failed", 1)
    assert stored.last_error and "no signing secret" in stored.last_error
    assert receiver.hits == []


async def test_a_project_made_without_a_secret_gets_one_when_its_first_webhook_is_signed(
    store: Sessions,
) -> None:
    async with short_session(store) as session:
        await session.execute(
            update(Project).where(col(Project.id) == DEFAULT_PROJECT).values(webhook_secret=None)
        )
    receiver = Receiver()
    with receiver.serve() as hooks:
        delivery = await enqueued(store, await finished_run(store, f"{hooks.url}/hook"))
        async with httpx.AsyncClient() as http:
            assert await WebhookOutbox(store, http, settings(webhook_secret=None), "a").send_due() == 1
    async with store() as session:
        project = await session.get(Project, DEFAULT_PROJECT)
        assert project is not None and project.webhook_secret
    assert (await delivery_row(store, delivery.id)).status == "delivered"
    verify(project.webhook_secret, receiver.hits[0].headers, receiver.hits[0].body)


async def test_a_receiver_down_for_ten_minutes_gets_the_event_after_restarts(store: Sessions) -> None:
    """The default schedule, on a clock moved to each delivery's next attempt (nothing waits), with a
    new sender for every attempt (the process was redeployed): the retry state is the outbox row."""
    defaults = {"webhook_attempts": 11, "webhook_backoff_s": 5.0, "webhook_backoff_factor": 4.0}
    config = settings(**defaults, webhook_backoff_max_s=6 * 3600.0, webhook_backoff_jitter=0.2)
    start, moved = utcnow(), timedelta(0)

    def clock() -> datetime:
        return utcnow() + moved

    receiver = Receiver(then=503)  # the receiver is down
    attempted_at: list[timedelta] = []
    with receiver.serve() as hooks:
        delivery = await enqueued(store, await finished_run(store, f"{hooks.url}/hook"))
        for _ in range(config.webhook_attempts):
            if clock() - start >= timedelta(minutes=10):
                receiver.then = 204  # back up after ten minutes
            async with httpx.AsyncClient() as http:  # a fresh process each time
                assert (
                    await WebhookOutbox(store, http, config, f"p{len(attempted_at)}", clock).send_due() == 1
                )
            attempted_at.append(clock() - start)
            stored = await delivery_row(store, delivery.id)
            if stored.status != "pending":
                break
            async with httpx.AsyncClient() as http:  # not due before its backoff ends
                assert await WebhookOutbox(store, http, config, "early", clock).send_due() == 0
            moved = stored.next_attempt_at - utcnow() + timedelta(milliseconds=1)
    assert stored.status == "delivered", stored
    assert attempted_at[-1] >= timedelta(minutes=10)
    assert [hit.status for hit in receiver.hits] == [503] * (len(receiver.hits) - 1) + [204]
    assert {hit.delivery for hit in receiver.hits} == {delivery.id}  # one id: the receiver can dedupe


async def _deliveries(service: Service, path: str, **params: Any) -> httpx.Response:
    return await service.client.get(path, params=params, headers=service.keys.auth("read"))


async def test_deliveries_filter_by_status_and_page_by_keyset(service: Service) -> None:
    sessions = service.app.state.sessions
    run = await finished_run(sessions, "http://127.0.0.1:9/hook")
    now = utcnow()
    made = [
        await enqueued(sessions, run, status=state, created_at=now + timedelta(seconds=n))
        for n, state in enumerate(["failed", "delivered", "failed", "pending", "failed"])
    ]
    failed_ids = [d.id for d in reversed(made) if d.status == "failed"]  # newest first
    for path in (f"/v1/runs/{run.id}/deliveries", "/v1/webhook-deliveries"):
        seen, cursor = [], None
        while True:
            params = {"status": "failed", "limit": 2} | ({"cursor": cursor} if cursor else {})
            page = (await _deliveries(service, path, **params)).json()
            seen += [item["id"] for item in page["items"]]
            assert all(item["status"] == "failed" for item in page["items"])
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert [i for i in seen if i in {d.id for d in made}] == failed_ids, path
        everything = (await _deliveries(service, path, limit=200)).json()["items"]
        assert {d.id for d in made} <= {item["id"] for item in everything}
        body = assert_problem(await _deliveries(service, path, status="lost"), 422)
        assert "status" in json.dumps(body)
        assert_problem(await _deliveries(service, path, cursor="not-a-cursor"), 400)
        assert_problem(await _deliveries(service, path, limit=0), 422)
    # another project's key sees none of them
    foreign = await service.client.get("/v1/webhook-deliveries", headers=service.keys.auth("other"))
    assert not {d.id for d in made} & {item["id"] for item in foreign.json()["items"]}
    assert_problem(
        await service.client.get(f"/v1/runs/{run.id}/deliveries", headers=service.keys.auth("other")), 404
    )


async def test_bulk_redeliver_sends_the_failed_ones_again_under_their_own_ids(service: Service) -> None:
    sessions, receiver = service.app.state.sessions, Receiver()
    with receiver.serve() as hooks:
        run = await finished_run(sessions, f"{hooks.url}/hook")
        failed = [await enqueued(sessions, run, status="failed", attempts=11) for _ in range(3)]
        gone = await enqueued(sessions, run, status="failed", last_error="the endpoint was deleted")
        delivered = await enqueued(sessions, run, status="delivered", attempts=1)
        write, path = service.keys.auth("write"), f"/v1/runs/{run.id}/deliveries/redeliver"
        assert_problem(await service.client.post(path, headers=service.keys.auth("read")), 403)
        refused = assert_problem(
            await service.client.post(path, params={"status": "pending"}, headers=write), 422
        )
        assert "failed" in str(refused["detail"])
        assert_problem(await service.client.post(path, params={"status": "nope"}, headers=write), 422)
        response = await service.client.post(path, params={"status": "failed"}, headers=write)
        assert response.status_code == 202
        body = response.json()
        assert body["count"] == 3 and {i["id"] for i in body["items"]} == {d.id for d in failed}
        assert all((i["status"], i["attempts"]) == ("pending", 0) for i in body["items"])
        for delivery in failed:
            await wait_for(sessions, delivery.id, "delivered")
        again = await service.client.post("/v1/webhook-deliveries/redeliver", headers=write)
        assert (again.status_code, again.json()["count"]) == (202, 0)  # nothing failed is left
    assert receiver.by_delivery() == {d.id: [204] for d in failed}
    assert (await delivery_row(sessions, gone.id)).status == "failed"  # never to a deleted endpoint
    assert (await delivery_row(sessions, delivered.id)).attempts == 1


async def test_the_project_wide_redeliver_touches_only_the_projects_deliveries(service: Service) -> None:
    sessions = service.app.state.sessions
    run = await finished_run(sessions, "http://127.0.0.1:9/hook")
    mine = await enqueued(sessions, run, status="failed")
    response = await service.client.post(
        "/v1/webhook-deliveries/redeliver", headers=service.keys.auth("other")
    )
    assert (response.status_code, response.json()["count"]) == (202, 0)
    assert (await delivery_row(sessions, mine.id)).status == "failed"
