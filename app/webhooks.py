"""Signed webhooks: HMAC-SHA256 over "<timestamp>.<body>", retried with exponential backoff."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from typing import Any

import httpx
import structlog
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

log = structlog.get_logger(__name__)
SIGNATURE_HEADER = "Thinkloop-Signature"
TIMESTAMP_HEADER = "Thinkloop-Timestamp"


class DeliveryFailed(Exception):
    """The receiver did not answer 2xx."""


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header value: ``v1=<hex HMAC-SHA256 of "<timestamp>.<body>">``."""
    digest = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return f"v1={digest.hexdigest()}"


def verify(secret: str, timestamp: str, body: bytes, signature: str, tolerance_s: float = 300.0) -> bool:
    """Check a signature and that the timestamp is recent (receivers use this)."""
    if abs(time.time() - float(timestamp)) > tolerance_s:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


async def deliver(
    client: httpx.AsyncClient,
    url: str,
    event: str,
    payload: dict[str, Any],
    secret: str | None,
    *,
    attempts: int,
    backoff_s: float,
) -> bool:
    """POST the event until a 2xx answer or ``attempts`` run out; True when delivered."""
    body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    delivery = uuid.uuid4().hex
    try:
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=wait_exponential(multiplier=backoff_s, max=backoff_s * 60),
            retry=retry_if_exception_type((httpx.HTTPError, DeliveryFailed)),
            reraise=True,
        ):
            with attempt:
                await _post(client, url, event, body, secret, delivery)
    except (httpx.HTTPError, DeliveryFailed) as exc:
        log.warning("webhook.failed", url=url, webhook_event=event, error=str(exc), attempts=attempts)
        return False
    return True


async def _post(
    client: httpx.AsyncClient, url: str, event: str, body: bytes, secret: str | None, delivery: str
) -> None:
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "Thinkloop-Event": event,
        "Thinkloop-Delivery": delivery,
        TIMESTAMP_HEADER: timestamp,
    }
    if secret:
        headers[SIGNATURE_HEADER] = sign(secret, timestamp, body)
    response = await client.post(url, content=body, headers=headers)
    if response.status_code >= 300:
        raise DeliveryFailed(f"HTTP {response.status_code}")
