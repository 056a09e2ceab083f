"""What the method groups of both clients rely on: sending a call and paging through a list."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import TypeVar

import httpx

from thinkloop_client._calls import Call, Page

T = TypeVar("T")
STREAM_RETRIES = 5  # reconnections in a row before a stream's transport error is raised


class SyncBase:
    """Declares what :class:`~thinkloop_client.Client` provides to its method groups."""

    _http: httpx.Client

    def _send(self, call: Call[T]) -> T:
        raise NotImplementedError

    def _pages(self, first: Call[Page[T]], again: Callable[[str], Call[Page[T]]]) -> Iterator[T]:
        raise NotImplementedError


class AsyncBase:
    """Declares what :class:`~thinkloop_client.AsyncClient` provides to its method groups."""

    _http: httpx.AsyncClient

    async def _send(self, call: Call[T]) -> T:
        raise NotImplementedError

    def _pages(self, first: Call[Page[T]], again: Callable[[str], Call[Page[T]]]) -> AsyncIterator[T]:
        raise NotImplementedError
