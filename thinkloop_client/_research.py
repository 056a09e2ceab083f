"""What a researcher reads of a batch beyond its report (the items as a file, the manifest, the
figures, the live progress), batches' failed items sent again, the models, and the judges' validity
bench: one method group for each client."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Literal

import httpx

from thinkloop_client import _calls as calls
from thinkloop_client._base import STREAM_RETRIES, AsyncBase, SyncBase
from thinkloop_client._sse import ServerSentEvent, aconnect_sse, connect_sse
from thinkloop_client.errors import raise_for_problem
from thinkloop_client.models import Batch, BatchProgress, ModelInfo

ExportFormat = Literal["jsonl", "csv", "parquet"]
Figure = Literal["comparison", "levels", "rounds", "agreement", "flaws", "paired"]
Split = Literal["tune", "heldout", "all"]


def _progress(sse: ServerSentEvent) -> BatchProgress | None:
    """A progress frame as its model; None for a heartbeat."""
    return BatchProgress.model_validate(calls.event_data(sse.data)) if sse.data else None


class ResearchMethods(SyncBase):
    """Batch exports, manifest, figures and progress stream; retry-failed; models; judge validity."""

    def retry_failed(self, batch_id: str) -> Batch:
        """Send the batch's items that ended in error again (409 once cancelled or out of budget)."""
        return self._send(calls.batch_action(batch_id, "retry-failed"))

    def export_batch_items(self, batch_id: str, *, format: ExportFormat = "jsonl") -> bytes:
        """Every item as one row, as a file's bytes: jsonl (the manifest on the first line), csv,
        or parquet (the manifest in its metadata)."""
        return self._send(calls.export_batch_items(batch_id, format=format))

    def batch_manifest(self, batch_id: str) -> dict[str, Any]:
        """What the batch ran with: versions, dataset hash, endpoints, prompts, policy, cache."""
        return self._send(calls.batch_manifest(batch_id))

    def batch_figure(self, batch_id: str, name: Figure, *, format: Literal["svg", "png"] = "svg") -> bytes:
        """One of the report's figures as an image file's bytes."""
        return self._send(calls.batch_figure(batch_id, name, format=format))

    def stream_batch(self, batch_id: str) -> Iterator[BatchProgress]:
        """The batch's progress whenever its counts change; the last one is its end (the stream's
        ``batch.finished``). A dropped connection reconnects: each frame is the whole state."""
        retries = 0
        while True:
            try:
                with connect_sse(self._http, "GET", f"/v1/batches/{batch_id}/events") as source:
                    if source.response.is_error:
                        source.response.read()
                        raise_for_problem(source.response)
                    for sse in source.iter_sse():
                        if (progress := _progress(sse)) is not None:
                            retries = 0
                            yield progress
                        if sse.event == "batch.finished":
                            return
                time.sleep(0.5)  # closed before the end (a proxy's idle timeout): reconnect
            except httpx.TransportError:
                retries += 1
                if retries > STREAM_RETRIES:
                    raise
                time.sleep(min(0.2 * 2**retries, 5.0))

    def list_models(self) -> list[ModelInfo]:
        """Every usable model: the offline panel and the configured endpoints."""
        return self._send(calls.list_models())

    def check_model(self, name: str) -> ModelInfo:
        """Probe the model's endpoint and use what works from now on, for every project (an
        **operator** key's call; 422 for the offline panel)."""
        return self._send(calls.check_model(name))

    def validate_judges(
        self,
        items: Sequence[Mapping[str, Any]] | None = None,
        *,
        builtin: bool = False,
        judge_model: str | None = None,
        twins: bool = False,
        split: Split = "all",
        policy: str | None = None,
        format: Literal["json", "md", "html"] = "json",
    ) -> Any:
        """The validity bench on labelled ``items`` (each as one line of a labelled JSONL file) or
        the shipped set (``builtin=True``): a dict for json, the text for md and html."""
        return self._send(
            calls.validate_judges(
                items,
                builtin=builtin,
                judge_model=judge_model,
                twins=twins,
                split=split,
                policy=policy,
                format=format,
            )
        )

    def calibrate_judges(
        self,
        items: Sequence[Mapping[str, Any]] | None = None,
        *,
        builtin: bool = False,
        review_set: bool = False,
        alpha: float = 0.05,
        delta: float = 0.1,
        judge_model: str | None = None,
        split: Split = "heldout",
        policy: str | None = None,
        save: bool = False,
        set_name: str | None = None,
    ) -> Any:
        """The guaranteed acceptance threshold on labelled ``items``, the shipped set
        (``builtin=True``) or the project's review set (``review_set=True``): false accepts ≤
        ``alpha`` with confidence 1 − ``delta``. A dict: the threshold, its coverage, the scan's
        ``steps`` and, with ``save=True`` (a **validate** key), the ``record_id`` saved."""
        return self._send(
            calls.calibrate_judges(
                items,
                builtin=builtin,
                review_set=review_set,
                alpha=alpha,
                delta=delta,
                judge_model=judge_model,
                split=split,
                policy=policy,
                save=save,
                set_name=set_name,
            )
        )


class AsyncResearchMethods(AsyncBase):
    """The same as :class:`ResearchMethods`, awaited."""

    async def retry_failed(self, batch_id: str) -> Batch:
        """See :meth:`Client.retry_failed`."""
        return await self._send(calls.batch_action(batch_id, "retry-failed"))

    async def export_batch_items(self, batch_id: str, *, format: ExportFormat = "jsonl") -> bytes:
        """See :meth:`Client.export_batch_items`."""
        return await self._send(calls.export_batch_items(batch_id, format=format))

    async def batch_manifest(self, batch_id: str) -> dict[str, Any]:
        """See :meth:`Client.batch_manifest`."""
        return await self._send(calls.batch_manifest(batch_id))

    async def batch_figure(
        self, batch_id: str, name: Figure, *, format: Literal["svg", "png"] = "svg"
    ) -> bytes:
        """See :meth:`Client.batch_figure`."""
        return await self._send(calls.batch_figure(batch_id, name, format=format))

    async def stream_batch(self, batch_id: str) -> AsyncIterator[BatchProgress]:
        """See :meth:`Client.stream_batch`."""
        retries = 0
        while True:
            try:
                path = f"/v1/batches/{batch_id}/events"
                async with aconnect_sse(self._http, "GET", path) as source:
                    if source.response.is_error:
                        await source.response.aread()
                        raise_for_problem(source.response)
                    async for sse in source.aiter_sse():
                        if (progress := _progress(sse)) is not None:
                            retries = 0
                            yield progress
                        if sse.event == "batch.finished":
                            return
                await asyncio.sleep(0.5)
            except httpx.TransportError:
                retries += 1
                if retries > STREAM_RETRIES:
                    raise
                await asyncio.sleep(min(0.2 * 2**retries, 5.0))

    async def list_models(self) -> list[ModelInfo]:
        """See :meth:`Client.list_models`."""
        return await self._send(calls.list_models())

    async def check_model(self, name: str) -> ModelInfo:
        """See :meth:`Client.check_model`."""
        return await self._send(calls.check_model(name))

    async def validate_judges(
        self,
        items: Sequence[Mapping[str, Any]] | None = None,
        *,
        builtin: bool = False,
        judge_model: str | None = None,
        twins: bool = False,
        split: Split = "all",
        policy: str | None = None,
        format: Literal["json", "md", "html"] = "json",
    ) -> Any:
        """See :meth:`Client.validate_judges`."""
        return await self._send(
            calls.validate_judges(
                items,
                builtin=builtin,
                judge_model=judge_model,
                twins=twins,
                split=split,
                policy=policy,
                format=format,
            )
        )

    async def calibrate_judges(
        self,
        items: Sequence[Mapping[str, Any]] | None = None,
        *,
        builtin: bool = False,
        review_set: bool = False,
        alpha: float = 0.05,
        delta: float = 0.1,
        judge_model: str | None = None,
        split: Split = "heldout",
        policy: str | None = None,
        save: bool = False,
        set_name: str | None = None,
    ) -> Any:
        """See :meth:`Client.calibrate_judges`."""
        return await self._send(
            calls.calibrate_judges(
                items,
                builtin=builtin,
                review_set=review_set,
                alpha=alpha,
                delta=delta,
                judge_model=judge_model,
                split=split,
                policy=policy,
                save=save,
                set_name=set_name,
            )
        )
