"""Webhooks: a receiver on loopback, deliveries made and read back, a sender with fast settings."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.db import short_session
from app.models import ProblemRow, Run, WebhookDelivery, new_id, utcnow
from app.settings import Settings
from app.webhooks.outbox import WebhookOutbox, enqueue
from tests.helpers.service import LiveServer

SECRET = "whsec-test"  # as configured by service_settings


Sessions = async_sessionmaker[AsyncSession]


@dataclass
class Hit:
    """One POST the receiver got, and what it answered."""

    headers: dict[str, str]
    body: bytes
    status: int

    @property
    def delivery(self) -> str:
        """The webhook-id header: the delivery's id."""
        return self.headers["webhook-id"]


class Receiver:
    """A webhook receiver on loopback: answers ``answers`` in turn, then ``then`` (changeable).

    With ``gate`` set, each request waits for ``gate.set()`` after setting ``arrived``.
    """

    def __init__(self, answers: Iterable[int] = (), then: int = 204, gate: bool = False) -> None:
        self.answers, self.then = list(answers), then
        self.hits: list[Hit] = []
        self.arrived, self.gate = threading.Event(), None if not gate else threading.Event()

    async def hook(self, request: Request) -> Response:
        body = await request.body()
        self.arrived.set()
        if self.gate is not None:
            await asyncio.to_thread(self.gate.wait, 60)
        status = self.answers.pop(0) if self.answers else self.then
        self.hits.append(Hit(dict(request.headers), body, status))
        return Response(status_code=status)

    def serve(self) -> LiveServer:
        """The receiver on a free loopback port, at ``<url>/hook``."""
        return LiveServer(Starlette(routes=[Route("/hook", self.hook, methods=["POST"])]))  # type: ignore[arg-type]

    def by_delivery(self) -> dict[str, list[int]]:
        """Statuses answered, by delivery id."""
        seen: dict[str, list[int]] = {}
        for hit in self.hits:
            seen.setdefault(hit.delivery, []).append(hit.status)
        return seen


async def finished_run(sessions: Sessions, webhook_url: str | None) -> Run:
    """A run that ended (accepted), as the executor leaves it, without executing anything."""
    async with short_session(sessions) as session:
        problem = ProblemRow(content_hash=new_id(), question="q", solution="s")
        session.add(problem)
        await session.flush()
        run = Run(
            problem_id=problem.id,
            status="accepted",
            model="rubric",
            judge_model="rubric",
            policy="default",
            max_rounds=1,
            webhook_url=webhook_url,
            finished_at=utcnow(),
        )
        session.add(run)
    return run


async def enqueued(sessions: Sessions, run: Run, **changes: Any) -> WebhookDelivery:
    """A run.finished delivery of the run, committed (with ``changes`` to its row)."""
    async with short_session(sessions) as session:
        (delivery,) = await enqueue(session, run, "run.finished", {"outcome": "accepted"})
        for name, value in changes.items():
            setattr(delivery, name, value)
    return delivery


async def delivery_row(sessions: Sessions, delivery_id: str) -> WebhookDelivery:
    """The delivery as stored now."""
    async with sessions() as session:
        row = await session.get(WebhookDelivery, delivery_id)
    assert row is not None
    return row


async def wait_for(
    sessions: Sessions, delivery_id: str, status: str, within_s: float = 60
) -> WebhookDelivery:
    """The delivery once it has ``status`` (polled: a condition, with a generous bound)."""
    for _ in range(int(within_s / 0.05)):
        row = await delivery_row(sessions, delivery_id)
        if row.status == status:
            return row
        await asyncio.sleep(0.05)
    raise AssertionError(f"delivery {delivery_id} never became {status}: {row}")


def settings(**overrides: Any) -> Settings:
    """Fast webhook settings (the database is passed to the outbox as sessions)."""
    values: dict[str, Any] = {"webhook_secret": SECRET, "webhook_backoff_s": 0.05, "webhook_poll_s": 0.05}
    values |= {"webhook_backoff_factor": 2, "webhook_backoff_jitter": 0}  # predictable waits
    values["webhook_allow_hosts"] = ["127.0.0.1:*"]  # the tests' receivers
    return Settings(_env_file=None, **(values | overrides))


@asynccontextmanager
async def outbox(sessions: Sessions, config: Settings, owner: str) -> AsyncIterator[WebhookOutbox]:
    """A sender named ``owner`` with its own HTTP client."""
    async with httpx.AsyncClient(timeout=config.webhook_timeout_s) as http:
        yield WebhookOutbox(sessions, http, config, owner)
