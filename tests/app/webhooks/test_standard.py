"""Standard Webhooks 1.0: the specification's published test vector, deliveries that its reference
library verifies, the delivery id inside the signature, and two signatures while a secret rotates."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import update
from sqlmodel import col
from standardwebhooks import Webhook
from standardwebhooks import WebhookVerificationError as StandardError

from app.db import short_session
from app.models import DEFAULT_PROJECT, Project, WebhookEndpoint, utcnow
from app.webhooks import signing as server
from app.webhooks.outbox import WebhookOutbox
from tests.helpers.service import Service
from tests.helpers.webhooks import Hit, Receiver, Sessions, enqueued, finished_run, outbox, settings, wait_for
from thinkloop_client.webhooks import WebhookVerificationError, verify

pytestmark = pytest.mark.both_databases

# The test vector of the specification's reference libraries (their "sign function" tests).
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TIMESTAMP = "1614265330"
VECTOR_BODY = b'{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
ENDPOINTS = "/v1/webhook-endpoints"
OLD_FORM = "whsec_" + base64.urlsafe_b64encode(b"\xfb\xff" * 12).decode()  # as earlier releases made them


def _vector_headers(signature: str = VECTOR_SIGNATURE, msg_id: str = VECTOR_ID) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": VECTOR_TIMESTAMP, "webhook-signature": signature}


def test_the_specifications_test_vector_is_what_we_sign_and_what_we_accept() -> None:
    at = int(VECTOR_TIMESTAMP)
    assert server.sign(VECTOR_SECRET, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY) == VECTOR_SIGNATURE
    assert server.verify(VECTOR_SECRET, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY, VECTOR_SIGNATURE, now=at)
    assert verify(VECTOR_SECRET, _vector_headers(), VECTOR_BODY, now=at) == {"test": 2432232314}
    # among other values, as a rotation sends it; and not under another id
    several = f"v1,{'A' * 43}= {VECTOR_SIGNATURE}"
    assert verify(VECTOR_SECRET, _vector_headers(several), VECTOR_BODY, now=at) == {"test": 2432232314}
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify(VECTOR_SECRET, _vector_headers(msg_id="msg_other"), VECTOR_BODY, now=at)
    assert not server.verify(
        VECTOR_SECRET, "msg_other", VECTOR_TIMESTAMP, VECTOR_BODY, VECTOR_SIGNATURE, now=at
    )


def test_a_secret_made_here_is_the_standard_form_and_old_url_safe_ones_keep_their_key() -> None:
    from app.models import new_webhook_secret

    made = new_webhook_secret()
    key = base64.b64decode(made.removeprefix("whsec_"), validate=True)
    assert made.startswith("whsec_") and len(key) == 24 and server.standard_secret(made) == made
    assert "-" in OLD_FORM and "_" in OLD_FORM.removeprefix("whsec_")
    assert (
        server.secret_key(OLD_FORM) == b"\xfb\xff" * 12 == server.secret_key(server.standard_secret(OLD_FORM))
    )


async def _endpoint(service: Service, url: str) -> dict[str, str]:
    made = await service.client.post(ENDPOINTS, json={"url": url}, headers=service.keys.auth())
    assert made.status_code == 201, made.text
    return dict(made.json())


async def _ping(service: Service, endpoint_id: str) -> None:
    sent = await service.client.post(f"{ENDPOINTS}/{endpoint_id}/test", headers=service.keys.auth())
    assert sent.status_code == 202, sent.text
    await wait_for(service.app.state.sessions, sent.json()["id"], "delivered")


async def test_a_delivery_verifies_with_the_reference_library_and_a_resend_under_a_new_id_does_not(
    service: Service,
) -> None:
    receiver = Receiver()
    with receiver.serve() as hooks:
        endpoint = await _endpoint(service, f"{hooks.url}/hook")
        await _ping(service, endpoint["id"])
    (hit,) = receiver.hits
    event = Webhook(endpoint["secret"]).verify(hit.body, hit.headers)
    assert event == verify(endpoint["secret"], hit.headers, hit.body) and event["type"] == "ping"
    # a capture sent again under a fresh delivery id (so that a receiver deduplicating on it takes it)
    replayed = hit.headers | {"webhook-id": "d" * 32, "thinkloop-delivery": "d" * 32}
    with pytest.raises(WebhookVerificationError, match="signature"):
        verify(endpoint["secret"], replayed, hit.body)
    with pytest.raises(StandardError):
        Webhook(endpoint["secret"]).verify(hit.body, replayed)


def _legacy_signed(hit: Hit, secret: str) -> bool:
    signed = hit.headers["thinkloop-timestamp"].encode() + b"." + hit.body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256)  # keyed with the whole string
    return f"v1={digest.hexdigest()}" in hit.headers["thinkloop-signature"].split()


async def test_the_deprecated_headers_are_still_sent_for_one_release(service: Service) -> None:
    receiver = Receiver()
    with receiver.serve() as hooks:
        endpoint = await _endpoint(service, f"{hooks.url}/hook")
        await _ping(service, endpoint["id"])
    (hit,) = receiver.hits
    assert hit.headers["thinkloop-delivery"] == hit.headers["webhook-id"]
    assert hit.headers["thinkloop-timestamp"] == hit.headers["webhook-timestamp"]
    assert hit.headers["thinkloop-event"] == json.loads(hit.body)["type"] == "ping"
    assert _legacy_signed(hit, endpoint["secret"]) and not _legacy_signed(hit, "whsec-other")


async def test_a_rotated_endpoint_secret_signs_beside_the_new_one_until_its_window_ends(
    service: Service,
) -> None:
    receiver = Receiver()
    with receiver.serve() as hooks:
        endpoint = await _endpoint(service, f"{hooks.url}/hook")
        path = f"{ENDPOINTS}/{endpoint['id']}/rotate-secret"
        assert (await service.client.post(path, headers=service.keys.auth("other"))).status_code == 404
        rotated = await service.client.post(path, headers=service.keys.auth())
        assert rotated.status_code == 200, rotated.text
        new = rotated.json()
        assert new["secret"] != endpoint["secret"] and new["previous_until"] is not None
        await _ping(service, endpoint["id"])
        ended = await service.client.post(path, params={"keep_previous_s": 0}, headers=service.keys.auth())
        assert ended.status_code == 200 and ended.json()["previous_until"] is None
        await _ping(service, endpoint["id"])
    during, after = receiver.hits
    assert len(during.headers["webhook-signature"].split()) == 2
    for secret in (endpoint["secret"], new["secret"]):  # each verifies with its own secret
        assert verify(secret, during.headers, during.body)["type"] == "ping"
        assert Webhook(secret).verify(during.body, during.headers)["type"] == "ping"
    assert len(after.headers["webhook-signature"].split()) == 1
    assert verify(ended.json()["secret"], after.headers, after.body)["type"] == "ping"
    for stale in (endpoint["secret"], new["secret"]):
        with pytest.raises(WebhookVerificationError):
            verify(stale, after.headers, after.body)


async def test_a_secret_stored_by_an_earlier_release_verifies_as_stored_and_as_now_shown(
    service: Service,
) -> None:
    standard = server.standard_secret(OLD_FORM)
    assert standard != OLD_FORM and "-" not in standard
    receiver = Receiver()
    with receiver.serve() as hooks:
        endpoint = await _endpoint(service, f"{hooks.url}/hook")
        async with short_session(service.app.state.sessions) as session:
            mine = col(WebhookEndpoint.id) == endpoint["id"]
            await session.execute(update(WebhookEndpoint).where(mine).values(secret=OLD_FORM))
            default = col(Project.id) == DEFAULT_PROJECT
            await session.execute(update(Project).where(default).values(webhook_secret=OLD_FORM))
        await _ping(service, endpoint["id"])
    (hit,) = receiver.hits
    assert verify(OLD_FORM, hit.headers, hit.body) == verify(standard, hit.headers, hit.body)
    assert Webhook(standard).verify(hit.body, hit.headers)["type"] == "ping"  # the form libraries take
    assert _legacy_signed(hit, OLD_FORM) and _legacy_signed(hit, standard)  # a receiver may hold either
    shown = await service.client.get(
        f"/v1/projects/{DEFAULT_PROJECT}/webhook-secret", headers=service.keys.auth("admin")
    )
    assert shown.json()["secret"] == standard


async def test_an_instance_secret_signs_beside_its_previous_one_and_a_lapsed_rotation_does_not(
    sessions: Sessions,
) -> None:
    old, new = server.standard_secret("an old key"), server.standard_secret("a new key")
    receiver = Receiver()
    with receiver.serve() as hooks:
        run = await finished_run(sessions, f"{hooks.url}/hook")
        await enqueued(sessions, run)
        config = settings(webhook_secret=new, webhook_previous_secret=old)
        async with outbox(sessions, config, "a") as sender:
            assert await sender.send_due() == 1
        async with short_session(sessions) as session:
            endpoint = WebhookEndpoint(
                project_id=DEFAULT_PROJECT,
                url=f"{hooks.url}/hook",
                secret=new,
                previous_secret=old,
                previous_secret_until=utcnow() + timedelta(hours=1),
            )
            session.add(endpoint)
        await enqueued(sessions, await finished_run(sessions, None))  # to the project's endpoint
        later = utcnow() + timedelta(hours=2)  # the rotation's window has ended
        async with httpx.AsyncClient() as http:
            assert await WebhookOutbox(sessions, http, settings(), "b", clock=lambda: later).send_due() == 1
    both, lapsed = receiver.hits
    assert verify(old, both.headers, both.body) == verify(new, both.headers, both.body)
    assert len(lapsed.headers["webhook-signature"].split()) == 1
    signed_at = int(lapsed.headers["webhook-timestamp"])
    assert verify(new, lapsed.headers, lapsed.body, now=signed_at)["type"] == "run.finished"
    with pytest.raises(WebhookVerificationError):
        verify(old, lapsed.headers, lapsed.body, now=signed_at)
