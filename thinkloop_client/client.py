"""Two thin clients over httpx, one blocking and one asyncio, with the same methods.

Each method is one call of ``_calls`` (where the API's paths and fields are written once); errors
raise the typed :mod:`thinkloop_client.errors`; lists page through cursors; a run's events stream
over SSE and resume after the last event seen when the connection drops.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from types import TracebackType
from typing import Any, Self, TypeVar, Unpack

import httpx

from thinkloop_client import _calls as calls
from thinkloop_client._admin import AdminMethods, AsyncAdminMethods
from thinkloop_client._base import STREAM_RETRIES
from thinkloop_client._calls import BatchOptions, Call, Page, RunFilters, RunOptions
from thinkloop_client._research import AsyncResearchMethods, ResearchMethods
from thinkloop_client._reviews import AsyncReviewMethods, ReviewMethods
from thinkloop_client._sse import ServerSentEvent, aconnect_sse, connect_sse
from thinkloop_client.errors import raise_for_problem
from thinkloop_client.models import (
    LAST_EVENTS,
    Batch,
    BatchComparison,
    BatchItem,
    Dataset,
    Delivery,
    Event,
    Run,
    RunTrace,
    WebhookEndpoint,
    parse_event,
)

T = TypeVar("T")
DEFAULT_URL = "http://127.0.0.1:8000"


def _settings(base_url: str | None, api_key: str | None) -> tuple[str, dict[str, str]]:
    url = base_url or os.environ.get("THINKLOOP_URL") or DEFAULT_URL
    key = api_key if api_key is not None else os.environ.get("THINKLOOP_API_KEY")
    headers = {"User-Agent": "thinkloop-client"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return url.rstrip("/"), headers


def _request(http: httpx.Client | httpx.AsyncClient, call: Call[Any]) -> httpx.Request:
    return http.build_request(
        call.method,
        call.path,
        params=call.params,
        json=call.json,
        content=call.content,
        headers=dict(call.headers),
    )


def _event(sse: ServerSentEvent, after: int) -> Event | None:
    """A stream's frame as its typed event, numbered by its SSE id; None for a heartbeat."""
    if not sse.data:
        return None
    seq = int(sse.id) if sse.id and sse.id.isdigit() else after
    return parse_event(calls.event_data(sse.data), seq)


class _Deadline:
    """``timeout_s`` from now (None: never); ``check`` raises TimeoutError once it has passed."""

    def __init__(self, timeout_s: float | None) -> None:
        self._at = None if timeout_s is None else time.monotonic() + timeout_s

    def check(self, still: str) -> None:
        if self._at is not None and time.monotonic() >= self._at:
            raise TimeoutError(still)


class Client(ResearchMethods, AdminMethods, ReviewMethods):
    """The blocking client. ``Client(base_url, api_key)``; both default to ``THINKLOOP_URL`` and
    ``THINKLOOP_API_KEY`` (then ``http://127.0.0.1:8000`` and no key). Use it as a context manager,
    or call :meth:`close`."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        url, headers = _settings(base_url, api_key)
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout, transport=transport)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def _send(self, call: Call[T]) -> T:
        response = self._http.send(_request(self._http, call))
        raise_for_problem(response)
        return call.read(response)

    def _pages(self, first: Call[Page[T]], again: Callable[[str], Call[Page[T]]]) -> Iterator[T]:
        page = self._send(first)
        while True:
            yield from page.items
            if page.next_cursor is None:
                return
            page = self._send(again(page.next_cursor))

    # Runs
    def create_run(self, question: str, solution: str = "", **options: Unpack[RunOptions]) -> Run:
        """Submit a problem; the queued run (a :class:`RunTrace` when ``wait=True`` and it ended in time).
        Options: metadata, model, judge_model, policy, max_rounds, webhook_url, idempotency_key,
        wait, wait_s."""
        return self._send(calls.create_run(question, solution, **options))

    def get_run(self, run_id: str) -> RunTrace:
        """The run's full trace."""
        return self._send(calls.get_run(run_id))

    def list_runs(self, cursor: str | None = None, **filters: Unpack[RunFilters]) -> Page[Run]:
        """One page of the project's runs, newest first. Filters: status, model, metadata=(key, value),
        created_after, created_before (aware datetimes), limit, cursor."""
        return self._send(calls.list_runs(cursor, **filters))

    def iter_runs(self, **filters: Unpack[RunFilters]) -> Iterator[Run]:
        """Every run that matches, page after page."""
        return self._pages(calls.list_runs(**filters), lambda c: calls.list_runs(c, **filters))

    def cancel_run(self, run_id: str) -> Run:
        """Cancel a queued or running run (409 once it ended)."""
        return self._send(calls.cancel_run(run_id))

    def delete_run(self, run_id: str) -> None:
        """Delete the run and every trace of it."""
        self._send(calls.delete_run(run_id))

    def run_deliveries(self, run_id: str) -> list[Delivery]:
        """The run's webhook deliveries, newest first."""
        return self._send(calls.run_deliveries(run_id))

    def redeliver(self, run_id: str, delivery_id: str) -> Delivery:
        """Send one of the run's webhooks again."""
        return self._send(calls.redeliver(run_id, delivery_id))

    def stream_run(self, run_id: str, *, after: int = 0) -> Iterator[Event]:
        """The run's events as they happen (or replayed), typed; ends after its last event
        (``run.finished`` or ``run.failed``). A dropped connection resumes after the last event seen."""
        retries = 0
        while True:
            finished = False
            try:
                headers = {"Last-Event-ID": str(after)} if after else {}
                with connect_sse(self._http, "GET", f"/v1/runs/{run_id}/events", headers=headers) as source:
                    if source.response.is_error:
                        source.response.read()
                        raise_for_problem(source.response)
                    for sse in source.iter_sse():
                        if (event := _event(sse, after)) is None:
                            continue  # a heartbeat
                        after, retries = event.seq, 0
                        yield event
                        finished = event.type in LAST_EVENTS
                if finished or self.get_run(run_id).ended:
                    return
                time.sleep(0.5)  # closed cleanly before the end (a proxy's idle timeout): reconnect
            except httpx.TransportError:
                retries += 1
                if retries > STREAM_RETRIES:
                    raise
                time.sleep(min(0.2 * 2**retries, 5.0))

    def wait_for_run(self, run_id: str, *, poll_s: float = 1.0, timeout_s: float | None = None) -> RunTrace:
        """Block until the run ends and return its trace (``TimeoutError`` after ``timeout_s``)."""
        deadline = _Deadline(timeout_s)
        while not (trace := self.get_run(run_id)).ended:
            deadline.check(f"run {run_id} is still {trace.status}")
            time.sleep(poll_s)
        return trace

    # Datasets
    def upload_dataset(
        self, source: str | os.PathLike[str] | bytes, *, name: str | None = None, format: str | None = None
    ) -> Dataset:
        """Register a problem set from a file path (or bytes with a ``name``): JSONL, CSV or think-csv."""
        return self._send(calls.upload_dataset(source, name=name, format=format))

    def get_dataset(self, dataset_id: str) -> Dataset:
        """One dataset."""
        return self._send(calls.get_dataset(dataset_id))

    def iter_datasets(self) -> Iterator[Dataset]:
        """Every dataset of the project, newest first."""
        return self._pages(calls.list_datasets(), lambda c: calls.list_datasets(cursor=c))

    def delete_dataset(self, dataset_id: str) -> None:
        """Delete a dataset (409 while a batch still uses it)."""
        self._send(calls.delete_dataset(dataset_id))

    # Batches
    def create_batch(self, dataset_id: str, models: list[str], **options: Unpack[BatchOptions]) -> Batch:
        """Start a batch. Options: judge_model, policy, max_rounds, repeats, control_arm, use_cache,
        budget_tokens, budget_usd."""
        return self._send(calls.create_batch(dataset_id, models, **options))

    def get_batch(self, batch_id: str) -> Batch:
        """One batch with its progress."""
        return self._send(calls.get_batch(batch_id))

    def iter_batches(self) -> Iterator[Batch]:
        """Every batch of the project, newest first."""
        return self._pages(calls.list_batches(), lambda c: calls.list_batches(cursor=c))

    def pause_batch(self, batch_id: str) -> Batch:
        """Start no further item until resumed."""
        return self._send(calls.batch_action(batch_id, "pause"))

    def resume_batch(self, batch_id: str) -> Batch:
        """Resume a paused batch."""
        return self._send(calls.batch_action(batch_id, "resume"))

    def cancel_batch(self, batch_id: str) -> Batch:
        """Cancel a batch's unfinished items."""
        return self._send(calls.batch_action(batch_id, "cancel"))

    def delete_batch(self, batch_id: str) -> None:
        """Delete a batch and its items' runs."""
        self._send(calls.delete_batch(batch_id))

    def iter_batch_items(
        self, batch_id: str, *, status: str | None = None, outcome: str | None = None
    ) -> Iterator[BatchItem]:
        """Every item of the batch in order (optionally with one status, or one outcome)."""
        return self._pages(
            calls.batch_items(batch_id, status=status, outcome=outcome),
            lambda c: calls.batch_items(batch_id, status=status, outcome=outcome, cursor=c),
        )

    def batch_report(self, batch_id: str, *, format: str = "json") -> Any:
        """The batch report: a dict for json, the text for md, csv and html."""
        return self._send(calls.batch_report(batch_id, format=format))

    def compare_batches(
        self,
        batch_id: str,
        model: str,
        with_model: str,
        *,
        arm: str = "loop",
        with_batch: str | None = None,
        with_arm: str = "loop",
    ) -> BatchComparison:
        """``model``/``arm`` of this batch against ``with_model``/``with_arm`` of ``with_batch`` (default:
        this batch), paired on the problems both scored: McNemar, BCa interval, Wilcoxon."""
        return self._send(
            calls.compare_batches(
                batch_id, model, with_model, arm=arm, with_batch=with_batch, with_arm=with_arm
            )
        )

    def wait_for_batch(self, batch_id: str, *, poll_s: float = 2.0, timeout_s: float | None = None) -> Batch:
        """Block until the batch ends and return it (``TimeoutError`` after ``timeout_s``)."""
        deadline = _Deadline(timeout_s)
        while not (batch := self.get_batch(batch_id)).ended:
            deadline.check(f"batch {batch_id} is still {batch.progress.status}")
            time.sleep(poll_s)
        return batch

    # Webhook endpoints
    def create_webhook_endpoint(self, url: str, *, description: str = "") -> WebhookEndpoint:
        """Register a receiver; the answer carries its signing ``secret``, shown this once."""
        return self._send(calls.create_webhook_endpoint(url, description=description))

    def list_webhook_endpoints(self) -> list[WebhookEndpoint]:
        """The project's receivers, oldest first."""
        return self._send(calls.list_webhook_endpoints())

    def get_webhook_endpoint(self, endpoint_id: str) -> WebhookEndpoint:
        """One receiver (without its secret)."""
        return self._send(calls.get_webhook_endpoint(endpoint_id))

    def delete_webhook_endpoint(self, endpoint_id: str) -> None:
        """Remove a receiver."""
        self._send(calls.delete_webhook_endpoint(endpoint_id))

    def rotate_webhook_endpoint_secret(
        self, endpoint_id: str, *, keep_previous_s: float | None = None
    ) -> WebhookEndpoint:
        """Give the receiver a new ``secret`` (shown this once); the old one signs beside it for
        ``keep_previous_s`` seconds (the server's default if None, 0 for not at all)."""
        call = calls.rotate_webhook_endpoint_secret(endpoint_id, keep_previous_s=keep_previous_s)
        return self._send(call)

    def ping_webhook_endpoint(self, endpoint_id: str) -> Delivery:
        """Send a signed ``ping`` event to the receiver."""
        return self._send(calls.ping_webhook_endpoint(endpoint_id))

    def endpoint_deliveries(self, endpoint_id: str) -> list[Delivery]:
        """What was sent to the receiver, newest first."""
        return self._send(calls.endpoint_deliveries(endpoint_id))


class AsyncClient(AsyncResearchMethods, AsyncAdminMethods, AsyncReviewMethods):
    """The asyncio client: the same methods as :class:`Client`, awaited."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        url, headers = _settings(base_url, api_key)
        self._http = httpx.AsyncClient(base_url=url, headers=headers, timeout=timeout, transport=transport)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def _send(self, call: Call[T]) -> T:
        response = await self._http.send(_request(self._http, call))
        raise_for_problem(response)
        return call.read(response)

    async def _pages(self, first: Call[Page[T]], again: Callable[[str], Call[Page[T]]]) -> AsyncIterator[T]:
        page = await self._send(first)
        while True:
            for item in page.items:
                yield item
            if page.next_cursor is None:
                return
            page = await self._send(again(page.next_cursor))

    async def create_run(self, question: str, solution: str = "", **options: Unpack[RunOptions]) -> Run:
        """See :meth:`Client.create_run`."""
        return await self._send(calls.create_run(question, solution, **options))

    async def get_run(self, run_id: str) -> RunTrace:
        """The run's full trace."""
        return await self._send(calls.get_run(run_id))

    async def list_runs(self, cursor: str | None = None, **filters: Unpack[RunFilters]) -> Page[Run]:
        """See :meth:`Client.list_runs`."""
        return await self._send(calls.list_runs(cursor, **filters))

    def iter_runs(self, **filters: Unpack[RunFilters]) -> AsyncIterator[Run]:
        """Every run that matches, page after page."""
        return self._pages(calls.list_runs(**filters), lambda c: calls.list_runs(c, **filters))

    async def cancel_run(self, run_id: str) -> Run:
        """Cancel a queued or running run (409 once it ended)."""
        return await self._send(calls.cancel_run(run_id))

    async def delete_run(self, run_id: str) -> None:
        """Delete the run and every trace of it."""
        await self._send(calls.delete_run(run_id))

    async def run_deliveries(self, run_id: str) -> list[Delivery]:
        """The run's webhook deliveries, newest first."""
        return await self._send(calls.run_deliveries(run_id))

    async def redeliver(self, run_id: str, delivery_id: str) -> Delivery:
        """Send one of the run's webhooks again."""
        return await self._send(calls.redeliver(run_id, delivery_id))

    async def stream_run(self, run_id: str, *, after: int = 0) -> AsyncIterator[Event]:
        """See :meth:`Client.stream_run`."""
        retries = 0
        while True:
            finished = False
            try:
                headers = {"Last-Event-ID": str(after)} if after else {}
                async with aconnect_sse(
                    self._http, "GET", f"/v1/runs/{run_id}/events", headers=headers
                ) as source:
                    if source.response.is_error:
                        await source.response.aread()
                        raise_for_problem(source.response)
                    async for sse in source.aiter_sse():
                        if (event := _event(sse, after)) is None:
                            continue  # a heartbeat
                        after, retries = event.seq, 0
                        yield event
                        finished = event.type in LAST_EVENTS
                if finished or (await self.get_run(run_id)).ended:
                    return
                await asyncio.sleep(0.5)  # closed cleanly before the end: reconnect after the last event
            except httpx.TransportError:
                retries += 1
                if retries > STREAM_RETRIES:
                    raise
                await asyncio.sleep(min(0.2 * 2**retries, 5.0))

    async def wait_for_run(
        self, run_id: str, *, poll_s: float = 1.0, timeout_s: float | None = None
    ) -> RunTrace:
        """See :meth:`Client.wait_for_run`."""
        deadline = _Deadline(timeout_s)
        while not (trace := await self.get_run(run_id)).ended:
            deadline.check(f"run {run_id} is still {trace.status}")
            await asyncio.sleep(poll_s)
        return trace

    async def upload_dataset(
        self, source: str | os.PathLike[str] | bytes, *, name: str | None = None, format: str | None = None
    ) -> Dataset:
        """See :meth:`Client.upload_dataset`."""
        return await self._send(calls.upload_dataset(source, name=name, format=format))

    async def get_dataset(self, dataset_id: str) -> Dataset:
        """One dataset."""
        return await self._send(calls.get_dataset(dataset_id))

    def iter_datasets(self) -> AsyncIterator[Dataset]:
        """Every dataset of the project, newest first."""
        return self._pages(calls.list_datasets(), lambda c: calls.list_datasets(cursor=c))

    async def delete_dataset(self, dataset_id: str) -> None:
        """Delete a dataset."""
        await self._send(calls.delete_dataset(dataset_id))

    async def create_batch(
        self, dataset_id: str, models: list[str], **options: Unpack[BatchOptions]
    ) -> Batch:
        """See :meth:`Client.create_batch`."""
        return await self._send(calls.create_batch(dataset_id, models, **options))

    async def get_batch(self, batch_id: str) -> Batch:
        """One batch with its progress."""
        return await self._send(calls.get_batch(batch_id))

    def iter_batches(self) -> AsyncIterator[Batch]:
        """Every batch of the project, newest first."""
        return self._pages(calls.list_batches(), lambda c: calls.list_batches(cursor=c))

    async def pause_batch(self, batch_id: str) -> Batch:
        """Start no further item until resumed."""
        return await self._send(calls.batch_action(batch_id, "pause"))

    async def resume_batch(self, batch_id: str) -> Batch:
        """Resume a paused batch."""
        return await self._send(calls.batch_action(batch_id, "resume"))

    async def cancel_batch(self, batch_id: str) -> Batch:
        """Cancel a batch's unfinished items."""
        return await self._send(calls.batch_action(batch_id, "cancel"))

    async def delete_batch(self, batch_id: str) -> None:
        """Delete a batch and its items' runs."""
        await self._send(calls.delete_batch(batch_id))

    def iter_batch_items(
        self, batch_id: str, *, status: str | None = None, outcome: str | None = None
    ) -> AsyncIterator[BatchItem]:
        """See :meth:`Client.iter_batch_items`."""
        return self._pages(
            calls.batch_items(batch_id, status=status, outcome=outcome),
            lambda c: calls.batch_items(batch_id, status=status, outcome=outcome, cursor=c),
        )

    async def batch_report(self, batch_id: str, *, format: str = "json") -> Any:
        """See :meth:`Client.batch_report`."""
        return await self._send(calls.batch_report(batch_id, format=format))

    async def compare_batches(
        self,
        batch_id: str,
        model: str,
        with_model: str,
        *,
        arm: str = "loop",
        with_batch: str | None = None,
        with_arm: str = "loop",
    ) -> BatchComparison:
        """See :meth:`Client.compare_batches`."""
        call = calls.compare_batches(
            batch_id, model, with_model, arm=arm, with_batch=with_batch, with_arm=with_arm
        )
        return await self._send(call)

    async def wait_for_batch(
        self, batch_id: str, *, poll_s: float = 2.0, timeout_s: float | None = None
    ) -> Batch:
        """See :meth:`Client.wait_for_batch`."""
        deadline = _Deadline(timeout_s)
        while not (batch := await self.get_batch(batch_id)).ended:
            deadline.check(f"batch {batch_id} is still {batch.progress.status}")
            await asyncio.sleep(poll_s)
        return batch

    async def create_webhook_endpoint(self, url: str, *, description: str = "") -> WebhookEndpoint:
        """See :meth:`Client.create_webhook_endpoint`."""
        return await self._send(calls.create_webhook_endpoint(url, description=description))

    async def list_webhook_endpoints(self) -> list[WebhookEndpoint]:
        """The project's receivers, oldest first."""
        return await self._send(calls.list_webhook_endpoints())

    async def get_webhook_endpoint(self, endpoint_id: str) -> WebhookEndpoint:
        """One receiver (without its secret)."""
        return await self._send(calls.get_webhook_endpoint(endpoint_id))

    async def delete_webhook_endpoint(self, endpoint_id: str) -> None:
        """Remove a receiver."""
        await self._send(calls.delete_webhook_endpoint(endpoint_id))

    async def rotate_webhook_endpoint_secret(
        self, endpoint_id: str, *, keep_previous_s: float | None = None
    ) -> WebhookEndpoint:
        """See :meth:`Client.rotate_webhook_endpoint_secret`."""
        call = calls.rotate_webhook_endpoint_secret(endpoint_id, keep_previous_s=keep_previous_s)
        return await self._send(call)

    async def ping_webhook_endpoint(self, endpoint_id: str) -> Delivery:
        """Send a signed ``ping`` event to the receiver."""
        return await self._send(calls.ping_webhook_endpoint(endpoint_id))

    async def endpoint_deliveries(self, endpoint_id: str) -> list[Delivery]:
        """What was sent to the receiver, newest first."""
        return await self._send(calls.endpoint_deliveries(endpoint_id))
