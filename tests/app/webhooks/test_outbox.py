"""The webhook outbox: one sender per delivery at a time, retries with backoff, and deliveries that
outlive the process (SIGKILL included)."""

from __future__ import annotations

import asyncio
import signal
from datetime import timedelta
from pathlib import Path

import httpx
import psycopg
import pytest
from sqlalchemy import update
from sqlmodel import col

from agents.simulator import SimulatorServer
from app.db import create_engine, migrate, session_factory, short_session
from app.models import WebhookDelivery, utcnow
from app.settings import Settings
from app.webhooks.outbox import WebhookOutbox, enqueue, retry_delay, retry_schedule
from tests.helpers.processes import server_process, wait_until
from tests.helpers.service import free_port
from tests.helpers.webhooks import (
    SECRET,
    Receiver,
    Sessions,
    delivery_row,
    enqueued,
    finished_run,
    outbox,
    settings,
    wait_for,
)

pytestmark = pytest.mark.both_databases


async def make_due(sessions: Sessions, delivery_id: str) -> None:
    """Let a delivery's backoff end now (instead of waiting it out)."""
    async with short_session(sessions) as session:
        due = utcnow() - timedelta(seconds=1)
        await session.execute(
            update(WebhookDelivery).where(col(WebhookDelivery.id) == delivery_id).values(next_attempt_at=due)
        )


async def test_enqueue_adds_a_pending_delivery_carrying_type_and_run_id(sessions: Sessions) -> None:
    run = await finished_run(sessions, "http://127.0.0.1:9/hook")
    async with short_session(sessions) as session:
        (delivery,) = await enqueue(session, run, "run.failed", {"status": "error", "reason": "boom"})
    stored = await delivery_row(sessions, delivery.id)
    assert (stored.status, stored.attempts, stored.event) == ("pending", 0, "run.failed")
    assert stored.url == "http://127.0.0.1:9/hook" and stored.lease_owner is None
    envelope = {k: stored.payload.pop(k) for k in ("id", "created")}
    assert stored.payload == {
        "type": "run.failed",
        "run_id": run.id,
        "status": "error",
        "reason": "boom",
        "metadata": {},
    }
    assert len(envelope["id"]) == 32 and envelope["created"].endswith("Z")
    silent = await finished_run(sessions, None)
    async with short_session(sessions) as session:
        assert await enqueue(session, silent, "run.finished", {}) == []


async def test_a_delivery_in_flight_is_not_claimed_by_a_second_sender(sessions: Sessions) -> None:
    receiver = Receiver(gate=True)
    assert receiver.gate is not None
    with receiver.serve() as hooks:
        delivery = await enqueued(sessions, await finished_run(sessions, f"{hooks.url}/hook"))
        async with outbox(sessions, settings(), "a") as a, outbox(sessions, settings(), "b") as b:
            sending = asyncio.create_task(a.send_due())
            try:
                assert await asyncio.to_thread(receiver.arrived.wait, 60)  # a's POST is at the receiver
                assert await b.send_due() == 0
                assert (await delivery_row(sessions, delivery.id)).lease_owner == "a"
            finally:
                receiver.gate.set()
            assert await sending == 1
    stored = await delivery_row(sessions, delivery.id)
    assert (stored.status, stored.attempts, stored.lease_owner) == ("delivered", 1, None)
    assert receiver.by_delivery() == {delivery.id: [204]}


async def test_two_senders_at_once_send_each_delivery_once(sessions: Sessions) -> None:
    receiver = Receiver()
    with receiver.serve() as hooks:
        run = await finished_run(sessions, f"{hooks.url}/hook")
        ids = {(await enqueued(sessions, run)).id for _ in range(30)}  # more than one claim's batch
        async with outbox(sessions, settings(), "a") as a, outbox(sessions, settings(), "b") as b:
            while sum(await asyncio.gather(a.send_due(), b.send_due())):
                pass
    assert receiver.by_delivery() == {delivery_id: [204] for delivery_id in ids}


async def test_a_failed_attempt_waits_out_a_doubling_backoff(sessions: Sessions) -> None:
    receiver = Receiver(answers=[500, 502])
    with receiver.serve() as hooks:
        delivery = await enqueued(sessions, await finished_run(sessions, f"{hooks.url}/hook"))
        async with outbox(sessions, settings(webhook_backoff_s=1000), "a") as sender:
            for attempt, delay in ((1, 1000), (2, 2000)):
                before = utcnow()
                assert await sender.send_due() == 1
                after = utcnow()
                stored = await delivery_row(sessions, delivery.id)
                assert (stored.status, stored.attempts, stored.lease_owner) == ("pending", attempt, None)
                wait = timedelta(seconds=delay)
                assert before + wait <= stored.next_attempt_at <= after + wait
                assert await sender.send_due() == 0  # not due before its backoff ends
                await make_due(sessions, delivery.id)
    assert (stored.last_status_code, stored.last_error) == (502, "HTTP 502")
    assert receiver.by_delivery() == {delivery.id: [500, 502]}


def test_the_backoff_grows_by_its_factor_up_to_its_ceiling() -> None:
    config = settings(webhook_backoff_s=1.0, webhook_backoff_max_s=60)
    delays = [retry_delay(config, attempts).total_seconds() for attempts in range(1, 9)]
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60]


def test_the_default_schedule_outlasts_a_day_long_outage_with_jitter_both_ways() -> None:
    config = Settings(_env_file=None)
    schedule = retry_schedule(config)
    assert schedule[:4] == [5, 20, 80, 320] and len(schedule) == config.webhook_attempts - 1
    assert 22 * 3600 <= sum(schedule) <= 30 * 3600  # about a day from the first attempt to the last
    assert sum(schedule[:5]) >= 10 * 60  # a receiver down for ten minutes still gets a later attempt
    low = retry_delay(config, 5, lambda: 0.0).total_seconds()
    high = retry_delay(config, 5, lambda: 0.999999).total_seconds()
    assert low == pytest.approx(1280 * 0.8) and high == pytest.approx(1280 * 1.2, rel=1e-5)
    assert retry_delay(config, 5, lambda: 0.5).total_seconds() == 1280


async def test_a_failing_receiver_is_retried_in_the_background_until_delivered(sessions: Sessions) -> None:
    receiver = Receiver(answers=[500, 503])
    with receiver.serve() as hooks:
        delivery = await enqueued(sessions, await finished_run(sessions, f"{hooks.url}/hook"))
        async with outbox(sessions, settings(), "a") as sender, sender.sending():
            stored = await wait_for(sessions, delivery.id, "delivered")
    assert (stored.attempts, stored.last_status_code, stored.last_error) == (3, 204, None)
    assert stored.delivered_at is not None and stored.lease_owner is None
    assert receiver.by_delivery() == {delivery.id: [500, 503, 204]}


async def test_exhausted_attempts_leave_the_delivery_failed_with_the_last_error(sessions: Sessions) -> None:
    receiver = Receiver(then=503)
    with receiver.serve() as hooks:
        delivery = await enqueued(sessions, await finished_run(sessions, f"{hooks.url}/hook"))
        config = settings(webhook_attempts=3, webhook_backoff_s=0)  # every retry due at once
        async with outbox(sessions, config, "a") as sender:
            assert [await sender.send_due() for _ in range(4)] == [1, 1, 1, 0]
    stored = await delivery_row(sessions, delivery.id)
    assert (stored.status, stored.attempts, stored.last_status_code) == ("failed", 3, 503)
    assert stored.last_error == "HTTP 503" and stored.delivered_at is None
    assert receiver.by_delivery() == {delivery.id: [503, 503, 503]}


async def test_an_unreachable_receiver_is_recorded_without_the_urls_secrets(sessions: Sessions) -> None:
    url = f"http://127.0.0.1:{free_port()}/hook?token=URL-SECRET-7"  # nothing listens there
    delivery = await enqueued(sessions, await finished_run(sessions, url))
    async with outbox(sessions, settings(webhook_attempts=1), "a") as sender:
        assert await sender.send_due() == 1
    stored = await delivery_row(sessions, delivery.id)
    assert (stored.status, stored.attempts, stored.last_status_code) == ("failed", 1, None)
    assert stored.last_error and stored.last_error.startswith("ConnectError")
    assert "URL-SECRET-7" not in stored.last_error


async def test_a_refused_target_fails_at_once_and_nothing_is_sent(sessions: Sessions) -> None:
    delivery = await enqueued(sessions, await finished_run(sessions, "http://169.254.169.254/hook"))
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(204)

    transport = httpx.MockTransport(answer)
    async with httpx.AsyncClient(transport=transport) as http:
        assert await WebhookOutbox(sessions, http, settings(), "a").send_due() == 1
    stored = await delivery_row(sessions, delivery.id)
    assert (stored.status, stored.attempts, stored.last_status_code) == ("failed", 1, None)
    assert (
        stored.last_error and stored.last_error.startswith("refused: ") and "link-local" in stored.last_error
    )
    assert sent == []


async def test_a_lapsed_lease_is_taken_over_and_a_live_one_is_not(sessions: Sessions) -> None:
    receiver, now = Receiver(), utcnow()
    with receiver.serve() as hooks:
        run = await finished_run(sessions, f"{hooks.url}/hook")
        dead = await enqueued(sessions, run, lease_owner="dead:1", lease_until=now - timedelta(seconds=1))
        await enqueued(sessions, run, lease_owner="busy:2", lease_until=now + timedelta(hours=1))
        async with outbox(sessions, settings(), "a") as sender:
            assert await sender.send_due() == 1
    assert receiver.by_delivery() == {dead.id: [204]}


async def test_wake_sends_at_once_between_polls(sessions: Sessions) -> None:
    receiver = Receiver()
    with receiver.serve() as hooks:
        run = await finished_run(sessions, f"{hooks.url}/hook")
        first = await enqueued(sessions, run)
        async with outbox(sessions, settings(webhook_poll_s=600), "a") as sender, sender.sending():
            await wait_for(sessions, first.id, "delivered")  # the round at start
            second = await enqueued(sessions, run)
            sender.wake()  # the next poll is ten minutes away
            await wait_for(sessions, second.id, "delivered")
    assert receiver.by_delivery() == {first.id: [204], second.id: [204]}


async def test_a_send_cut_short_at_exit_is_sent_by_another_process_later(sessions: Sessions) -> None:
    receiver = Receiver(gate=True)
    assert receiver.gate is not None
    config = settings(webhook_timeout_s=0.5)  # the lease: 1.5 s
    with receiver.serve() as hooks:
        delivery = await enqueued(sessions, await finished_run(sessions, f"{hooks.url}/hook"))
        try:
            async with outbox(sessions, config, "a") as a, a.sending():
                assert await asyncio.to_thread(receiver.arrived.wait, 60)
        finally:
            receiver.gate.set()
        assert (await delivery_row(sessions, delivery.id)).status == "pending"
        async with outbox(sessions, config, "b") as b, b.sending():
            stored = await wait_for(sessions, delivery.id, "delivered")
    assert stored.attempts >= 1 and stored.lease_owner is None


def _delivery_state(database_url: str, delivery_id: str) -> tuple[str, int]:
    with psycopg.connect(database_url.replace("+psycopg", "")) as connection:
        row = connection.execute(
            "SELECT status, attempts FROM webhook_deliveries WHERE id = %s", (delivery_id,)
        ).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


async def _pending_delivery(database_url: str, url: str) -> WebhookDelivery:
    await migrate(database_url)
    engine = create_engine(database_url)
    try:
        sessions = session_factory(engine)
        return await enqueued(sessions, await finished_run(sessions, url))
    finally:
        await engine.dispose()


@pytest.mark.postgres
@pytest.mark.slow  # a process killed with SIGKILL
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_a_delivery_that_failed_survives_sigkill_and_is_delivered_exactly_once(
    database_url: str, simulator_server: SimulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = {"SECRET": SECRET, "BACKOFF_S": "0.5", "BACKOFF_FACTOR": "2", "POLL_S": "0.2", "TIMEOUT_S": "2"}
    fast |= {"ATTEMPTS": "20", "BACKOFF_JITTER": "0"}
    for name, value in fast.items():
        monkeypatch.setenv(f"THINKLOOP_WEBHOOK_{name}", value)  # the server processes inherit these
    receiver = Receiver(then=500)  # fails until the first server is dead
    port, log = free_port(), tmp_path / "server.log"
    with receiver.serve() as hooks:
        delivery = asyncio.run(_pending_delivery(database_url, f"{hooks.url}/hook"))
        with server_process(database_url, simulator_server, port, log) as first:
            wait_until(lambda: _delivery_state(database_url, delivery.id)[1] >= 1, 120, "never attempted")
            first.send_signal(signal.SIGKILL)  # in its backoff (or mid-POST): no chance to clean up
            first.wait(timeout=10)
        assert _delivery_state(database_url, delivery.id)[0] == "pending"
        receiver.then = 204
        with server_process(database_url, simulator_server, port, log):
            wait_until(
                lambda: _delivery_state(database_url, delivery.id)[0] == "delivered", 120, "not delivered"
            )
    answers = receiver.by_delivery()
    assert list(answers) == [delivery.id]  # every POST carried the one delivery id
    assert answers[delivery.id][0] == 500 and answers[delivery.id].count(204) == 1
    assert answers[delivery.id][-1] == 204
