"""The typed Python client against a live server: every call it makes, its errors, its stream, and
its models checked field by field against the server's OpenAPI schema."""

from __future__ import annotations

import asyncio
import inspect
import json
import typing
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pydantic
import pytest

from agents.simulator import SimulatorServer
from app.main import create_app
from tests.helpers.paths import SAMPLES
from tests.helpers.service import Keys, LiveServer, live_server
from thinkloop_client import (
    AsyncClient,
    Batch,
    BatchComparison,
    BatchItem,
    BatchProgress,
    Client,
    Conflict,
    Dataset,
    Delivery,
    Forbidden,
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
SAMPLE = SAMPLES / "datasets" / "flawed-problems.jsonl"


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
    assert trace.status == events[-1].status
    assert trace.status in {"accepted", "screened", "exhausted", "needs_review"}
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
        rotated = await tl.rotate_webhook_endpoint_secret(endpoint.id)
        assert rotated.secret not in (None, endpoint.secret) and rotated.previous_until is not None
        ping = await tl.ping_webhook_endpoint(endpoint.id)
        assert isinstance(ping, Delivery) and ping.event == "ping"
        assert [d.id for d in await tl.endpoint_deliveries(endpoint.id)] == [ping.id]
        await tl.delete_webhook_endpoint(endpoint.id)
        assert await tl.list_webhook_endpoints() == []


# Every public method of both clients, against a live server -------------------------------------

CONTROL = {
    "id": "apples",
    "split": "tune",
    "kind": "control",
    "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
    "solution": "3 × 4 = 12, so Tom has 12 apples.",
}
ONLY_HERE = {"close", "aclose"}


def public_methods(kind: type[Any]) -> set[str]:
    """The methods a user of the client calls."""
    return {n for n in dir(kind) if not n.startswith("_") and callable(getattr(kind, n))} - ONLY_HERE


class Tour:
    """A client of either kind driven from async code (a blocking one in a thread); every method
    called is noted in ``called``, and lazy answers (iterators, streams) are read to the end."""

    def __init__(self, client: Client | AsyncClient, called: set[str]) -> None:
        self.client, self.called = client, called

    async def __call__(self, method_name: str, /, *args: Any, **kwargs: Any) -> Any:
        self.called.add(method_name)
        method = getattr(self.client, method_name)
        if isinstance(self.client, Client):
            return await asyncio.to_thread(lambda: _read(method(*args, **kwargs)))
        answer = method(*args, **kwargs)
        if inspect.isawaitable(answer):
            return await answer
        return [item async for item in answer] if isinstance(answer, AsyncIterator) else answer


def _read(answer: Any) -> Any:
    return list(answer) if isinstance(answer, Iterator) else answer


@asynccontextmanager
async def tour(kind: str, url: str, key: str, called: set[str]) -> AsyncIterator[Tour]:
    """A blocking or an asyncio client on the server with this key."""
    if kind == "blocking":
        with Client(url, key) as blocking:
            yield Tour(blocking, called)
    else:
        async with AsyncClient(url, key) as awaiting:
            yield Tour(awaiting, called)


@pytest.fixture
async def live_with_broken(
    database_url: str, simulator_server: SimulatorServer
) -> AsyncIterator[tuple[LiveServer, Keys]]:
    """The API on uvicorn with the simulator as 'sim' and an endpoint that answers 404 as 'broken'."""
    base = {"model": "sim-1", "base_url": simulator_server.base_url, "timeout_s": 5, "max_retries": 1}
    broken = {"model": "b", "base_url": f"{simulator_server.base_url}/missing", "max_retries": 0}
    async with live_server(database_url, simulator_server, models={"sim": base, "broken": broken}) as served:
        yield served


async def _runs_and_webhooks(tl: Tour) -> None:
    endpoint = await tl("create_webhook_endpoint", "http://127.0.0.1:9/hook", description="nobody listens")
    assert isinstance(endpoint, WebhookEndpoint) and endpoint.secret
    got = await tl("get_webhook_endpoint", endpoint.id)
    assert (got.id, got.url, got.description, got.secret) == (
        endpoint.id,
        endpoint.url,
        "nobody listens",
        None,
    )
    assert [e.id for e in await tl("list_webhook_endpoints")] == [endpoint.id]
    rotated = await tl("rotate_webhook_endpoint_secret", endpoint.id, keep_previous_s=0)
    assert rotated.secret not in (None, endpoint.secret) and rotated.previous_until is None
    run = await tl("create_run", *ORCHESTRA, metadata={"pupil": "P-9"}, max_rounds=2)
    events = await tl("stream_run", run.id)
    assert events[0].type == "run.started" and isinstance(events[-1], RunFinished)
    trace = await tl("wait_for_run", run.id, poll_s=0.05)
    assert trace.ended and trace.status == events[-1].status
    assert (await tl("get_run", run.id)).rounds == trace.rounds
    second = await tl("create_run", *ORCHESTRA, wait=True)
    page = await tl("list_runs", limit=1)
    assert [r.id for r in page.items] == [second.id] and page.next_cursor
    assert [r.id for r in await tl("iter_runs", metadata=("pupil", "P-9"))] == [run.id]
    (sent,) = await tl("run_deliveries", run.id)  # the endpoint hears of every run that ends
    assert sent.event == "run.finished" and sent.url == endpoint.url
    again = await tl("redeliver", run.id, sent.id)
    assert isinstance(again, Delivery) and again.id != sent.id and again.event == sent.event
    assert {d.id for d in await tl("run_deliveries", run.id)} == {sent.id, again.id}
    ping = await tl("ping_webhook_endpoint", endpoint.id)
    assert ping.event == "ping" and ping.id in [d.id for d in await tl("endpoint_deliveries", endpoint.id)]
    with pytest.raises(Conflict):
        await tl("cancel_run", run.id)
    await tl("delete_run", run.id)
    with pytest.raises(NotFound):
        await tl("get_run", run.id)
    await tl("delete_webhook_endpoint", endpoint.id)
    with pytest.raises(NotFound):
        await tl("get_webhook_endpoint", endpoint.id)


async def _steered_batch(tl: Tour, dataset_id: str) -> str:
    """Paused, resumed and cancelled while its items wait on the simulator; returns its id."""
    batch = await tl("create_batch", dataset_id, ["sim"], judge_model="sim", repeats=3)
    assert (await tl("pause_batch", batch.id)).progress.status == "paused"
    assert (await tl("resume_batch", batch.id)).progress.status == "running"
    assert (await tl("cancel_batch", batch.id)).progress.status == "cancelled"
    last = (await tl("stream_batch", batch.id))[-1]  # the stream ends once no item runs
    assert last.status == "cancelled" and last.items.get("cancelled", 0) > 0 and "running" not in last.items
    with pytest.raises(Conflict):
        await tl("resume_batch", batch.id)
    return str(batch.id)


async def _failed_items_retried(tl: Tour, dataset_id: str) -> str:
    """A batch whose model under test answers 404: its revised items fail, and are sent again."""
    batch = await tl("create_batch", dataset_id, ["broken"])
    done = await tl("wait_for_batch", batch.id, poll_s=0.05)
    failed = done.progress.items.get("error", 0)
    assert done.ended and failed > 0
    assert (await tl("retry_failed", batch.id)).progress.status == "running"
    again = await tl("wait_for_batch", batch.id, poll_s=0.05)
    assert again.progress.items == done.progress.items
    errors = await tl("iter_batch_items", batch.id, status="error")
    assert len(errors) == failed and all(item.outcome == "error" for item in errors)
    return str(batch.id)


async def _batch_outputs(tl: Tour, dataset_id: str) -> str:
    """A finished batch as a researcher reads it: progress, items, exports, manifest, figure, report."""
    batch = await tl("create_batch", dataset_id, ["rubric"], control_arm=True, max_rounds=2)
    progress = await tl("stream_batch", batch.id)
    assert isinstance(progress[-1], BatchProgress) and progress[-1].status == "completed"
    assert [p.finished for p in progress] == sorted(p.finished for p in progress)
    assert (await tl("get_batch", batch.id)).progress.finished == batch.progress.total == 24
    items = await tl("iter_batch_items", batch.id)
    screened = await tl("iter_batch_items", batch.id, outcome="screened")  # the offline panel screens
    assert len(items) == 24 and screened and {i.id for i in screened} <= {i.id for i in items}
    assert all(i.outcome == "screened" for i in screened)
    lines = (await tl("export_batch_items", batch.id)).decode().splitlines()
    assert json.loads(lines[0])["manifest"]["batch_id"] == batch.id and len(lines) == 25
    assert len((await tl("export_batch_items", batch.id, format="csv")).decode().splitlines()) == 25
    manifest = await tl("batch_manifest", batch.id)
    assert manifest["batch_id"] == batch.id and manifest["dataset"]["problems"] == 12
    assert b"<svg" in await tl("batch_figure", batch.id, "comparison")
    assert {row["model"] for row in (await tl("batch_report", batch.id))["rows"]} >= {"rubric"}
    compared = await tl("compare_batches", batch.id, "rubric", "rubric", with_arm="control")
    assert isinstance(compared, BatchComparison) and compared.problems == len(compared.pairs) == 12
    return str(batch.id)


async def _datasets_and_batches(tl: Tour) -> None:
    rows = SAMPLE.read_bytes().splitlines()
    dataset = await tl("upload_dataset", b"\n".join([*rows, rows[0]]), name="tour.jsonl")
    assert dataset.n_problems == 12 and [d.line for d in dataset.duplicates] == [13]
    assert (await tl("get_dataset", dataset.id)).duplicates == dataset.duplicates
    assert [d.id for d in await tl("iter_datasets")] == [dataset.id]
    batches = [
        await _steered_batch(tl, dataset.id),
        await _failed_items_retried(tl, dataset.id),
        await _batch_outputs(tl, dataset.id),
    ]
    assert [b.id for b in await tl("iter_batches")] == batches[::-1]
    with pytest.raises(Conflict):
        await tl("delete_dataset", dataset.id)  # batches evaluate it
    for batch_id in batches:
        await tl("delete_batch", batch_id)
    with pytest.raises(NotFound):
        await tl("get_batch", batches[0])
    await tl("delete_dataset", dataset.id)
    with pytest.raises(NotFound):
        await tl("get_dataset", dataset.id)


async def _models_and_judges(tl: Tour) -> None:
    assert [m.name for m in await tl("list_models")] == ["rubric", "broken", "sim"]
    with pytest.raises(Forbidden):
        await tl("check_model", "sim")  # what it learns changes the model for every project: an operator's
    report = await tl("validate_judges", [CONTROL], split="tune")
    assert (
        report["items"] == 1
        and report["judge_model"] == "rubric"
        and list(report["splits"]) == ["tune", "all"]
    )
    assert "rubric" in await tl("validate_judges", [CONTROL], format="md")
    # one sound version: too few accepted for any threshold to be tested
    found = await tl("calibrate_judges", [CONTROL], split="tune", alpha=0.2, delta=0.2)
    assert found["judge_model"] == "rubric" and found["threshold"] is None
    assert found["steps"] == [] and found["record_id"] is None


async def _projects_keys_audit(admin: Tour, kind: str, url: str) -> None:
    checked = await admin("check_model", "sim")
    assert checked.name == "sim" and checked.capabilities and checked.mode == "json_schema"
    with pytest.raises(InvalidRequest):
        await admin("check_model", "rubric")  # the offline panel has no endpoint to probe
    project = await admin("create_project", f"school-{kind}", daily_tokens=5000)
    assert project.id in [p.id for p in await admin("list_projects")] and project.daily_tokens == 5000
    changed = await admin("update_project", project.id, daily_tokens=None, daily_cost_usd=2.5)
    assert (changed.daily_tokens, changed.daily_cost_usd) == (None, 2.5)
    expires = datetime.now(UTC) + timedelta(days=30)
    key = await admin("create_key", project.id, "tutor-app", expires_at=expires)
    assert key.secret and key.scopes == ["read", "write"] and key.expires_at == expires
    (listed,) = await admin("list_keys", project.id)
    assert listed.id == key.id and listed.secret is None
    async with tour(kind, url, key.secret, admin.called) as theirs:
        assert await theirs("iter_runs") == []  # a new project: nothing to see
        revoked = await admin("revoke_key", key.id)
        assert revoked.revoked_at is not None
        with pytest.raises(Unauthorized):
            await theirs("iter_runs")
    entries = await admin("iter_audit", project_id=project.id, limit=1)  # a page per entry
    assert [(e.action, e.target_type) for e in entries] == [
        ("revoked", "key"),
        ("created", "key"),
        ("updated", "project"),
        ("created", "project"),
    ]


async def _reviews(admin: Tour, kind: str, url: str) -> None:
    project = await admin("create_project", f"reviews-{kind}")
    app = await admin("create_key", project.id, "tutor-app")
    teacher = await admin("create_key", project.id, "ms-okafor", scopes=["review"])
    async with tour(kind, url, app.secret, admin.called) as backend:
        run = await backend("create_run", *ORCHESTRA, wait=True)
        asked = await backend("request_review", run.id, note="the pupil disputes it")
        assert asked.reason == "requested" and asked.grading_progress == "PendingManual"
    async with tour(kind, url, teacher.secret, admin.called) as reviewer:
        (item,) = await reviewer("iter_reviews", status="pending")
        assert item.id == asked.id and item.cause == "the pupil disputes it"
        detail = await reviewer("get_review", item.id)
        assert detail.verdicts and detail.history == []
        fix = ("An orchestra plays a symphony in 40 minutes. How long do 60 musicians take?", "40 minutes.")
        decided = await reviewer("decide_review", item.id, "sound", corrected=fix, idempotency_key="once")
        again = await reviewer("decide_review", item.id, "sound", corrected=fix, idempotency_key="once")
        assert (
            again.id == decided.id
            and decided.reviewer == "ms-okafor"
            and decided.corrected.question == fix[0]
        )
        with pytest.raises(Conflict):
            await reviewer("decide_review", item.id, "flawed", flaws=[("missing_data", "no count")])
        found = await reviewer("review_set")
        assert found["name"] == f"reviews of reviews-{kind}" and found["sound"] == 2
        agreement = await reviewer("review_agreement")
        assert agreement["decided"] == 1


@pytest.mark.parametrize("kind", ["blocking", "async"])
async def test_every_public_method_of_both_clients_against_a_live_server(
    live_with_broken: tuple[LiveServer, Keys], kind: str
) -> None:
    server, keys = live_with_broken
    called: set[str] = set()
    async with tour(kind, server.url, keys.both, called) as tl:
        await _runs_and_webhooks(tl)
        await _datasets_and_batches(tl)
        await _models_and_judges(tl)
        with pytest.raises(Forbidden):
            await tl("iter_audit")  # admin is not a data scope, nor the other way round
    async with tour(kind, server.url, keys.operator, called) as admin:
        await _projects_keys_audit(admin, kind, server.url)
        await _reviews(admin, kind, server.url)
    kind_of_client = Client if kind == "blocking" else AsyncClient
    assert called == public_methods(kind_of_client)


def test_both_clients_have_the_same_methods() -> None:
    assert public_methods(Client) == public_methods(AsyncClient)
    for name in public_methods(Client):
        blocking, awaiting = (
            inspect.signature(getattr(Client, name)),
            inspect.signature(getattr(AsyncClient, name)),
        )
        assert list(blocking.parameters) == list(awaiting.parameters), name


# The client's models against the server's schema --------------------------------------------------

COMPONENTS: dict[type[pydantic.BaseModel], str] = {
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
    client_models.WaitingItems: "WaitingItems",
    client_models.BatchComparison: "BatchComparison",
    client_models.BatchItem: "BatchItemPublic",
    client_models.WebhookEndpoint: "EndpointCreated",
    client_models.Project: "ProjectPublic",
    client_models.Key: "KeyCreated",
    client_models.AuditEntry: "AuditEntry",
    client_models.ModelInfo: "ModelPublic",
    client_models.Review: "ReviewPublic",
    client_models.ReviewDetail: "ReviewDetail",
    client_models.ReviewDecision: "DecisionPublic",
}
EVENTS: dict[type[pydantic.BaseModel], str] = {
    client_models.RoundStarted: "RoundStarted",
    client_models.JudgeVerdict: "JudgeVerdict",
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
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
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


def test_a_rounds_escalation_steps_are_typed_and_an_unescalated_round_has_none() -> None:
    """The server's own example of a round's escalations reads as typed steps."""
    server = create_app().openapi()["components"]["schemas"]["RoundPublic"]["properties"]
    steps = server["escalations"]["examples"][0]
    body = {"round": 1, "question": "Q?", "solution": "S.", "decision": "needs_review"}
    escalated = client_models.Round.model_validate(body | {"escalations": steps})
    step = escalated.escalations[0]
    assert isinstance(step, client_models.EscalationStep)
    assert (step.stage, step.panel, step.decision) == (0, "the run's panel", "escalated")
    assert step.quality is not None and step.threshold is not None and step.quality < step.threshold
    assert client_models.Round.model_validate(body).escalations == []


@pytest.mark.parametrize("which", ["resources", "events"])
def test_every_client_field_is_in_the_servers_schema_with_a_compatible_type(which: str) -> None:
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

    monkeypatch.setattr("thinkloop_client.client.time.sleep", lambda _: None)
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
        run: dict[str, Any] = {
            "id": "r1",
            "status": "running",
            "model": "m",
            "judge_model": "j",
            "policy": "default",
        }
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
