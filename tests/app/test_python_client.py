"""The typed Python client against a live server: every call it makes, its errors, its stream, and
its models checked field by field against the server's OpenAPI schema."""

from __future__ import annotations

import asyncio
import json
import typing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.app.conftest import Keys, LiveServer
from thinkloop_client import (
    AsyncClient,
    Batch,
    BatchItem,
    Client,
    Conflict,
    Dataset,
    Delivery,
    InvalidRequest,
    JudgeVerdict,
    NotFound,
    Run,
    RunFinished,
    RunTrace,
    Unauthorized,
    WebhookEndpoint,
)
from thinkloop_client import models as client_models

ORCHESTRA = (
    "An orchestra of 120 players takes 40 minutes to play a symphony. How long would 60 players take?",
    "40 × 120 / 60 = 80 minutes.",
)
SAMPLE = Path(__file__).parents[2] / "app" / "samples" / "datasets" / "flawed-problems.jsonl"


def _sync_session(url: str, key: str) -> dict[str, Any]:
    """What a blocking integration does: submit, follow, read, list, then tidy up."""
    seen: dict[str, Any] = {}
    with Client(url, key) as tl:
        run = tl.create_run(*ORCHESTRA, metadata={"pupil": "P-17"}, max_rounds=3)
        assert isinstance(run, Run) and run.status in {"queued", "running"} and not isinstance(run, RunTrace)
        events = list(tl.stream_run(run.id))
        trace = tl.get_run(run.id)
        seen.update(run=run, events=events, trace=trace)
        seen["replayed"] = list(tl.stream_run(run.id, after=events[-3].seq))
        second = tl.create_run(*ORCHESTRA, metadata={"pupil": "P-17"})
        seen["listed"] = [r.id for r in tl.iter_runs(metadata=("pupil", "P-17"), limit=1)]  # a page each
        seen["second"] = second
        tl.wait_for_run(second.id, poll_s=0.1)
        seen["later"] = tl.list_runs(created_after=datetime.now(UTC) + timedelta(days=1)).items
        waited = tl.create_run(*ORCHESTRA, wait=True, idempotency_key="same-one")
        again = tl.create_run(*ORCHESTRA, wait=True, idempotency_key="same-one")
        seen.update(waited=waited, again=again)
        with pytest.raises(Conflict) as conflict:
            tl.cancel_run(run.id)
        seen["conflict"] = conflict.value
        with pytest.raises(InvalidRequest) as invalid:
            tl.create_run("Too many rounds?", max_rounds=99)
        seen["invalid"] = invalid.value
        tl.delete_run(waited.id)
        with pytest.raises(NotFound):
            tl.get_run(waited.id)
    return seen


async def test_a_blocking_client_submits_streams_reads_lists_and_deletes(
    live: tuple[LiveServer, Keys],
) -> None:
    server, keys = live
    seen = await asyncio.to_thread(_sync_session, server.url, keys.both)
    run, events, trace = seen["run"], seen["events"], seen["trace"]
    # The stream is typed, ordered and ends with the run's end, which the trace agrees with.
    assert [e.seq for e in events] == sorted(e.seq for e in events) and len({e.seq for e in events}) == len(
        events
    )
    assert [e.type for e in events[:2]] == ["run.started", "round.started"] and isinstance(
        events[-1], RunFinished
    )
    assert sum(isinstance(e, JudgeVerdict) for e in events) == 7 * len(trace.rounds)
    assert trace.status == events[-1].status and trace.status in {"accepted", "exhausted", "needs_review"}
    assert trace.problem.metadata == {"pupil": "P-17"} and trace.final is not None
    assert trace.final.round == trace.rounds[-1].round and 0 <= (trace.final.quality or 0) <= 1
    assert trace.metrics is not None and 0 <= trace.metrics["avg_quality_final"] <= 1
    # Resuming after an event replays exactly what followed it.
    assert [e.seq for e in seen["replayed"]] == [e.seq for e in events[-2:]]
    assert seen["listed"] == [seen["second"].id, run.id] and seen["later"] == []
    # wait=True returns the finished trace; the same Idempotency-Key returns that run again.
    assert isinstance(seen["waited"], RunTrace) and seen["waited"].ended
    assert seen["again"].id == seen["waited"].id
    assert seen["conflict"].status == 409 and seen["conflict"].request_id
    invalid = seen["invalid"]
    assert invalid.status == 422 and any("max_rounds" in json.dumps(e) for e in invalid.errors)


async def test_keys_that_cannot_see_a_run_get_typed_errors(live: tuple[LiveServer, Keys]) -> None:
    server, keys = live

    async def check() -> None:
        async with AsyncClient(server.url, keys.both) as mine:
            run = await mine.create_run(*ORCHESTRA)
            async with AsyncClient(server.url, keys.other) as theirs:
                with pytest.raises(NotFound):
                    await theirs.get_run(run.id)
                assert [r.id async for r in theirs.iter_runs()] == []
            async with AsyncClient(server.url, "tlk_not-a-key") as stranger:
                with pytest.raises(Unauthorized):
                    await stranger.get_run(run.id)
            async with AsyncClient(server.url, keys.read) as reader:
                finished = await reader.wait_for_run(run.id, poll_s=0.1)
                assert finished.id == run.id and finished.ended

    await check()


async def test_an_async_client_runs_a_batch_end_to_end(live: tuple[LiveServer, Keys]) -> None:
    server, keys = live
    async with AsyncClient(server.url, keys.both) as tl:
        dataset = await tl.upload_dataset(SAMPLE)
        assert isinstance(dataset, Dataset) and dataset.n_problems == 12
        assert dataset.id in [d.id async for d in tl.iter_datasets()]
        batch = await tl.create_batch(dataset.id, ["rubric"], max_rounds=2)
        assert isinstance(batch, Batch) and batch.progress.total == 12
        done = await tl.wait_for_batch(batch.id, poll_s=0.2)
        assert done.ended and done.progress.finished == 12
        items = [item async for item in tl.iter_batch_items(batch.id)]
        assert len(items) == 12 and all(isinstance(i, BatchItem) and i.run_id for i in items)
        one = await tl.get_run(items[0].run_id or "")
        assert one.batch_id == batch.id
        report = await tl.batch_report(batch.id)
        assert report["rows"][0]["model"] == "rubric"
        assert "<html" in (await tl.batch_report(batch.id, format="html")).lower()
        await tl.delete_batch(batch.id)
        with pytest.raises(NotFound):
            await tl.get_batch(batch.id)
        with pytest.raises(InvalidRequest) as bad:
            await tl.upload_dataset(b'{"question": ""}\n', name="bad.jsonl")
        assert bad.value.status == 422


async def test_webhook_endpoints_through_the_client(live: tuple[LiveServer, Keys]) -> None:
    server, keys = live
    async with AsyncClient(server.url, keys.both) as tl:
        endpoint = await tl.create_webhook_endpoint("http://127.0.0.1:9/hook", description="nobody listens")
        assert isinstance(endpoint, WebhookEndpoint) and endpoint.secret
        listed = await tl.list_webhook_endpoints()
        assert [e.id for e in listed] == [endpoint.id] and listed[0].secret is None
        ping = await tl.ping_webhook_endpoint(endpoint.id)
        assert isinstance(ping, Delivery) and ping.event == "ping"
        assert [d.id for d in await tl.endpoint_deliveries(endpoint.id)] == [ping.id]
        await tl.delete_webhook_endpoint(endpoint.id)
        assert await tl.list_webhook_endpoints() == []


# The client's models against the server's schema --------------------------------------------------

COMPONENTS = {
    client_models.Run: "RunPublic",
    client_models.RunTrace: "RunTrace",
    client_models.Round: "RoundPublic",
    client_models.Verdict: "VerdictPublic",
    client_models.Revision: "RevisionPublic",
    client_models.Version: "Version",
    client_models.Problem: "ProblemIn",
    client_models.CallFailure: "CallFailure",
    client_models.Delivery: "DeliveryPublic",
    client_models.Dataset: "DatasetPublic",
    client_models.RowIssue: "RowIssue",
    client_models.Batch: "BatchPublic",
    client_models.BatchProgress: "BatchProgress",
    client_models.BatchItem: "BatchItemPublic",
    client_models.WebhookEndpoint: "EndpointCreated",
}
EVENTS = {
    client_models.RoundStarted: "RoundStarted",
    client_models.JudgeVerdict: "JudgeVerdictEvent",
    client_models.RoundScored: "RoundScored",
    client_models.ReviserThinking: "ReviserThinking",
    client_models.RevisionProposed: "RevisionProposed",
    client_models.RunFinished: "RunFinished",
}
# Fields the service adds to a graph event as it streams it: the run's status, named as in traces.
ADDED_BY_THE_SERVICE = {("RunFinished", "status")}
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", datetime: "string"}


def _json_types(annotation: Any) -> set[str]:
    """The JSON types a Python annotation of the client accepts."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, __import__("types").UnionType):
        return set().union(*(_json_types(a) for a in typing.get_args(annotation)))
    if origin is typing.Literal:
        return {JSON_TYPES[type(a)] for a in typing.get_args(annotation)}
    if annotation is type(None):
        return {"null"}
    if origin in (list, tuple):
        return {"array"}
    if origin is dict or annotation is dict:
        return {"object"}
    if isinstance(annotation, type) and issubclass(annotation, client_models.BaseModel):
        return {"object"}
    if annotation is typing.Any:
        return {"string", "integer", "number", "boolean", "object", "array", "null"}
    return {JSON_TYPES[annotation]}


def _schema_types(schema: dict[str, Any], components: dict[str, Any]) -> set[str]:
    if "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in schema:
        return set().union(*(_schema_types(s, components) for s in schema["anyOf"]))
    if "allOf" in schema:
        return set().union(*(_schema_types(s, components) for s in schema["allOf"]))
    kind = schema.get("type")
    if kind is None:
        return {"object"} if "properties" in schema else {"string", "integer", "number", "boolean", "object"}
    types = {kind} if isinstance(kind, str) else set(kind)
    return types | ({"number"} if "integer" in types else set())


@pytest.mark.parametrize("which", ["resources", "events"])
def test_every_client_field_is_in_the_servers_schema_with_a_compatible_type(which: str) -> None:
    from app.main import create_app
    from graphs.events import RUN_EVENT_ADAPTER

    if which == "resources":
        components = create_app().openapi()["components"]["schemas"]
        pairs = COMPONENTS
    else:
        schema = RUN_EVENT_ADAPTER.json_schema(ref_template="#/components/schemas/{model}")
        components = schema["$defs"]
        pairs = EVENTS
    for model, name in pairs.items():
        server = components[name]["properties"]
        for field, info in model.model_fields.items():
            if field == "seq" or (name, field) in ADDED_BY_THE_SERVICE:  # seq: the SSE id
                continue
            assert field in server, f"{model.__name__}.{field} is not in the server's {name}"
            ours = _json_types(info.annotation)
            theirs = _schema_types(server[field], components)
            assert theirs <= ours | {"null"} or theirs & ours, (model.__name__, field, ours, theirs)
            if "null" in theirs and info.is_required():
                pytest.fail(f"{model.__name__}.{field} is required, but the server may send null")


def test_a_stream_closed_before_the_end_resumes_after_the_last_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A proxy that cuts the stream mid-run: the client asks for the run, sees it still going, and
    reconnects with Last-Event-ID; no event is lost or repeated."""
    import httpx

    from thinkloop_client import client as module

    monkeypatch.setattr(module.time, "sleep", lambda _: None)
    frames = {
        "0": 'id: 1\nevent: run.started\ndata: {"type": "run.started"}\n\n'
        'id: 2\nevent: reviser.thinking\ndata: {"type": "reviser.thinking", "round": 1, "delta": "hm"}\n\n',
        "2": "id: 3\nevent: run.failed\n"
        'data: {"type": "run.failed", "status": "cancelled", "reason": "stop"}\n\n',
    }
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/events"):
            after = request.headers.get("last-event-id", "0")
            asked.append(after)
            return httpx.Response(200, text=frames[after], headers={"content-type": "text/event-stream"})
        run = {"id": "r1", "status": "running", "model": "m", "judge_model": "j", "policy": "default"}
        run |= {
            "max_rounds": 3,
            "question": "q",
            "created_at": "2026-11-23T09:00:00Z",
            "problem": {"question": "q"},
        }
        return httpx.Response(200, json=run)

    with Client("http://thinkloop.test", "k", transport=httpx.MockTransport(answer)) as tl:
        events = list(tl.stream_run("r1"))
    assert asked == ["0", "2"] and [e.seq for e in events] == [1, 2, 3]
    assert [e.type for e in events] == ["run.started", "reviser.thinking", "run.failed"]
