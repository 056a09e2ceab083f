"""The HTTP server's guard against slow clients: a request's headers must arrive within
THINKLOOP_HTTP_HEADER_TIMEOUT_S of its first byte (or of the connection, for the first request) and
its body within THINKLOOP_HTTP_BODY_TIMEOUT_S of its headers; a connection that is too slow is
closed. uvicorn has keep-alive and concurrency limits but no read timeouts, so a client that sends
half a request would otherwise hold its connection (and a slot of the concurrency cap) for good.

It also holds a request's head (request line and headers, up to the blank line) to
:data:`MAX_HEAD_BYTES`, however the client sends it: a larger one is answered 400 (problem+json) and
the connection closed. h11's own limit (``max_incomplete_event_size``) only bounds a head still
incomplete in its buffer, so a 100 KB head arriving in one read passed it whole."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import h11
import structlog
from uvicorn.protocols.http.h11_impl import H11Protocol

log = structlog.get_logger(__name__)

# The largest request head served: h11's default buffer limit, which uvicorn keeps (16 KiB).
MAX_HEAD_BYTES = 16 * 1024
# The blank line that ends a head, as h11 finds it (a bare LF ends a line too).
_HEAD_END = re.compile(rb"\n\r?\n")


def head_too_large(buffered: bytes, limit: int = MAX_HEAD_BYTES) -> bool:
    """Whether ``buffered`` (the bytes of a request not yet parsed) holds a head over ``limit`` bytes,
    or already more than ``limit`` bytes of a head that has not ended."""
    end = _HEAD_END.search(buffered)
    return (end.end() if end else len(buffered)) > limit


def _refusal(limit: int) -> bytes:
    """A 400 problem+json response to a head over ``limit`` bytes, closing the connection."""
    body = json.dumps(
        {
            "type": "https://thinkloop.dev/problems/header-too-large",
            "title": "Request header fields too large",
            "status": 400,
            "detail": f"The request line and headers exceed {limit} bytes ({limit // 1024} KiB).",
        },
        separators=(",", ":"),
    ).encode()
    head = (
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with header and body read deadlines (set on a subclass by
    ``guarded_protocol``)."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._reading: str | None = None  # "headers" or "body": what the deadline is for
        self._linger: asyncio.TimerHandle | None = None  # set once a head was refused

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
        if self._linger is not None:
            return  # refused: the rest is read and dropped until the connection closes
        # h11 parses a head once it has all of it: the bytes buffered so far and these decide
        if self.conn.their_state is h11.IDLE and head_too_large(self.conn.trailing_data[0] + data):
            self._refuse_head()
            return
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        # a pipelined request already buffered is parsed by the next cycle: hold its head first
        pending = self.conn.trailing_data[0]
        if pending and self.conn.their_state is h11.DONE and head_too_large(pending):
            self._refuse_head()
        super().on_response_complete()
        if self._linger is None:
            self._follow()

    def handle_events(self) -> None:
        if self._linger is None:  # a refused connection parses nothing more
            super().handle_events()

    def _refuse_head(self) -> None:
        """Answer 400 to a head over the limit and stop sending, but keep reading (and dropping) what
        the client still sends until the header deadline: closing a socket with unread bytes resets
        it, and the client could lose the 400 before reading it."""
        self._disarm()
        log.info("http.head_too_large", client=self.client and f"{self.client[0]}:{self.client[1]}")
        self.transport.write(_refusal(MAX_HEAD_BYTES))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._linger = self.loop.call_later(self.header_timeout_s, self.transport.close)

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
        if self._linger is not None:
            self._linger.cancel()
        super().connection_lost(exc)


def guarded_protocol(header_timeout_s: float, body_timeout_s: float) -> type[GuardedH11Protocol]:
    """The protocol class with these deadlines, for ``uvicorn.Config(http=…)``."""
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {"header_timeout_s": header_timeout_s, "body_timeout_s": body_timeout_s},
    )
