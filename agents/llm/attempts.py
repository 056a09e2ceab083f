"""Counting HTTP attempts per logical LLM call, and what the failed ones cost.

The OpenAI SDK retries inside one call; an httpx request hook sees every attempt. A context
variable ties the attempts to the call that made them, even with many calls in flight.

An attempt that brings back no reply (an HTTP error, a timeout, a dropped connection) has still
cost something: the server may have read its prompt. ``AttemptAccounting`` wraps the transport and
notes, for each failed generation request, the prompt and cached tokens the failed response
reports (its ``usage``, llama.cpp's ``timings`` or ``n_prompt_tokens``), or, where it reports none,
the prompt's length estimated from its characters (``estimated``).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2

from agents.llm.timeouts import prompt_tokens
from agents.llm.wire import cached_prompt_tokens


@dataclass(frozen=True)
class FailedAttempt:
    """The prompt tokens one failed attempt sent, and of them those served from the prompt cache."""

    input_tokens: int
    cached_input_tokens: int
    estimated: bool  # the server reported nothing: estimated from the prompt's characters


@dataclass
class Attempts:
    """The HTTP attempts of one logical call, and the failed ones among them."""

    count: int = 0
    failed: list[FailedAttempt] = field(default_factory=list)


_current: ContextVar[Attempts | None] = ContextVar("thinkloop_http_attempts", default=None)


async def count_attempt(_: httpx.Request) -> None:
    """httpx request hook: one more attempt for the call in progress, if one is being counted."""
    attempts = _current.get()
    if attempts is not None:
        attempts.count += 1


@contextmanager
def counting_attempts() -> Iterator[Attempts]:
    """Count the HTTP attempts made inside the block, and note what the failed ones cost."""
    attempts = Attempts()
    token = _current.set(attempts)
    try:
        yield attempts
    finally:
        _current.reset(token)


def note_failed(request: httpx2.Request, reported: dict[str, Any] | None) -> None:
    """Charge a failed attempt to the call in progress: what ``reported`` (a failed response's JSON)
    says it read, else the request's prompt estimated from its length."""
    attempts = _current.get()
    if attempts is None:
        return
    counted = reported_tokens(reported) if reported is not None else None
    if counted is None:
        attempts.failed.append(FailedAttempt(prompt_tokens(request), 0, estimated=True))
    else:
        attempts.failed.append(FailedAttempt(*counted, estimated=False))


def reported_tokens(data: dict[str, Any]) -> tuple[int, int] | None:
    """(prompt tokens, cached tokens) that a failed response reports; None when it reports neither.

    OpenAI's shape: ``usage.prompt_tokens``; llama.cpp: ``timings`` (``prompt_n`` read plus
    ``cache_n`` from the cache) or, refusing a prompt too long for a slot, ``n_prompt_tokens``."""
    error = data.get("error")
    inner = error if isinstance(error, dict) else {}
    usage, timings = data.get("usage"), data.get("timings")
    cached = cached_prompt_tokens(data) or 0
    if isinstance(usage, dict) and _count(usage.get("prompt_tokens")) is not None:
        prompt = _count(usage.get("prompt_tokens")) or 0
    elif isinstance(timings, dict) and _count(timings.get("prompt_n")) is not None:
        prompt = (_count(timings.get("prompt_n")) or 0) + cached
    elif (counted := _count(data.get("n_prompt_tokens", inner.get("n_prompt_tokens")))) is not None:
        prompt = counted
    else:
        return None
    return prompt, min(cached, prompt)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


_DATA = re.compile(rb"^data:\s*(\{.*\})\s*$", re.M)


def last_report(tail: bytes) -> dict[str, Any] | None:
    """The last SSE frame of a stream's tail that reports usage or timings; None if none does."""
    for frame in reversed(_DATA.findall(tail)):
        try:
            data = json.loads(frame)
        except ValueError:
            continue
        if isinstance(data, dict) and reported_tokens(data) is not None:
            return data
    return None


class AttemptAccounting(httpx2.AsyncBaseTransport):
    """Notes each failed generation attempt (``note_failed``) on its way to the SDK, which may retry it."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send; an exception or an HTTP error of a generation is a failed attempt."""
        if not (request.method == "POST" and request.url.path.endswith("/completions")):
            return await self._inner.handle_async_request(request)
        try:
            response = await self._inner.handle_async_request(request)
        except Exception:
            note_failed(request, None)
            raise
        if response.status_code < 400:
            response.stream = _Watched(response.stream, request)
            return response
        body = await response.aread()
        note_failed(request, _json(body))
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _RECODED]
        return httpx2.Response(response.status_code, headers=headers, content=body, request=request)

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self._inner.aclose()


_RECODED = {"content-length", "content-encoding", "transfer-encoding"}


def _json(body: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        data = data[0]
    return data if isinstance(data, dict) else None


class _Watched(httpx2.AsyncByteStream):
    """A reply's body: one that breaks off (a bound ran out, the connection dropped) is a failed attempt."""

    def __init__(
        self, inner: httpx2.AsyncByteStream | httpx2.SyncByteStream, request: httpx2.Request
    ) -> None:
        self._inner, self._request = inner, request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert isinstance(self._inner, httpx2.AsyncByteStream)
        tail = b""
        try:
            async for piece in self._inner:
                tail = (tail + piece)[-8192:]
                yield piece
        except Exception:
            note_failed(self._request, last_report(tail))
            raise

    async def aclose(self) -> None:
        if isinstance(self._inner, httpx2.AsyncByteStream):
            await self._inner.aclose()
