"""The HTTP server's guard against slow clients: a request's headers must arrive within
THINKLOOP_HTTP_HEADER_TIMEOUT_S of its first byte (or of the connection, for the first request) and
its body within THINKLOOP_HTTP_BODY_TIMEOUT_S of its headers; a connection that is too slow is
closed. uvicorn has keep-alive and concurrency limits but no read timeouts, so a client that sends
half a request would otherwise hold its connection (and a slot of the concurrency cap) for good."""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import structlog
from uvicorn.protocols.http.h11_impl import H11Protocol

log = structlog.get_logger(__name__)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with header and body read deadlines (set on a subclass by
    ``guarded_protocol``)."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._reading: str | None = None  # "headers" or "body": what the deadline is for

    def _arm(self, what: str, seconds: float) -> None:
        if self._reading == what:
            return  # armed once per request part: a client trickling bytes does not push it back
        self._disarm()
        self._reading = what
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._reading = None, None

    def _too_slow(self) -> None:
        what, self._deadline = self._reading, None
        self._reading = None
        if not self.transport.is_closing():
            log.info(
                "http.too_slow", reading=what, client=self.client and f"{self.client[0]}:{self.client[1]}"
            )
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm("headers", self.header_timeout_s)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def _follow(self) -> None:
        """Set the deadline for what the client is sending now."""
        state = self.conn.their_state
        if state is h11.IDLE:
            if self.cycle is None or self.cycle.response_complete:
                if self.timeout_keep_alive_task is None:  # bytes of a next request have come
                    self._arm("headers", self.header_timeout_s)
                else:  # idle between requests: uvicorn's keep-alive timeout applies
                    self._disarm()
        elif state is h11.SEND_BODY:
            self._arm("body", self.body_timeout_s)
        else:  # the whole request is in (DONE), or the connection is ending
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def guarded_protocol(header_timeout_s: float, body_timeout_s: float) -> type[GuardedH11Protocol]:
    """The protocol class with these deadlines, for ``uvicorn.Config(http=…)``."""
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {"header_timeout_s": header_timeout_s, "body_timeout_s": body_timeout_s},
    )
