"""Counting HTTP attempts per logical LLM call, so retries (429, 5xx, timeouts) are visible.

The OpenAI SDK retries inside one call; an httpx request hook sees every attempt. A context
variable ties the attempts to the call that made them, even with many calls in flight.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpx

_counter: ContextVar[list[int] | None] = ContextVar("thinkloop_http_attempts", default=None)


async def count_attempt(_: httpx.Request) -> None:
    """httpx request hook: one more attempt for the call in progress, if one is being counted."""
    counter = _counter.get()
    if counter is not None:
        counter[0] += 1


@contextmanager
def counting_attempts() -> Iterator[list[int]]:
    """Count the HTTP attempts made inside the block; read ``counter[0]`` afterwards."""
    counter = [0]
    token = _counter.set(counter)
    try:
        yield counter
    finally:
        _counter.reset(token)
