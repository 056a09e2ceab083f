"""A generation's bounds: connect, first token, gap between tokens, and the whole call.

llama-server sends a reply's headers at once, then nothing until it has read the prompt (30.8 s for
713 tokens of a small model on a 2-core machine), and queues requests beyond its slots before that.
So the headers say nothing about progress: the first *token* (a content, reasoning or tool-call
delta) does. The first-token bound is scaled by the prompt's length and the server's measured
prompt rate, with ``queue_timeout_s`` as its floor; once a reply has started, only the gap between
its pieces is bounded, and while another call to the same server (from this process) is still
before its first token, that call's first-token bound excuses the silence too: llama-server
generates for no slot while it reads a prompt, so a started reply is never cut because another slot
is reading one. A call cancelled by its caller closes its connection at once.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx2

# Characters per token where no tokenizer is known: English prose runs 4 or a little more, so 3.5
# overestimates the tokens, and so the time the server needs to read them.
CHARS_PER_TOKEN = 3.5
# The first-token bound gives reading the prompt this many times its expected duration.
READ_SLACK = 3.0
_TOKEN = re.compile(rb'"(?:content|reasoning_content|reasoning|tool_calls)"\s*:\s*(?:"[^"]|\[|\{)')
_PROMPT_N = re.compile(rb'"prompt_n"\s*:\s*(\d+)')
_PROMPT_MS = re.compile(rb'"prompt_ms"\s*:\s*([0-9.eE+-]+)')


class PromptRate:
    """A server's prompt-reading rate in tokens per second, learned from its replies.

    The server's own ``timings`` (llama.cpp: ``prompt_n`` tokens read in ``prompt_ms``) win; a
    server that reports none is measured from the time to first token of its calls (queueing
    included, so the figure is low and the bound it gives is wide), keeping the fastest seen."""

    def __init__(self) -> None:
        self.tokens_per_s: float | None = None
        self.reported = False
        # The calls to this server still waiting for their first token, each with the time its
        # first-token bound runs out (``time.monotonic``): while one reads its prompt, llama-server
        # generates for no other slot, so a started reply's silence is excused until then.
        self.reading: dict[object, float] = {}

    def excused_until(self, call: object) -> float:
        """Until when another call's prompt reading excuses a started reply's silence (0: none reads)."""
        return max((until for other, until in self.reading.items() if other is not call), default=0.0)

    def from_timings(self, prompt_n: int, prompt_ms: float) -> None:
        """Take the server's own figure for one reply (too few tokens say little: skipped)."""
        if prompt_n >= 32 and prompt_ms > 0:
            self.tokens_per_s, self.reported = prompt_n / (prompt_ms / 1000), True

    def from_first_token(self, prompt_tokens: int, seconds: float) -> None:
        """Take a call's time to first token, where the server reports no timings."""
        if self.reported or prompt_tokens < 32 or seconds <= 0:
            return
        rate = prompt_tokens / seconds
        self.tokens_per_s = max(rate, self.tokens_per_s or 0.0)


@dataclass(frozen=True)
class Bounds:
    """One model's bounds in seconds (``total_s`` None: the call as a whole is not bounded)."""

    floor_s: float  # queue_timeout_s: the first token's bound however short the prompt
    gap_s: float
    total_s: float | None = None

    def first_token_s(self, prompt_tokens: int, rate: PromptRate) -> float:
        """The first-token bound for a prompt of ``prompt_tokens``: reading it, with slack."""
        if rate.tokens_per_s is None:
            return self.floor_s
        return max(self.floor_s, READ_SLACK * prompt_tokens / rate.tokens_per_s)


def prompt_tokens(request: httpx2.Request) -> int:
    """The request's prompt in tokens, estimated from the characters of its messages."""
    try:
        body = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return 0
    messages = body.get("messages") if isinstance(body, dict) else None
    chars = sum(len(json.dumps(m.get("content"))) for m in messages or [] if isinstance(m, dict))
    return int(chars / CHARS_PER_TOKEN)


class TokenTimeouts(httpx2.AsyncBaseTransport):
    """Bounds a generation by its first token, the gaps between its pieces, and its total."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, bounds: Bounds, rate: PromptRate) -> None:
        self._inner, self.bounds, self.rate = inner, bounds, rate

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send, with the headers and the body's first token within the first-token bound."""
        if not _queued(request):  # /props and the like are answered at once: their own timeout holds
            return await self._inner.handle_async_request(request)
        # httpcore bounds every read by one figure: ours are tighter, so it is left out.
        timeouts = dict(request.extensions.get("timeout") or {})
        timeouts["read"] = None
        request.extensions = {**request.extensions, "timeout": timeouts}
        clock = _Clock(self.bounds, self.rate, prompt_tokens(request))
        try:
            async with asyncio.timeout(clock.before_first()):
                response = await self._inner.handle_async_request(request)
        except TimeoutError:
            clock.done()
            raise httpx2.ReadTimeout(clock.why(), request=request) from None
        except httpx2.ConnectTimeout:
            clock.done()
            connect = timeouts.get("connect")
            why = f"no connection within {connect:g} s (connect_timeout_s)" if connect else "no connection"
            raise httpx2.ConnectTimeout(why, request=request) from None
        except BaseException:
            clock.done()
            raise
        whole = "event-stream" not in response.headers.get("content-type", "")
        response.stream = _Bounded(response.stream, clock, request, whole)
        return response

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self._inner.aclose()


def _queued(request: httpx2.Request) -> bool:
    """Whether a server may queue this request behind busy slots: a generation (chat completion)."""
    return request.method == "POST" and request.url.path.endswith("/completions")


class _Clock:
    """One call's deadlines, and which of them ran out."""

    def __init__(self, bounds: Bounds, rate: PromptRate, tokens: int) -> None:
        self.bounds, self.rate, self.tokens = bounds, rate, tokens
        self.start = time.monotonic()
        self.first_s = bounds.first_token_s(tokens, rate)
        self.started = False
        self.last = "first"
        rate.reading[self] = self.start + self.first_s

    def done(self) -> None:
        """This call reads its prompt no longer (its first token came, or it ended)."""
        self.rate.reading.pop(self, None)

    def _total_left(self) -> float:
        total = self.bounds.total_s
        return float("inf") if total is None else total - (time.monotonic() - self.start)

    def before_first(self) -> float:
        """Seconds left for the first token (or the call's total, when sooner)."""
        first_left = self.first_s - (time.monotonic() - self.start)
        self.last = "first" if first_left <= self._total_left() else "total"
        return max(0.0, min(first_left, self._total_left()))

    def next_piece(self) -> float:
        """Seconds left for the next piece: the first-token bound, then the gap bound."""
        if not self.started:
            return self.before_first()
        # Another slot reading its prompt stalls this reply too: wait for it, then the gap bound.
        gap = max(self.bounds.gap_s, self.rate.excused_until(self) - time.monotonic() + self.bounds.gap_s)
        self.last = "gap" if gap <= self._total_left() else "total"
        return max(0.0, min(gap, self._total_left()))

    def token(self) -> None:
        """The reply's first token came: learn the rate from it, and bound gaps from now on."""
        if not self.started:
            self.started = True
            self.done()
            self.rate.from_first_token(self.tokens, time.monotonic() - self.start)

    def why(self) -> str:
        """The bound that ran out, named as the model spec names it."""
        if self.last == "total":
            return f"the call took more than {self.bounds.total_s:g} s in all (total_timeout_s)"
        if self.last == "gap":
            return (
                f"the reply stopped: no token for {self.bounds.gap_s:g} s after it had started "
                "(token_gap_timeout_s)"
            )
        rate = self.rate.tokens_per_s
        reading = f"{self.tokens} prompt tokens at {rate:.0f} tokens/s" if rate else "no prompt rate yet"
        return (
            f"no first token within {self.first_s:g} s (the first-token bound: {reading}, "
            f"floor queue_timeout_s {self.bounds.floor_s:g} s)"
        )


class _Bounded(httpx2.AsyncByteStream):
    """A response body whose pieces must come within the call's bounds; reads the server's timings."""

    def __init__(
        self,
        inner: httpx2.AsyncByteStream | httpx2.SyncByteStream,
        clock: _Clock,
        request: httpx2.Request,
        whole: bool,
    ) -> None:
        self._inner, self._clock, self._request, self._whole = inner, clock, request, whole

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert isinstance(self._inner, httpx2.AsyncByteStream)
        pieces, tail = self._inner.__aiter__(), b""
        while True:
            try:
                async with asyncio.timeout(self._clock.next_piece()):
                    piece = await anext(pieces)
            except StopAsyncIteration:
                self._clock.done()
                self._timings(tail)
                return
            except TimeoutError:
                self._clock.done()
                raise httpx2.ReadTimeout(self._clock.why(), request=self._request) from None
            except BaseException:
                self._clock.done()
                raise
            if self._whole or _TOKEN.search(piece):
                self._clock.token()
            tail = (tail + piece)[-4096:]
            yield piece

    def _timings(self, tail: bytes) -> None:
        """Learn the prompt rate from the reply's llama.cpp ``timings``, where it has them."""
        tokens, ms = _PROMPT_N.findall(tail), _PROMPT_MS.findall(tail)
        if tokens and ms:
            try:
                self._clock.rate.from_timings(int(tokens[-1]), float(ms[-1]))
            except ValueError:
                return

    async def aclose(self) -> None:
        self._clock.done()
        if isinstance(self._inner, httpx2.AsyncByteStream):
            await self._inner.aclose()
