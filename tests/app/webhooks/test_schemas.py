"""The OpenAPI document's `webhooks` section says what is really sent: a stored payload of each
event type (run.finished, with and without a failure; run.failed; ping) fits its schema, and
carries no field the schema does not name."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlmodel import col, select

from agents.simulator import Rule, SimulatorServer
from app.models import WebhookDelivery
from tests.helpers.problems import PROBLEM
from tests.helpers.reviewing import make_key
from tests.helpers.schemas import violations
from tests.helpers.service import Service


async def stored_payloads(service: Service, event: str, within_s: float = 30) -> list[dict[str, Any]]:
    """The payloads of the deliveries of ``event`` stored so far (polled until there is one)."""
    query = select(WebhookDelivery).where(col(WebhookDelivery.event) == event)
    for _ in range(int(within_s / 0.05)):
        async with service.app.state.sessions() as session:
            rows = (await session.execute(query)).scalars().all()
        if rows:
            return [dict(row.payload) for row in rows]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {event} delivery was stored")


def webhook_schema(spec: dict[str, Any], event: str) -> dict[str, Any]:
    """The request body schema the OpenAPI document gives the webhook ``event``."""
    body: dict[str, Any] = spec["webhooks"][event]["post"]["requestBody"]["content"]["application/json"]
    return body["schema"]


async def test_every_stored_event_fits_its_openapi_webhook_schema(
    service: Service, simulator_server: SimulatorServer, database_url: str
) -> None:
    client, auth = service.client, service.keys.auth()
    # A receiver nobody listens on: the payloads are stored before any attempt, whatever it answers.
    endpoint = await client.post(
        "/v1/webhook-endpoints", json={"url": "http://127.0.0.1:9/hook"}, headers=auth
    )
    assert endpoint.status_code == 201, endpoint.text
    assert (
        await client.post(f"/v1/webhook-endpoints/{endpoint.json()['id']}/test", headers=auth)
    ).status_code == 202
    accepted = await client.post("/v1/runs", json={"problem": PROBLEM}, params={"wait": "true"}, headers=auth)
    assert accepted.json()["status"] == "screened"  # the offline panel screens
    # Round 1 fails, then the model under test's endpoint answers 503: an error, with its failure.
    rules = [Rule(role="^Judge", score=40), Rule(role="^Reviser", status=503)]
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"rules": rules}))
    options = {"judge_model": "sim", "model": "sim"}
    errored = await client.post(
        "/v1/runs", json={"problem": PROBLEM, "options": options}, params={"wait": "true"}, headers=auth
    )
    assert errored.json()["status"] == "error"
    simulator_server.state.configure(
        simulator_server.state.config.model_copy(update={"rules": [], "latency_s": 2.0})
    )
    try:
        running = await client.post("/v1/runs", json={"problem": PROBLEM, "options": options}, headers=auth)
        cancelled = await client.post(f"/v1/runs/{running.json()['id']}/cancel", headers=auth)
        assert cancelled.status_code == 200, cancelled.text
        failed = await stored_payloads(service, "run.failed")
    finally:
        simulator_server.state.configure(simulator_server.state.config.model_copy(update={"latency_s": 0.0}))
    # a teacher's review of the screened run: review.requested, then review.decided
    asked = await client.post(f"/v1/runs/{accepted.json()['id']}/review-requests", headers=auth)
    assert asked.status_code == 201, asked.text
    teacher, _ = await make_key(database_url, "ms-okafor", ["review"])
    decided = await client.post(
        f"/v1/reviews/{asked.json()['id']}/decision",
        json={"decision": "flawed", "flaws": [{"type": "false_proportionality", "evidence": "scaled"}]},
        headers={"Authorization": f"Bearer {teacher}"},
    )
    assert decided.status_code == 201, decided.text
    spec = (await client.get("/openapi.json")).json()
    assert set(spec["webhooks"]) == {
        "run.finished",
        "run.failed",
        "review.requested",
        "review.decided",
        "ping",
    }
    finished = await stored_payloads(service, "run.finished")
    assert {payload["status"] for payload in finished} == {"screened", "error"}
    # An error run carries no score: its metrics and quality are null, never false or 0.
    errors = [payload for payload in finished if payload["status"] == "error"]
    assert errors and all(p["metrics"] is None and p["final_quality"] is None for p in errors)
    assert all(p["rounds_to_pass"] is None and p["avg_quality_final"] is None for p in errors)
    assert any(payload["failure"] for payload in finished)  # the error's cause, as the schema says
    for event, payloads in (
        ("run.finished", finished),
        ("run.failed", failed),
        ("ping", await stored_payloads(service, "ping")),
        ("review.requested", await stored_payloads(service, "review.requested")),
        ("review.decided", await stored_payloads(service, "review.decided")),
    ):
        for payload in payloads:
            assert violations(payload, webhook_schema(spec, event), spec) == [], (event, payload)


def test_the_check_catches_a_field_the_schema_does_not_name() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert violations({"a": 1}, schema, {}) == []
    assert violations({"a": 1, "b": 2}, schema, {}) == ["$: b is not in the schema"]
    assert violations({"a": True}, schema, {}) == ["$.a: True is not integer"]
    assert violations({}, schema, {}) == ["$: a is missing"]
