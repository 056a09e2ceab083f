"""Verify a thinkloop webhook at the receiver (standard library only).

    from thinkloop_client.webhooks import WebhookVerificationError, verify

    def receive(headers, body: bytes):          # in your web framework's handler
        try:
            event = verify("whsec_…", headers, body)
        except WebhookVerificationError:
            return 400                           # not from thinkloop, altered, or too old
        if already_seen(headers["Thinkloop-Delivery"]):
            return 204                           # at-least-once: a repeat of one you have
        handle(event)                            # a dict: type, id, run_id, status, metadata, …
        return 204

The key is the whole secret as thinkloop shows it, ``whsec_`` included: an endpoint's secret (from
POST /v1/webhook-endpoints) or the project's (GET /v1/projects/{id}/webhook-secret).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterable
from typing import Any, Protocol

SIGNATURE_HEADER = "Thinkloop-Signature"
TIMESTAMP_HEADER = "Thinkloop-Timestamp"
DELIVERY_HEADER = "Thinkloop-Delivery"
EVENT_HEADER = "Thinkloop-Event"
DEFAULT_TOLERANCE_S = 300.0


class Headers(Protocol):
    """Request headers: a dict, or any framework's header object with ``items()`` (Starlette's,
    Flask's, ``http.server``'s)."""

    def items(self) -> Iterable[tuple[str, Any]]: ...


class WebhookVerificationError(ValueError):
    """The request is not a webhook signed with this secret within the tolerance."""


def _header(headers: Headers, name: str) -> str:
    """A header by name, in any case (works with dicts and with frameworks' header mappings)."""
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return str(value)
    raise WebhookVerificationError(f"the {name} header is missing")


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """The Thinkloop-Signature value for ``body`` sent at ``timestamp``: ``v1=`` and the hex
    HMAC-SHA256, keyed with the whole secret (UTF-8), of ``"<timestamp>.<body>"``."""
    digest = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return f"v1={digest.hexdigest()}"


def verify(
    secret: str,
    headers: Headers,
    body: bytes | str,
    *,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> dict[str, Any]:
    """The event (the JSON body as a dict) if ``body`` was signed with ``secret`` at a time within
    ``tolerance_s`` seconds of ``now`` (default: this machine's clock); WebhookVerificationError
    otherwise. Pass the body exactly as received, before any JSON parsing. The signature header may
    carry several space-separated ``v1=…`` values (while a secret is being rotated): one match is
    enough."""
    if not isinstance(secret, str) or not secret:
        raise WebhookVerificationError("no secret given")
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    timestamp = _header(headers, TIMESTAMP_HEADER).strip()
    if not timestamp.isascii() or not timestamp.isdigit():
        raise WebhookVerificationError("the timestamp is not a whole number of seconds")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance_s:
        raise WebhookVerificationError(
            f"the timestamp is {current - int(timestamp):+.0f} s from now (more than {tolerance_s:g} s)"
        )
    expected = signature(secret, timestamp, raw)
    offered = _header(headers, SIGNATURE_HEADER).split()
    if not any(hmac.compare_digest(expected, candidate) for candidate in offered):
        raise WebhookVerificationError("the signature does not match (another secret, or an altered body)")
    try:
        event = json.loads(raw)
    except ValueError as exc:
        raise WebhookVerificationError("the body is not JSON") from exc
    if not isinstance(event, dict):
        raise WebhookVerificationError("the body is not a JSON object")
    return event
