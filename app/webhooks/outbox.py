"""Signed webhooks through a transactional outbox: a delivery row is written with the run's end
state, then any live process claims it (counting the attempt before anything is sent), POSTs it
signed as Standard Webhooks 1.0 asks (app.webhooks.signing) and records the answer, retrying with
exponential backoff and jitter across restarts (about a day by default). Every delivery is signed:
with its endpoint's secret, or for a run's own webhook_url with THINKLOOP_WEBHOOK_SECRET or else the
project's own signing secret (and, during a rotation, with the previous secret too). Delivery is
at-least-once."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import json
import random
import re
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import structlog
from sqlalchemy import ColumnElement, Update, or_, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlmodel import col, select

from app.db import short_session
from app.models import Project, Run, WebhookDelivery, WebhookEndpoint, new_id, new_webhook_secret, utcnow
from app.settings import Settings
from app.webhooks.signing import signed_headers

if TYPE_CHECKING:  # the sender's client is made by the server that sends (httpx loads with it)
    import httpx

log = structlog.get_logger(__name__)
ENDPOINT_DELETED = "the endpoint was deleted"  # a failed delivery's last_error: never sent again in bulk
_CUT_OFF = "the last attempt was cut off before its answer (the sender stopped)"
_CLAIM_BATCH = 20  # deliveries claimed (and sent concurrently) per round


class DeliveryStatus(StrEnum):
    """A delivery's state: pending until delivered, or failed for good."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"  # attempts exhausted, or the target refused


class WebhookTargetRefused(ValueError):
    """A webhook URL whose host is not allow-listed (server-side request forgery)."""


# An allow-list entry with a port: host:port, host:*, [v6]:port (an entry without one allows any port
# of a host that is not loopback).
_PORTED = re.compile(r"^(?P<host>\[[^\]]+\]|[^:\[\]]+):(?P<port>\d{1,5}|\*)$")


def _entries(allow: Sequence[str]) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for entry in allow:
        entry = entry.lower().strip()
        ported = _PORTED.match(entry)
        found.append((ported["host"].strip("[]"), ported["port"]) if ported else (entry, None))
    return found


def _host_matches(host: str, pattern: str) -> bool:
    """Exact names, ``*.domain`` suffixes, and IP networks in CIDR form."""
    if pattern.startswith("*.") and host.endswith(pattern[1:]):
        return True
    if host == pattern:
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host) in ipaddress.ip_network(pattern, strict=False)
    return False


def _allowed_by_list(host: str, port: int, allow: Sequence[str], *, loopback: bool) -> bool:
    """Whether an entry names the host (and the port, if it gives one). A loopback target needs an
    entry that names its port (or ``*``): other services listen on this machine's loopback ports."""
    for pattern, ports in _entries(allow):
        if not _host_matches(host, pattern):
            continue
        if ports is None and not loopback:
            return True
        if ports is not None and (ports == "*" or int(ports) == port):
            return True
    return False


def _loopback_literal(host: str) -> bool:
    if host == "localhost":
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host).is_loopback
    return False


async def check_target(url: str, allow: Sequence[str]) -> None:
    """Refuse a webhook URL unless THINKLOOP_WEBHOOK_ALLOW_HOSTS lets it through. A public, private
    or link-local (cloud metadata) host needs an entry naming it; a loopback one (this machine, where
    other services listen) needs an entry naming it *and its port* (``127.0.0.1:9000``,
    ``localhost:*``). Nothing is allowed by default."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise WebhookTargetRefused("only http(s) URLs with a host can receive webhooks")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise WebhookTargetRefused("the URL's port is not a port") from exc
    if not _loopback_literal(host) and _allowed_by_list(host, port, allow, loopback=False):
        return  # an allow-listed name is trusted as it resolves
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise WebhookTargetRefused(f"the host {host!r} does not resolve") from exc
    addresses = {ipaddress.ip_address(info[4][0]) for info in infos}
    for address in sorted(addresses, key=str):
        if address.is_loopback:
            if not any(_allowed_by_list(name, port, allow, loopback=True) for name in (host, str(address))):
                raise WebhookTargetRefused(
                    f"{host}:{port} is on this machine; add '{host}:{port}' to THINKLOOP_WEBHOOK_ALLOW_HOSTS"
                )
        elif not _allowed_by_list(str(address), port, allow, loopback=False):
            kind = "link-local" if address.is_link_local else "private" if address.is_private else "public"
            raise WebhookTargetRefused(
                f"the host {host!r} resolves to a {kind} address; add it to THINKLOOP_WEBHOOK_ALLOW_HOSTS"
            )


def redact(url: str) -> str:
    """A URL fit for logs: no user, password, query or fragment (they may carry tokens)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return urlunsplit((parts.scheme, f"{host}:{parts.port}" if parts.port else host, parts.path, "", ""))


# A query parameter whose name holds one of these (letters and digits only, lower case) is taken
# for a credential; so is one named exactly as in _SECRET_PARAM_NAMES.
_SECRET_PARAM_PARTS = ("token", "secret", "passw", "pwd", "apikey", "accesskey", "credential", "signature")
_SECRET_PARAM_NAMES = frozenset({"key", "sig", "auth", "authorization", "pass", "jwt"})


def credential_in(url: str) -> str | None:
    """What in a webhook URL looks like a credential, or None. URLs are stored as given and shown to
    the project's readers (redacted) and operators, so a password or token belongs in the signing
    secret (or a header the receiver checks), never in the URL: a user or password before the host,
    or a query parameter named like a secret (token, secret, password, pwd, api_key, access_key,
    credential, signature, or exactly key, sig, auth, authorization, pass, jwt)."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        return "a user name or password before the host"
    for name, _ in parse_qsl(parts.query, keep_blank_values=True):
        plain = "".join(ch for ch in name.lower() if ch.isalnum())
        if plain in _SECRET_PARAM_NAMES or any(part in plain for part in _SECRET_PARAM_PARTS):
            return f"the query parameter {name!r}"
    return None


def refuse_credentials(url: str) -> None:
    """Raise WebhookTargetRefused for a URL that carries a credential (see ``credential_in``)."""
    found = credential_in(url)
    if found is not None:
        raise WebhookTargetRefused(
            f"it holds {found}, which looks like a credential; webhook URLs are stored in plain text, so "
            "put no password or token in them: check the webhook-signature header instead (its secret "
            "is the credential)"
        )


def _stamped(event: str) -> dict[str, Any]:
    """What every event's body starts with: its type, its own id, and when it was made."""
    return {"type": event, "id": new_id(), "created": utcnow().isoformat().replace("+00:00", "Z")}


def envelope(run: Run, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Every webhook event's body: ``type``, ``id`` (the event's, kept by a redelivery, so a receiver
    can drop one it already has), ``created``, ``run_id``, the run's ``status`` — the same names
    as in traces and streams — and the ``metadata`` it was submitted with (a pupil's id, say, so a
    receiver can route the event without fetching the run), then the event's own fields."""
    return {
        **payload,
        **_stamped(event),
        "run_id": run.id,
        "status": payload.get("status") or payload.get("outcome") or run.status,
        "metadata": run.meta or {},
    }


async def enqueue(
    session: AsyncSession, run: Run, event: str, payload: dict[str, Any]
) -> list[WebhookDelivery]:
    """Add a pending delivery of ``event`` to the session for the run's webhook_url and for every
    endpoint its project registered (the caller commits them with the run's end state, so a stored
    end state always has its webhooks). One event, one id, whichever receiver gets it."""
    body = envelope(run, event, payload)
    query = select(col(WebhookEndpoint.id), col(WebhookEndpoint.url)).where(
        col(WebhookEndpoint.project_id) == run.project_id
    )
    targets: list[tuple[str | None, str]] = [(None, run.webhook_url)] if run.webhook_url else []
    targets += [(row[0], row[1]) for row in (await session.execute(query)).all()]
    deliveries = [
        WebhookDelivery(
            run_id=run.id,
            endpoint_id=endpoint,
            project_id=run.project_id,
            event=event,
            url=url,
            payload=body,
            status=DeliveryStatus.PENDING,
        )
        for endpoint, url in targets
    ]
    session.add_all(deliveries)
    return deliveries


def enqueue_test(session: AsyncSession, endpoint: WebhookEndpoint) -> WebhookDelivery:
    """A ``ping`` event to one endpoint, to see that it receives and verifies (it names no run)."""
    body = _stamped("ping") | {"endpoint_id": endpoint.id}
    delivery = WebhookDelivery(
        endpoint_id=endpoint.id,
        project_id=endpoint.project_id,
        event="ping",
        url=endpoint.url,
        payload=body,
        status=DeliveryStatus.PENDING,
    )
    session.add(delivery)
    return delivery


def redeliver(session: AsyncSession, original: WebhookDelivery) -> WebhookDelivery:
    """Add a new pending delivery with the original's event, payload and URL (a new delivery id)."""
    again = WebhookDelivery(
        run_id=original.run_id,
        endpoint_id=original.endpoint_id,
        project_id=original.project_id,
        event=original.event,
        url=original.url,
        payload=original.payload,
        status=DeliveryStatus.PENDING,
    )
    session.add(again)
    return again


def nominal_delay(settings: Settings, attempts: int) -> float:
    """The wait in seconds after the ``attempts``-th failed attempt, before jitter:
    THINKLOOP_WEBHOOK_BACKOFF_S times THINKLOOP_WEBHOOK_BACKOFF_FACTOR for each attempt after the
    first, at most THINKLOOP_WEBHOOK_BACKOFF_MAX_S (by default 5 s, 20 s, 80 s, 5 min, 21 min,
    85 min, 5.7 h, then 6 h: eleven attempts over about 25 hours)."""
    grown = settings.webhook_backoff_s * settings.webhook_backoff_factor ** min(attempts - 1, 200)
    return float(min(grown, settings.webhook_backoff_max_s))


def retry_delay(settings: Settings, attempts: int, rand: Callable[[], float] = random.random) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: ``nominal_delay`` moved by up to
    THINKLOOP_WEBHOOK_BACKOFF_JITTER of itself either way (``rand`` gives [0, 1)), so receivers that
    come back after an outage are not hit by every sender at once. (Tenacity's waits want a
    RetryCallState; here the retry loop is the outbox table, not a call stack.)"""
    spread = settings.webhook_backoff_jitter * (2 * rand() - 1)
    return timedelta(seconds=nominal_delay(settings, attempts) * (1 + spread))


def retry_schedule(settings: Settings) -> list[float]:
    """The nominal waits (seconds) between a delivery's attempts, first to last."""
    return [nominal_delay(settings, n) for n in range(1, settings.webhook_attempts)]


@dataclasses.dataclass(frozen=True)
class Attempt:
    """What one POST of a delivery came to."""

    status_code: int | None = None
    error: str | None = None
    refused: bool = False  # the target failed the SSRF check: nothing was sent, and never will be

    @property
    def delivered(self) -> bool:
        """A 2xx answer."""
        return self.status_code is not None and 200 <= self.status_code < 300


async def post(
    client: httpx.AsyncClient,
    delivery: WebhookDelivery,
    secrets_in_use: Sequence[str],
    allow: Sequence[str],
    clock: Callable[[], datetime] = utcnow,
) -> Attempt:
    """Check the target again (a name may resolve elsewhere now), then POST the delivery once, signed
    with every secret in use, the current one first (there is no unsigned POST: one is required)."""
    if not any(secrets_in_use):
        return Attempt(error="no signing secret: nothing was sent", refused=True)
    try:
        await check_target(delivery.url, allow)
    except WebhookTargetRefused as exc:
        return Attempt(error=f"refused: {exc}", refused=True)
    body = json.dumps(delivery.payload, separators=(",", ":")).encode("utf-8")
    timestamp = str(int(clock().timestamp()))
    # webhook-id is the delivery's id, the same on every retry: receivers deduplicate on it, and it is
    # signed, so a captured request resent under another id fails verification
    signing = [secret for secret in secrets_in_use if secret]
    headers = {"Content-Type": "application/json"}
    headers |= signed_headers(signing, delivery.id, delivery.event, timestamp, body)
    try:
        response = await client.post(delivery.url, content=body, headers=headers)
    except Exception as exc:  # whatever went wrong is this attempt's failure, not the sender's
        # an error's text may quote the URL, whose query may carry a token
        reason = f"{type(exc).__name__}: {exc}".replace(delivery.url, redact(delivery.url))
        return Attempt(error=reason[:500])
    error = None if response.status_code < 300 else f"HTTP {response.status_code}"
    return Attempt(status_code=response.status_code, error=error)


class WebhookOutbox:
    """Sends due deliveries from the outbox table in this process; any number of processes may run
    one, since a delivery is leased by one sender at a time."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        http: httpx.AsyncClient,
        settings: Settings,
        owner: str,
        clock: Callable[[], datetime] = utcnow,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.sessions, self.http, self.settings, self.owner = sessions, http, settings, owner
        self.clock, self.rand = clock, rand  # tests move time on instead of waiting it out
        self._wake = asyncio.Event()
        self._closing = False

    def wake(self) -> None:
        """Look for due deliveries now (call it after committing one), not at the next poll."""
        self._wake.set()

    @asynccontextmanager
    async def sending(self) -> AsyncIterator[None]:
        """Send due deliveries in the background while the block runs. On exit a round in flight
        gets THINKLOOP_WEBHOOK_TIMEOUT_S to finish; after that its leases lapse and any process
        sends those deliveries again."""
        self._closing = False
        task = asyncio.create_task(self._loop(), name="webhook-outbox")
        try:
            yield
        finally:
            self._closing = True
            self._wake.set()
            done, _ = await asyncio.wait({task}, timeout=self.settings.webhook_timeout_s)
            if not done:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _loop(self) -> None:
        while not self._closing:
            self._wake.clear()  # before looking: a wake() during the round starts the next one at once
            try:
                while await self.send_due() == _CLAIM_BATCH and not self._closing:
                    pass  # a full batch: more may be due
            except Exception as exc:  # the database is away: try again at the next poll
                log.warning("webhook.outbox_failed", error=type(exc).__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.webhook_poll_s)

    async def send_due(self) -> int:
        """Claim the deliveries that are due, POST each once (concurrently) and record what came of
        it; the number claimed."""
        deliveries = await self._claim()
        await asyncio.gather(*(self._send(delivery) for delivery in deliveries))
        return len(deliveries)

    async def _claim(self) -> list[WebhookDelivery]:
        # The conditions are checked again on every row the UPDATE changes, so of two processes
        # that pick the same candidates only one gets each (PostgreSQL re-reads a row locked by
        # another transaction after it commits; SQLite runs one writer at a time).
        # The claim counts the attempt and commits before anything is sent: a sender killed in the
        # middle of a POST leaves it counted, so a delivery received twice shows two attempts.
        now, table = self.clock(), WebhookDelivery
        free = or_(col(table.lease_owner).is_(None), col(table.lease_until) < now)
        due = (col(table.status) == DeliveryStatus.PENDING, col(table.next_attempt_at) <= now, free)
        left = col(table.attempts) < self.settings.webhook_attempts
        candidates = select(col(table.id)).where(*due, left).order_by(col(table.next_attempt_at))
        candidates = candidates.limit(_CLAIM_BATCH).with_for_update(skip_locked=True)
        lease = timedelta(seconds=self.settings.webhook_timeout_s * 3)
        claim = (
            update(table)
            .where(col(table.id).in_(candidates), *due, left)
            .values(lease_owner=self.owner, lease_until=now + lease, attempts=col(table.attempts) + 1)
            .returning(col(table.id))
        )
        async with short_session(self.sessions) as session:
            await session.execute(self._give_up_cut_off(due))
            ids = list((await session.execute(claim)).scalars().all())
            if not ids:
                return []
            rows = await session.execute(select(table).where(col(table.id).in_(ids)))
            return list(rows.scalars().all())

    def _give_up_cut_off(self, due: Sequence[ColumnElement[bool]]) -> Update:
        """Fail the due deliveries whose every attempt is counted: their last one was cut off (the
        sender stopped before the answer), and there is none left to make."""
        table = WebhookDelivery
        spent = col(table.attempts) >= self.settings.webhook_attempts
        return (
            update(table)
            .where(*due, spent)
            .values(status=DeliveryStatus.FAILED, last_error=_CUT_OFF, lease_owner=None, lease_until=None)
        )

    async def _secrets(self, delivery: WebhookDelivery) -> list[str]:
        """The secrets that sign a delivery, the current one first: an endpoint's own; for a run's
        webhook_url, THINKLOOP_WEBHOOK_SECRET if set (with THINKLOOP_WEBHOOK_PREVIOUS_SECRET), else the
        project's (made now if the project has none). Each with the secret a rotation replaced while
        it is still in use. Empty only for a delivery that names neither an endpoint nor a project:
        it is failed, never sent unsigned."""
        now = self.clock()
        if delivery.endpoint_id is not None:
            async with short_session(self.sessions) as session:
                found = await session.get(WebhookEndpoint, delivery.endpoint_id)
                if found is not None and found.secret:
                    return in_use(found.secret, found.previous_secret, found.previous_secret_until, now)
        configured, previous = self.settings.webhook_secret, self.settings.webhook_previous_secret
        if configured and configured.get_secret_value():
            older = [previous.get_secret_value()] if previous and previous.get_secret_value() else []
            return [configured.get_secret_value(), *older]
        if delivery.project_id is None:
            return []
        async with short_session(self.sessions) as session:
            return await project_secrets(session, delivery.project_id, now)

    async def _send(self, delivery: WebhookDelivery) -> None:
        secrets_in_use = await self._secrets(delivery)
        attempt = Attempt(error=f"timed out after {self.settings.webhook_timeout_s:g} s")
        # a bound on the whole attempt (name lookup included), well inside the lease
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.settings.webhook_timeout_s):
                if not secrets_in_use:
                    attempt = Attempt(
                        error="no signing secret for this delivery: nothing was sent", refused=True
                    )
                else:
                    allow = self.settings.webhook_allow_hosts
                    attempt = await post(self.http, delivery, secrets_in_use, allow, self.clock)
        await self._record(delivery, attempt)

    async def _record(self, delivery: WebhookDelivery, attempt: Attempt) -> None:
        now, attempts = self.clock(), delivery.attempts  # counted by the claim
        values: dict[str, Any] = {
            "attempts": attempts,
            "last_status_code": attempt.status_code,
            "last_error": attempt.error,
            "lease_owner": None,
            "lease_until": None,
        }
        if attempt.delivered:
            values |= {"status": DeliveryStatus.DELIVERED, "delivered_at": now}
        elif attempt.refused or attempts >= self.settings.webhook_attempts:
            values |= {"status": DeliveryStatus.FAILED}
        else:
            values |= {"next_attempt_at": now + retry_delay(self.settings, attempts, self.rand)}
        table = WebhookDelivery
        held = (col(table.id) == delivery.id, col(table.lease_owner) == self.owner)
        async with short_session(self.sessions) as session:
            result = await session.execute(update(table).where(*held).values(**values))
        fields = {"delivery_id": delivery.id, "run_id": delivery.run_id, "url": redact(delivery.url)}
        if not result.rowcount:  # type: ignore[attr-defined]
            log.warning("webhook.lease_lost", **fields)  # another process took it over meanwhile
        elif attempt.delivered:
            log.info("webhook.delivered", attempts=attempts, **fields)
        else:
            status = values.get("status", DeliveryStatus.PENDING)
            log.warning(
                "webhook.attempt_failed", attempts=attempts, status=status, error=attempt.error, **fields
            )


async def project_secret(session: AsyncSession, project_id: str) -> str | None:
    """The project's webhook signing secret, made and stored now if it has none (a project made
    before it had one); None for an unknown project."""
    project = await session.get(Project, project_id)
    if project is None:
        return None
    if not project.webhook_secret:
        made = new_webhook_secret()
        stored = (
            update(Project)
            .where(col(Project.id) == project_id, col(Project.webhook_secret).is_(None))
            .values(webhook_secret=made)
        )
        await session.execute(stored)
        await session.refresh(project)
    return project.webhook_secret


def in_use(secret: str, previous: str | None, until: datetime | None, now: datetime) -> list[str]:
    """A secret, then the one its last rotation replaced while that still signs."""
    return [secret, previous] if previous and until is not None and until > now else [secret]


async def project_secrets(session: AsyncSession, project_id: str, now: datetime) -> list[str]:
    """The project's signing secrets in use, the current one first (made now if it has none);
    empty for an unknown project."""
    secret = await project_secret(session, project_id)
    project = await session.get(Project, project_id)
    if secret is None or project is None:
        return []
    return in_use(secret, project.webhook_secret_previous, project.webhook_secret_previous_until, now)


def previous_until(settings: Settings, keep_s: float | None, now: datetime) -> datetime | None:
    """Until when a secret just replaced still signs: ``keep_s`` seconds, or
    THINKLOOP_WEBHOOK_ROTATION_S when None; None (not at all) for 0."""
    keep = settings.webhook_rotation_s if keep_s is None else keep_s
    return now + timedelta(seconds=keep) if keep > 0 else None
