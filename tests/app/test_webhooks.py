"""Signed webhooks reach a real receiver, and a failed delivery is retried."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign, verify
from tests.app.conftest import PROBLEM, LiveServer, Service

SECRET = "whsec-test"  # as configured by service_settings


def receiver(received: list[dict[str, Any]], fail_first: int) -> Starlette:
    async def hook(request: Request) -> Response:
        body = await request.body()
        received.append({"headers": dict(request.headers), "body": body})
        return Response(status_code=500 if len(received) <= fail_first else 204)

    return Starlette(routes=[Route("/hook", hook, methods=["POST"])])


async def test_signed_webhook_is_retried_after_a_failure(service: Service) -> None:
    received: list[dict[str, Any]] = []
    with LiveServer(receiver(received, fail_first=1)) as hooks:  # type: ignore[arg-type]
        body = {"problem": PROBLEM, "webhook_url": f"{hooks.url}/hook"}
        response = await service.client.post(
            "/v1/runs", json=body, headers=service.keys.auth(), params={"wait": "true"}
        )
        run_id = response.json()["id"]
        for _ in range(100):
            if len(received) >= 2:
                break
            await asyncio.sleep(0.05)
    assert len(received) == 2
    first, second = received
    assert first["headers"]["thinkloop-delivery"] == second["headers"]["thinkloop-delivery"]
    headers, raw = second["headers"], second["body"]
    assert verify(SECRET, headers[TIMESTAMP_HEADER.lower()], raw, headers[SIGNATURE_HEADER.lower()])
    assert not verify(
        "wrong-secret", headers[TIMESTAMP_HEADER.lower()], raw, headers[SIGNATURE_HEADER.lower()]
    )
    payload = json.loads(raw)
    assert (
        payload["run_id"] == run_id and payload["type"] == "run.finished" and payload["outcome"] == "accepted"
    )
    assert headers["thinkloop-event"] == "run.finished"


def test_signature_covers_timestamp_and_body() -> None:
    signature = sign("k", "1700000000", b'{"a":1}')
    assert signature.startswith("v1=") and signature != sign("k", "1700000001", b'{"a":1}')
    assert signature != sign("k", "1700000000", b'{"a":2}')
    assert not verify("k", "1700000000", b'{"a":1}', signature)  # too old
