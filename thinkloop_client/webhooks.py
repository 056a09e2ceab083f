"""Verify a thinkloop webhook at the receiver (standard library only), as Standard Webhooks 1.0
defines it: any Standard Webhooks library checks the same headers with the same secret.

    from thinkloop_client.webhooks import WebhookVerificationError, verify

    def receive(headers, body: bytes):          # in your web framework's handler
        try:
            event = verify("whsec_…", headers, body)
        except WebhookVerificationError:
            return 400                           # not from thinkloop, altered, replayed or too old
        if already_seen(headers["webhook-id"]):  # signed: a resend under a new id fails verify()
            return 204                           # at-least-once: a repeat of one you have
        handle(event)                            # a dict: type, id, run_id, status, metadata, …
        return 204

The secret is the whole string as thinkloop shows it, ``whsec_`` included: an endpoint's secret
(from POST /v1/webhook-endpoints) or the project's (GET /v1/projects/{id}/webhook-secret).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Iterable
from typing import Any, Protocol

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
SECRET_PREFIX = "whsec_"
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


def secret_key(secret: str) -> bytes:
    """The HMAC key of a secret: the base64 after ``whsec_`` (URL-safe base64, as in secrets made by
    earlier releases, decodes too); any other string is keyed with its UTF-8 bytes."""
    if secret.startswith(SECRET_PREFIX):
        encoded = secret[len(SECRET_PREFIX) :].replace("-", "+").replace("_", "/").rstrip("=")
        try:
            key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except (binascii.Error, ValueError):
            key = b""
        if key:
            return key
    return secret.encode("utf-8")


def signature(secret: str, msg_id: str, timestamp: str, body: bytes) -> str:
    """The webhook-signature value of ``body`` sent as ``msg_id`` at ``timestamp``: ``v1,`` and the
    base64 HMAC-SHA256, keyed with the secret's bytes, of ``"<msg_id>.<timestamp>.<body>"``."""
    signed = msg_id.encode("utf-8") + b"." + timestamp.encode("ascii") + b"." + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def _check_time(timestamp: str, tolerance_s: float, now: float | None) -> None:
    if not timestamp.isascii() or not timestamp.isdigit():
        raise WebhookVerificationError("the timestamp is not a whole number of seconds")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance_s:
        raise WebhookVerificationError(
            f"the timestamp is {current - int(timestamp):+.0f} s from now (more than {tolerance_s:g} s)"
        )


def verify(
    secret: str,
    headers: Headers,
    body: bytes | str,
    *,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> dict[str, Any]:
    """The event (the JSON body as a dict) if ``body`` was signed with ``secret`` under its
    webhook-id at a webhook-timestamp within ``tolerance_s`` seconds of ``now`` (default: this
    machine's clock); WebhookVerificationError otherwise. Pass the body exactly as received, before
    any JSON parsing. The webhook-signature header may carry several space-separated ``v1,…`` values
    (two while a secret is being rotated): one match is enough."""
    if not isinstance(secret, str) or not secret:
        raise WebhookVerificationError("no secret given")
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    msg_id = _header(headers, ID_HEADER).strip()
    timestamp = _header(headers, TIMESTAMP_HEADER).strip()
    _check_time(timestamp, tolerance_s, now)
    expected = signature(secret, msg_id, timestamp, raw).encode("ascii")
    offered = _header(headers, SIGNATURE_HEADER).split()
    if not any(hmac.compare_digest(expected, candidate.encode("utf-8")) for candidate in offered):
        raise WebhookVerificationError("the signature does not match (another secret, an altered body or id)")
    try:
        event = json.loads(raw)
    except ValueError as exc:
        raise WebhookVerificationError("the body is not JSON") from exc
    if not isinstance(event, dict):
        raise WebhookVerificationError("the body is not a JSON object")
    return event
