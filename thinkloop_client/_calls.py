"""Every call of the API once: its method, path, parameters and how its answer is read.

Both clients send these; neither knows a URL or a field name that is not written here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, Literal, TypedDict, TypeVar, Unpack
from urllib.parse import quote

import httpx

from thinkloop_client.models import (
    AuditEntry,
    Batch,
    BatchComparison,
    BatchItem,
    Dataset,
    Delivery,
    Key,
    ModelInfo,
    Project,
    Review,
    ReviewDecision,
    ReviewDetail,
    Run,
    RunTrace,
    WebhookEndpoint,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP call and how to read its answer."""

    method: str
    path: str
    read: Callable[[httpx.Response], T]
    params: Mapping[str, Any] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list and the cursor of the next (None: this was the last)."""

    items: list[T]
    next_cursor: str | None


def _one(model: type[T]) -> Callable[[httpx.Response], T]:
    return lambda response: model.model_validate(response.json())  # type: ignore[attr-defined]


def _page(model: type[T]) -> Callable[[httpx.Response], Page[T]]:
    def read(response: httpx.Response) -> Page[T]:
        body = response.json()
        items = [model.model_validate(item) for item in body["items"]]  # type: ignore[attr-defined]
        return Page(items, body.get("next_cursor"))

    return read


def _items(model: type[T]) -> Callable[[httpx.Response], list[T]]:
    return lambda response: [model.model_validate(i) for i in response.json()["items"]]  # type: ignore[attr-defined]


def _nothing(_: httpx.Response) -> None:
    return None


def _json(response: httpx.Response) -> Any:
    return response.json()


def _text(response: httpx.Response) -> str:
    return response.text


def _bytes(response: httpx.Response) -> bytes:
    return response.content


def _run_or_trace(response: httpx.Response) -> Run:
    body = response.json()
    return RunTrace.model_validate(body) if "rounds" in body else Run.model_validate(body)


def _when(value: datetime | None) -> str | None:
    if value is not None and value.tzinfo is None:
        raise ValueError("give datetimes with a timezone (the server compares them in UTC)")
    return None if value is None else value.isoformat()


def _drop_none(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


# Runs ---------------------------------------------------------------------------------------------


class RunOptions(TypedDict, total=False):
    """How to run a problem; every key is optional (the server's settings fill the rest)."""

    metadata: Mapping[str, str | int | float | bool | None]  # kept with the run, e.g. {"pupil": "P-17"}
    model: str  # the model under test
    judge_model: str
    policy: Literal["default", "think-paper"]
    max_rounds: int  # 1-10
    webhook_url: str  # POSTed a signed run.finished event
    idempotency_key: str  # the same key again returns the first run instead of starting another
    wait: bool  # answer when the run ends (bounded by wait_s and the server's limit)
    wait_s: float


class RunFilters(TypedDict, total=False):
    """Which runs to list; every key is optional."""

    status: str
    model: str
    metadata: tuple[str, str]  # (key, value): runs whose metadata holds key with this text value
    created_after: datetime  # aware
    created_before: datetime  # aware
    source: Literal["api", "batch"]  # batch items' runs only, or only runs submitted on their own
    batch: str  # one batch's runs
    limit: int  # 1-100 per page


class BatchOptions(TypedDict, total=False):
    """How to run a batch; every key is optional."""

    judge_model: str
    policy: Literal["default", "think-paper"]
    max_rounds: int
    repeats: int
    control_arm: bool  # also one revision with no feedback, judged alike
    use_cache: bool
    budget_tokens: int
    budget_usd: float


def create_run(question: str, solution: str = "", **options: Unpack[RunOptions]) -> Call[Run]:
    chosen = {k: options.get(k) for k in ("model", "judge_model", "policy", "max_rounds")}
    body: dict[str, Any] = {
        "problem": {
            "question": question,
            "solution": solution,
            "metadata": dict(options.get("metadata") or {}),
        },
        "options": _drop_none(chosen),
    }
    if options.get("webhook_url") is not None:
        body["webhook_url"] = options["webhook_url"]
    key = options.get("idempotency_key")
    return Call(
        "POST",
        "/v1/runs",
        _run_or_trace,
        params=_drop_none({"wait": "true" if options.get("wait") else None, "wait_s": options.get("wait_s")}),
        json=body,
        headers={"Idempotency-Key": key} if key else {},
    )


def get_run(run_id: str) -> Call[RunTrace]:
    return Call("GET", f"/v1/runs/{run_id}", _one(RunTrace))


def list_runs(cursor: str | None = None, **filters: Unpack[RunFilters]) -> Call[Page[Run]]:
    metadata = filters.get("metadata")
    params = {
        "status": filters.get("status"),
        "model": filters.get("model"),
        "metadata": f"{metadata[0]}:{metadata[1]}" if metadata else None,
        "created_after": _when(filters.get("created_after")),
        "created_before": _when(filters.get("created_before")),
        "source": filters.get("source"),
        "batch": filters.get("batch"),
        "limit": filters.get("limit"),
        "cursor": cursor,
    }
    return Call("GET", "/v1/runs", _page(Run), params=_drop_none(params))


def cancel_run(run_id: str) -> Call[Run]:
    return Call("POST", f"/v1/runs/{run_id}/cancel", _one(Run))


def delete_run(run_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/runs/{run_id}", _nothing)


def run_deliveries(run_id: str) -> Call[list[Delivery]]:
    return Call("GET", f"/v1/runs/{run_id}/deliveries", _items(Delivery))


# Datasets -----------------------------------------------------------------------------------------

_MEDIA = {"jsonl": "application/x-ndjson", "csv": "text/csv", "think-csv": "text/csv"}


def upload_dataset(
    source: str | os.PathLike[str] | bytes, *, name: str | None = None, format: str | None = None
) -> Call[Dataset]:
    """``source`` is a file path, or the file's bytes (then ``name`` is required)."""
    if isinstance(source, bytes):
        if not name:
            raise ValueError("name the dataset when you upload bytes (its extension may tell the format)")
        content = source
    else:
        path = Path(source)
        content, name = path.read_bytes(), name or path.name
    suffix = Path(name).suffix.lstrip(".").lower()
    media = _MEDIA.get(format or suffix, "application/octet-stream")
    return Call(
        "POST",
        "/v1/datasets",
        _one(Dataset),
        params=_drop_none({"name": name, "format": format}),
        content=content,
        headers={"Content-Type": media},
    )


def get_dataset(dataset_id: str) -> Call[Dataset]:
    return Call("GET", f"/v1/datasets/{dataset_id}", _one(Dataset))


def list_datasets(*, limit: int = 20, cursor: str | None = None) -> Call[Page[Dataset]]:
    return Call("GET", "/v1/datasets", _page(Dataset), params=_drop_none({"limit": limit, "cursor": cursor}))


def delete_dataset(dataset_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/datasets/{dataset_id}", _nothing)


# Batches ------------------------------------------------------------------------------------------


def create_batch(dataset_id: str, models: list[str], **options: Unpack[BatchOptions]) -> Call[Batch]:
    body = _drop_none({"dataset_id": dataset_id, "models": list(models), **options})
    return Call("POST", "/v1/batches", _one(Batch), json=body)


def get_batch(batch_id: str) -> Call[Batch]:
    return Call("GET", f"/v1/batches/{batch_id}", _one(Batch))


def list_batches(*, limit: int = 20, cursor: str | None = None) -> Call[Page[Batch]]:
    return Call("GET", "/v1/batches", _page(Batch), params=_drop_none({"limit": limit, "cursor": cursor}))


def batch_action(batch_id: str, action: str) -> Call[Batch]:
    return Call("POST", f"/v1/batches/{batch_id}/{action}", _one(Batch))


def delete_batch(batch_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/batches/{batch_id}", _nothing)


def batch_items(
    batch_id: str,
    *,
    status: str | None = None,
    outcome: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
) -> Call[Page[BatchItem]]:
    params = _drop_none({"status": status, "outcome": outcome, "limit": limit, "cursor": cursor})
    return Call("GET", f"/v1/batches/{batch_id}/items", _page(BatchItem), params=params)


def batch_report(batch_id: str, *, format: str = "json") -> Call[Any]:
    read = _json if format == "json" else _text
    return Call("GET", f"/v1/batches/{batch_id}/report", read, params={"format": format})


def compare_batches(
    batch_id: str,
    model: str,
    with_model: str,
    *,
    arm: str = "loop",
    with_batch: str | None = None,
    with_arm: str = "loop",
) -> Call[BatchComparison]:
    params = _drop_none(
        {"model": model, "with_model": with_model, "arm": arm, "with_batch": with_batch, "with_arm": with_arm}
    )
    return Call("GET", f"/v1/batches/{batch_id}/compare", _one(BatchComparison), params=params)


def export_batch_items(batch_id: str, *, format: str = "jsonl") -> Call[bytes]:
    return Call("GET", f"/v1/batches/{batch_id}/items/export", _bytes, params={"format": format})


def batch_manifest(batch_id: str) -> Call[dict[str, Any]]:
    return Call("GET", f"/v1/batches/{batch_id}/manifest", _json)


def batch_figure(batch_id: str, name: str, *, format: str = "svg") -> Call[bytes]:
    return Call("GET", f"/v1/batches/{batch_id}/figures/{name}", _bytes, params={"format": format})


# Webhook endpoints --------------------------------------------------------------------------------


def create_webhook_endpoint(url: str, *, description: str = "") -> Call[WebhookEndpoint]:
    return Call(
        "POST", "/v1/webhook-endpoints", _one(WebhookEndpoint), json={"url": url, "description": description}
    )


def list_webhook_endpoints() -> Call[list[WebhookEndpoint]]:
    return Call("GET", "/v1/webhook-endpoints", _items(WebhookEndpoint))


def get_webhook_endpoint(endpoint_id: str) -> Call[WebhookEndpoint]:
    return Call("GET", f"/v1/webhook-endpoints/{endpoint_id}", _one(WebhookEndpoint))


def delete_webhook_endpoint(endpoint_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/webhook-endpoints/{endpoint_id}", _nothing)


def rotate_webhook_endpoint_secret(
    endpoint_id: str, *, keep_previous_s: float | None = None
) -> Call[WebhookEndpoint]:
    params = {} if keep_previous_s is None else {"keep_previous_s": keep_previous_s}
    path = f"/v1/webhook-endpoints/{endpoint_id}/rotate-secret"
    return Call("POST", path, _one(WebhookEndpoint), params=params)


def ping_webhook_endpoint(endpoint_id: str) -> Call[Delivery]:
    return Call("POST", f"/v1/webhook-endpoints/{endpoint_id}/test", _one(Delivery))


def endpoint_deliveries(endpoint_id: str) -> Call[list[Delivery]]:
    return Call("GET", f"/v1/webhook-endpoints/{endpoint_id}/deliveries", _items(Delivery))


# Models and judges --------------------------------------------------------------------------------


def list_models() -> Call[list[ModelInfo]]:
    return Call("GET", "/v1/models", _items(ModelInfo))


def check_model(name: str) -> Call[ModelInfo]:
    # a model's name is the registry's free-form key ("openai/gpt-4o"): one path segment, escaped
    return Call("POST", f"/v1/models/{quote(name, safe='')}/check", _one(ModelInfo))


def validate_judges(
    items: Sequence[Mapping[str, Any]] | None,
    *,
    builtin: bool,
    judge_model: str | None,
    twins: bool,
    split: str,
    policy: str | None,
    format: str,
) -> Call[Any]:
    body = {
        "items": None if items is None else [dict(item) for item in items],
        "builtin": builtin,
        "judge_model": judge_model,
        "twins": twins,
        "split": split,
        "policy": policy,
    }
    read = _json if format == "json" else _text
    return Call("POST", "/v1/judges/validate", read, params={"format": format}, json=_drop_none(body))


def calibrate_judges(
    items: Sequence[Mapping[str, Any]] | None,
    *,
    builtin: bool,
    review_set: bool,
    alpha: float,
    delta: float,
    judge_model: str | None,
    split: str,
    policy: str | None,
    save: bool,
    set_name: str | None,
) -> Call[Any]:
    body = {
        "items": None if items is None else [dict(item) for item in items],
        "builtin": builtin,
        "review_set": review_set,
        "alpha": alpha,
        "delta": delta,
        "judge_model": judge_model,
        "split": split,
        "policy": policy,
        "save": save,
        "set_name": set_name,
    }
    return Call("POST", "/v1/judges/calibrate", _json, json=_drop_none(body))


# Projects, keys and the audit log (operator, or a project's admin) ------------------------------------------


class ProjectCaps(TypedDict, total=False):
    """A project's own daily caps; None: the server's global setting. Only the keys given are sent."""

    daily_tokens: int | None
    daily_cost_usd: float | None


def create_project(name: str, **caps: Unpack[ProjectCaps]) -> Call[Project]:
    return Call("POST", "/v1/projects", _one(Project), json={"name": name, **caps})


def update_project(project_id: str, **caps: Unpack[ProjectCaps]) -> Call[Project]:
    return Call("PATCH", f"/v1/projects/{project_id}", _one(Project), json=dict(caps))


def list_projects() -> Call[list[Project]]:
    return Call("GET", "/v1/projects", _items(Project))


def create_key(
    project_id: str, name: str, *, scopes: Sequence[str], expires_at: datetime | None
) -> Call[Key]:
    body = _drop_none({"name": name, "scopes": list(scopes), "expires_at": _when(expires_at)})
    return Call("POST", f"/v1/projects/{project_id}/keys", _one(Key), json=body)


def list_keys(project_id: str) -> Call[list[Key]]:
    return Call("GET", f"/v1/projects/{project_id}/keys", _items(Key))


def revoke_key(key_id: str) -> Call[Key]:
    return Call("POST", f"/v1/keys/{key_id}/revoke", _one(Key))


class AuditFilters(TypedDict, total=False):
    """Which audit entries to list; every key is optional."""

    project_id: str
    action: str  # created, cancelled, paused, resumed, retried, revoked, deleted
    target_id: str
    limit: int  # 1-100 per page


def list_audit(cursor: str | None = None, **filters: Unpack[AuditFilters]) -> Call[Page[AuditEntry]]:
    params = _drop_none({**filters, "cursor": cursor})
    return Call("GET", "/v1/audit", _page(AuditEntry), params=params)


# The SSE streams ----------------------------------------------------------------------------------


def event_data(data: str) -> dict[str, Any]:
    """An SSE frame's JSON data."""
    value = json.loads(data)
    if not isinstance(value, dict):
        raise ValueError(f"an event's data is not a JSON object: {data[:80]!r}")
    return value


def redeliver(run_id: str, delivery_id: str) -> Call[Delivery]:
    return Call("POST", f"/v1/runs/{run_id}/deliveries/{delivery_id}/redeliver", _one(Delivery))


# Reviews ------------------------------------------------------------------------------------------


def list_reviews(
    cursor: str | None = None,
    *,
    status: str | None = None,
    reason: str | None = None,
    limit: int | None = None,
) -> Call[Page[Review]]:
    params = {"status": status, "reason": reason, "limit": limit, "cursor": cursor}
    return Call("GET", "/v1/reviews", _page(Review), params=_drop_none(params))


def get_review(review_id: str) -> Call[ReviewDetail]:
    return Call("GET", f"/v1/reviews/{quote(review_id, safe='')}", _one(ReviewDetail))


def decide_review(review_id: str, body: dict[str, Any], idempotency_key: str | None) -> Call[ReviewDecision]:
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    path = f"/v1/reviews/{quote(review_id, safe='')}/decision"
    return Call("POST", path, _one(ReviewDecision), json=_drop_none(body), headers=headers)


def request_review(run_id: str, note: str | None) -> Call[Review]:
    path = f"/v1/runs/{quote(run_id, safe='')}/review-requests"
    return Call("POST", path, _one(Review), json=_drop_none({"note": note}))


def review_set() -> Call[dict[str, Any]]:
    return Call("GET", "/v1/reviews/set", lambda response: dict(response.json()))


def review_agreement(judge_model: str | None = None) -> Call[dict[str, Any]]:
    params = _drop_none({"judge_model": judge_model})
    return Call("GET", "/v1/reviews/agreement", lambda response: dict(response.json()), params=params)
