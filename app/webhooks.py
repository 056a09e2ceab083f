"""Signed webhooks: HMAC-SHA256 over "<timestamp>.<body>", retried with exponential backoff."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import ipaddress
import json
import socket
import time
import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import structlog
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

log = structlog.get_logger(__name__)
SIGNATURE_HEADER = "Thinkloop-Signature"
TIMESTAMP_HEADER = "Thinkloop-Timestamp"


class DeliveryFailed(Exception):
    """The receiver did not answer 2xx."""


class WebhookTargetRefused(ValueError):
    """A webhook URL whose host is neither allow-listed nor loopback (server-side request forgery)."""


def _allowed_by_list(host: str, allow: Sequence[str]) -> bool:
    """Exact names, ``*.domain`` suffixes, and IP networks in CIDR form."""
    for entry in allow:
        entry = entry.lower().strip()
        if entry.startswith("*.") and host.endswith(entry[1:]):
            return True
        if host == entry:
            return True
        with contextlib.suppress(ValueError):
            if ipaddress.ip_address(host) in ipaddress.ip_network(entry, strict=False):
                return True
    return False


async def check_target(url: str, allow: Sequence[str]) -> None:
    """Refuse a webhook URL unless its host is allow-listed or every address it resolves to is
    loopback. Link-local (cloud metadata), private and public addresses need the allow-list."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise WebhookTargetRefused("only http(s) URLs with a host can receive webhooks")
    if _allowed_by_list(host, allow):
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, parts.port or 443, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise WebhookTargetRefused(f"the host {host!r} does not resolve") from exc
    addresses = {ipaddress.ip_address(info[4][0]) for info in infos}
    for address in addresses:
        if not address.is_loopback:
            kind = "link-local" if address.is_link_local else "private" if address.is_private else "public"
            raise WebhookTargetRefused(
                f"the host {host!r} resolves to a {kind} address; add it to THINKLOOP_WEBHOOK_ALLOW_HOSTS"
            )


def redact(url: str) -> str:
    """A URL fit for logs: no user, password, query or fragment (they may carry tokens)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return urlunsplit((parts.scheme, f"{host}:{parts.port}" if parts.port else host, parts.path, "", ""))


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
    allow: Sequence[str] = (),
) -> bool:
    """POST the event until a 2xx answer or ``attempts`` run out; True when delivered.

    The target is checked again first: a name may resolve elsewhere now than when it was given.
    """
    try:
        await check_target(url, allow)
    except WebhookTargetRefused as exc:
        log.warning("webhook.refused", url=redact(url), webhook_event=event, reason=str(exc))
        return False
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
        log.warning("webhook.failed", url=redact(url), webhook_event=event, error=str(exc), attempts=attempts)
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
