"""Webhook signatures as Standard Webhooks 1.0 defines them: HMAC-SHA256 over
``"<webhook-id>.<webhook-timestamp>.<body>"``, sent as ``webhook-signature: v1,<base64>``, one
space-separated value per secret in use (two while a secret is being rotated). A secret is
``whsec_`` and the base64 of the key's bytes, so any Standard Webhooks library can verify it.

The Thinkloop-* headers of earlier releases (``v1=<hex>`` over ``"<timestamp>.<body>"``, keyed with
the whole secret string) are still sent beside them for one release: they are deprecated, and
their signature does not cover the delivery id."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Sequence

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
SECRET_PREFIX = "whsec_"
TOLERANCE_S = 300.0  # the specification's five minutes either way

# Deprecated (kept for one release beside the standard headers, then removed).
LEGACY_SIGNATURE_HEADER = "Thinkloop-Signature"
LEGACY_TIMESTAMP_HEADER = "Thinkloop-Timestamp"
LEGACY_EVENT_HEADER = "Thinkloop-Event"
LEGACY_DELIVERY_HEADER = "Thinkloop-Delivery"


def secret_key(secret: str) -> bytes:
    """The HMAC key a secret stands for: the base64-decoded bytes after ``whsec_``. Secrets made before
    the standard form were URL-safe base64 (``-`` and ``_`` for ``+`` and ``/``): they decode the
    same way. A string that is not ``whsec_`` and base64 (an operator's THINKLOOP_WEBHOOK_SECRET, say)
    is keyed with its UTF-8 bytes; its standard form is ``standard_secret(secret)``."""
    if secret.startswith(SECRET_PREFIX):
        encoded = secret[len(SECRET_PREFIX) :].replace("-", "+").replace("_", "/").rstrip("=")
        try:
            key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except (binascii.Error, ValueError):
            key = b""
        if key:
            return key
    return secret.encode("utf-8")


def standard_secret(secret: str) -> str:
    """The secret as a Standard Webhooks library wants it (``whsec_`` and standard base64): the same
    key, whatever form the secret was stored in."""
    return SECRET_PREFIX + base64.b64encode(secret_key(secret)).decode("ascii")


def sign(secret: str, msg_id: str, timestamp: str, body: bytes) -> str:
    """One ``webhook-signature`` value: ``v1,`` and the base64 HMAC-SHA256 of
    ``"<msg_id>.<timestamp>.<body>"`` keyed with the secret's bytes."""
    signed = msg_id.encode("utf-8") + b"." + timestamp.encode("ascii") + b"." + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signature_header(secrets_in_use: Sequence[str], msg_id: str, timestamp: str, body: bytes) -> str:
    """The ``webhook-signature`` header: one value per secret in use, space-separated (the current
    secret first, then, during a rotation, the previous one)."""
    return " ".join(sign(secret, msg_id, timestamp, body) for secret in secrets_in_use)


def verify(
    secret: str,
    msg_id: str,
    timestamp: str,
    body: bytes,
    header: str,
    tolerance_s: float = TOLERANCE_S,
    now: float | None = None,
) -> bool:
    """Whether one of the header's ``v1,`` values is the secret's signature of this id, timestamp and
    body, and the timestamp is within ``tolerance_s`` of ``now`` (default: this machine's clock)."""
    if not (timestamp.isascii() and timestamp.isdigit()):
        return False
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance_s:
        return False
    expected = sign(secret, msg_id, timestamp, body).encode("ascii")
    # bytes: compare_digest refuses str that is not ASCII, and a header may hold anything
    return any(hmac.compare_digest(expected, offered.encode("utf-8")) for offered in header.split())


def legacy_sign(secret: str, timestamp: str, body: bytes) -> str:
    """The deprecated Thinkloop-Signature value: ``v1=<hex HMAC-SHA256 of "<timestamp>.<body>">``
    keyed with the whole secret string (UTF-8). It does not cover the delivery id."""
    digest = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return f"v1={digest.hexdigest()}"


def _as_shown(secrets_in_use: Sequence[str]) -> list[str]:
    """Each secret as stored and, for one stored in the URL-safe form of earlier releases, as the API
    now shows it (the standard form): the deprecated signature is keyed with the whole string, and a
    receiver may hold either."""
    shown: list[str] = []
    for secret in secrets_in_use:
        standard = standard_secret(secret) if secret.startswith(SECRET_PREFIX) else secret
        shown += [secret] if standard == secret else [secret, standard]
    return shown


def signed_headers(
    secrets_in_use: Sequence[str], msg_id: str, event: str, timestamp: str, body: bytes
) -> dict[str, str]:
    """Every header a delivery carries besides Content-Type: the standard three, and the deprecated
    Thinkloop-* ones (signed with every secret in use too)."""
    legacy = " ".join(legacy_sign(shown, timestamp, body) for shown in _as_shown(secrets_in_use))
    return {
        ID_HEADER: msg_id,
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: signature_header(secrets_in_use, msg_id, timestamp, body),
        LEGACY_EVENT_HEADER: event,
        LEGACY_DELIVERY_HEADER: msg_id,
        LEGACY_TIMESTAMP_HEADER: timestamp,
        LEGACY_SIGNATURE_HEADER: legacy,
    }
