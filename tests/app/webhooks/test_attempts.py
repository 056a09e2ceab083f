"""Every attempt is counted before its POST: a sender killed in the middle of one leaves it counted,
so a delivery its receiver got twice shows two attempts, and a cut-off last attempt ends it."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta

import httpx
import pytest

from app.models import utcnow
from app.webhooks.outbox import WebhookOutbox
from tests.helpers.webhooks import Receiver, Sessions, delivery_row, enqueued, finished_run, outbox, settings

pytestmark = pytest.mark.both_databases


def _later(seconds: float) -> datetime:
    """A clock past a lapsed lease (instead of waiting it out)."""
    return utcnow() + timedelta(seconds=seconds)


async def _cut_off_mid_post(sender: WebhookOutbox, receiver: Receiver) -> None:
    """Start a round and stop it while its POST is at the receiver, as a killed process would."""
    sending = asyncio.create_task(sender.send_due())
    assert await asyncio.to_thread(receiver.arrived.wait, 60)
    sending.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await sending


async def _hits(receiver: Receiver, count: int) -> None:
    """Wait until the receiver has handled ``count`` requests (the cut-off one finishes on its own)."""
    for _ in range(1200):
        if len(receiver.hits) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the receiver handled {len(receiver.hits)} requests, not {count}")


async def test_a_delivery_received_twice_after_a_sender_was_killed_shows_two_attempts(
    sessions: Sessions,
) -> None:
    receiver = Receiver(gate=True)  # it takes the request and does not answer until the gate opens
    assert receiver.gate is not None
    config = settings()
    with receiver.serve() as hooks:
        delivery = await enqueued(sessions, await finished_run(sessions, f"{hooks.url}/hook"))
        async with outbox(sessions, config, "a") as first:
            await _cut_off_mid_post(first, receiver)
        cut = await delivery_row(sessions, delivery.id)
        assert (cut.status, cut.attempts, cut.lease_owner) == ("pending", 1, "a")  # counted before the POST
        receiver.gate.set()
        lapsed = config.webhook_timeout_s * 3 + 1
        async with httpx.AsyncClient() as http:
            second = WebhookOutbox(sessions, http, config, "b", clock=lambda: _later(lapsed))
            assert await second.send_due() == 1
        await _hits(receiver, 2)
    stored = await delivery_row(sessions, delivery.id)
    assert (stored.status, stored.attempts, stored.lease_owner) == ("delivered", 2, None)
    assert receiver.by_delivery() == {delivery.id: [204, 204]}  # the receiver got it twice


async def test_a_cut_off_last_attempt_fails_the_delivery_instead_of_one_more(sessions: Sessions) -> None:
    receiver = Receiver(gate=True)
    assert receiver.gate is not None
    config = settings(webhook_attempts=1)
    with receiver.serve() as hooks:
        delivery = await enqueued(sessions, await finished_run(sessions, f"{hooks.url}/hook"))
        async with outbox(sessions, config, "a") as first:
            await _cut_off_mid_post(first, receiver)
        receiver.gate.set()
        lapsed = config.webhook_timeout_s * 3 + 1
        async with httpx.AsyncClient() as http:
            second = WebhookOutbox(sessions, http, config, "b", clock=lambda: _later(lapsed))
            assert await second.send_due() == 0
        await _hits(receiver, 1)
    stored = await delivery_row(sessions, delivery.id)
    assert (stored.status, stored.attempts, stored.lease_owner) == ("failed", 1, None)
    assert stored.last_error and "cut off" in stored.last_error
    assert len(receiver.hits) == 1
