"""Server-sent events over httpx: the frames of a ``text/event-stream`` response.

The client's own reader (the WHATWG event-stream format: ``event``, ``data``, ``id`` and ``retry``
fields, comments, any line ending), so that the client needs httpx and pydantic only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

import httpx

HEADERS = {"Accept": "text/event-stream", "Cache-Control": "no-store"}


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched frame: its event type (``message`` when it names none), its data (the ``data``
    lines joined by newlines), the stream's last event id so far, and its ``retry``, if any."""

    event: str = "message"
    data: str = ""
    id: str = ""
    retry: int | None = None


class Decoder:
    """Lines in, frames out: a blank line dispatches the fields gathered since the last one."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._last_id = ""
        self._retry: int | None = None
        self._seen = False  # a field (not a comment) since the last dispatch

    def feed(self, line: str) -> ServerSentEvent | None:
        line = line.rstrip("\r\n")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: a heartbeat
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" in value:
                return None
            self._last_id = value
        elif name == "retry":
            if not value.isdigit():
                return None
            self._retry = int(value)
        else:
            return None  # an unknown field is ignored
        self._seen = True
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        if not self._seen:
            return None
        sse = ServerSentEvent(self._event or "message", "\n".join(self._data), self._last_id, self._retry)
        self._event, self._data, self._retry, self._seen = "", [], None, False
        return sse

    def decode(self, lines: Iterable[str]) -> Iterator[ServerSentEvent]:
        """Every frame of ``lines`` (a frame the stream ends in the middle of is dropped)."""
        for line in lines:
            if (sse := self.feed(line)) is not None:
                yield sse


class EventSource:
    """A streamed response and its frames."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response

    def iter_sse(self) -> Iterator[ServerSentEvent]:
        return Decoder().decode(self.response.iter_lines())

    async def aiter_sse(self) -> AsyncIterator[ServerSentEvent]:
        decoder = Decoder()
        async for line in self.response.aiter_lines():
            if (sse := decoder.feed(line)) is not None:
                yield sse


@contextmanager
def connect_sse(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
) -> Iterator[EventSource]:
    """Open ``url`` as an event stream on a blocking client (no read timeout: a stream is quiet
    between events)."""
    with client.stream(method, url, headers={**HEADERS, **(headers or {})}, timeout=None) as response:
        yield EventSource(response)


@asynccontextmanager
async def aconnect_sse(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[EventSource]:
    """Open ``url`` as an event stream on an async client (no read timeout)."""
    async with client.stream(method, url, headers={**HEADERS, **(headers or {})}, timeout=None) as response:
        yield EventSource(response)
