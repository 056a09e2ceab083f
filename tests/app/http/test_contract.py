"""The API contract integrators generate clients from: stable operationIds, a Problem schema on every
error response, and a request id echoed and logged."""

from __future__ import annotations

import json
from datetime import tzinfo
from typing import Any

import httpx
import pytest

from agents.simulator import SimulatorServer
from app.main import create_app
from tests.helpers.service import Service, service_settings

OPERATIONS = {
    "cancel_batch", "cancel_run", "check_model", "compare_batches", "create_batch", "create_key",
    "create_project", "create_run", "delete_batch", "delete_dataset", "delete_run", "get_batch",
    "get_batch_report", "get_dataset", "get_run", "healthz", "list_batch_items", "list_batches",
    "list_datasets", "list_deliveries", "list_keys", "list_models", "list_projects", "list_runs", "metrics",
    "list_panels", "show_record", "pin_record", "unpin_record", "publish_record", "withdraw_record",
    "pause_batch", "read_audit", "readyz", "redeliver_delivery", "resume_batch", "retry_failed_items",
    "revoke_key", "stream_batch_progress", "stream_run_events", "upload_dataset", "validate_judges",
    "create_webhook_endpoint", "list_webhook_endpoints", "get_webhook_endpoint", "delete_webhook_endpoint",
    "ping_webhook_endpoint", "list_endpoint_deliveries", "rotate_webhook_endpoint_secret",
    "export_batch_items", "get_batch_manifest", "get_batch_figure", "update_project",
    "read_webhook_secret", "rotate_webhook_secret", "redeliver_run_deliveries", "list_project_deliveries",
    "redeliver_project_deliveries", "calibrate_judges",
    "list_reviews", "get_review", "decide_review", "request_review", "get_review_set", "get_review_agreement",
}  # fmt: skip


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, operations in spec["paths"].items()
        for method, operation in operations.items()
        if isinstance(operation, dict) and "operationId" in operation
    ]


async def test_operation_ids_are_the_endpoint_names(service: Service) -> None:
    spec = (await service.client.get("/openapi.json")).json()
    ids = [operation["operationId"] for _, _, operation in _operations(spec)]
    assert len(ids) == len(set(ids)) and set(ids) == OPERATIONS


async def test_every_error_response_is_documented_as_a_problem(service: Service) -> None:
    spec = (await service.client.get("/openapi.json")).json()
    problem = spec["components"]["schemas"]["Problem"]
    assert {"type", "title", "status", "detail", "instance"} <= set(problem["required"])
    for path, method, operation in _operations(spec):
        for code, answer in operation["responses"].items():
            if code.startswith(("4", "5")):
                content = answer.get("content", {})
                assert list(content) == ["application/problem+json"], (path, method, code)
                assert content["application/problem+json"]["schema"] == {
                    "$ref": "#/components/schemas/Problem"
                }
    assert "HTTPValidationError" not in spec["components"]["schemas"]


async def test_every_public_field_is_described_and_has_an_example_and_every_json_body_too(
    service: Service,
) -> None:
    spec = (await service.client.get("/openapi.json")).json()
    schemas = spec["components"]["schemas"]
    undescribed = [
        f"{name}.{field}"
        for name, schema in schemas.items()
        for field, prop in (schema.get("properties") or {}).items()
        if not prop.get("description")
    ]
    assert undescribed == []
    without_example = [
        f"{name}.{field}"
        for name, schema in schemas.items()
        for field, prop in (schema.get("properties") or {}).items()
        if not prop.get("examples")
    ]
    assert sorted(without_example) == sorted(AWAITING_AN_EXAMPLE)
    for path, method, operation in _operations(spec):
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if body is None:
            continue
        schema = schemas[body["schema"]["$ref"].rsplit("/", 1)[1]]
        required = schema.get("required", [])
        by_field = all("examples" in schema["properties"][field] for field in required)
        assert schema.get("examples") or by_field, (path, method, "a JSON body without an example")
    hooks = spec["webhooks"]
    assert hooks and all(
        hook["post"]["requestBody"]["content"]["application/json"] for hook in hooks.values()
    )


# app/datasets/schemas.py is being changed by other work: its page's cursor gets its example there.
AWAITING_AN_EXAMPLE: list[str] = []


async def test_every_parameter_is_described(service: Service) -> None:
    spec = (await service.client.get("/openapi.json")).json()
    undescribed = [
        f"{method.upper()} {path} {parameter['in']}:{parameter['name']}"
        for path, method, operation in _operations(spec)
        for parameter in operation.get("parameters", [])
        if not parameter.get("description")
    ]
    assert undescribed == []


async def test_every_example_fits_its_schema(service: Service) -> None:
    from tests.helpers.schemas import violations

    spec = (await service.client.get("/openapi.json")).json()
    wrong: list[tuple[Any, ...]] = []
    for name, schema in spec["components"]["schemas"].items():
        for example in schema.get("examples", []):
            wrong += [(name, v) for v in violations(example, schema, spec, required=False)]
        for field, prop in (schema.get("properties") or {}).items():
            for example in prop.get("examples", []):
                wrong += [(name, field, v) for v in violations(example, prop, spec, required=False)]
    # (FastAPI leaves the nulls out of an object's example: a property missing there is no fault)
    assert wrong == []
    corrected = spec["components"]["schemas"]["LabelledItem"]["properties"]["corrected"]
    assert corrected["anyOf"][0] == {"$ref": "#/components/schemas/WordProblem"}  # not the error's


def test_a_property_takes_its_example_from_the_example_of_its_object() -> None:
    from app.openapi_examples import fill_property_examples

    schemas: dict[str, Any] = {
        "Page": {
            "examples": [{"items": [{"id": "a", "n": 1}], "next_cursor": "c"}],
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}},
                "next_cursor": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            },
        },
        "Item": {"properties": {"id": {"type": "string", "examples": ["own"]}, "n": {"type": "integer"}}},
        "Holder": {
            "properties": {"item": {"anyOf": [{"$ref": "#/components/schemas/Item"}, {"type": "null"}]}}
        },
    }
    fill_property_examples(schemas)
    assert schemas["Page"]["properties"]["next_cursor"]["examples"] == ["c"]
    assert schemas["Item"]["examples"] == [{"id": "a", "n": 1}]  # learnt from the page's example
    assert schemas["Item"]["properties"]["id"]["examples"] == ["own"]  # a field's own example is kept
    assert schemas["Item"]["properties"]["n"]["examples"] == [1]
    assert schemas["Holder"]["properties"]["item"]["examples"] == [{"id": "a", "n": 1}]


async def test_a_request_id_is_echoed_or_made(service: Service) -> None:
    mine = await service.client.get(
        "/v1/runs", headers=service.keys.auth() | {"X-Request-ID": "tutor-42.a:b"}
    )
    assert mine.headers["x-request-id"] == "tutor-42.a:b"
    made = await service.client.get("/v1/runs", headers=service.keys.auth())
    assert len(made.headers["x-request-id"]) == 32
    for insane in ("has space", "x" * 129, "<script>"):
        replaced = await service.client.get(
            "/v1/runs", headers=service.keys.auth() | {"X-Request-ID": insane}
        )
        assert replaced.headers["x-request-id"] != insane and len(replaced.headers["x-request-id"]) == 32
    # errors carry it too, the ones raised before any endpoint runs included
    assert "x-request-id" in (await service.client.get("/v1/runs")).headers
    assert "x-request-id" in (await service.client.get("/v1/nowhere", headers=service.keys.auth())).headers
    big = await service.client.post("/v1/runs", content=b"x" * 70_000, headers=service.keys.auth())
    assert big.status_code == 413 and "x-request-id" in big.headers


async def test_the_request_id_is_logged_with_the_request(
    database_url: str, simulator_server: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.db import migrate

    await migrate(database_url)
    app = create_app(service_settings(database_url, simulator_server, log_level="INFO", log_json=True))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            capsys.readouterr()
            answer = await client.get("/v1/runs/abc", headers={"X-Request-ID": "trace-me-7"})
    assert answer.status_code == 401
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    (logged,) = [line for line in lines if line.get("event") == "http.request"]
    assert (
        logged["request_id"] == "trace-me-7" and logged["status"] == 401 and logged["path"] == "/v1/runs/abc"
    )


def test_a_trace_names_its_final_and_its_best_version() -> None:
    from app.models import RoundRow
    from app.runs.trace import _versions

    def row(n: int, quality: float | None) -> RoundRow:
        return RoundRow(
            run_id="r",
            round=n,
            question=f"q{n}",
            solution=f"s{n}",
            quality=quality,
            n_voting=7,
            n_passing=0,
            decision="revise",
        )

    final, best = _versions([row(1, 0.6), row(2, 0.8), row(3, 0.7)])
    assert (final.round, best.round) == (3, 2) and best.question == "q2" and best.quality == 0.8  # type: ignore[union-attr]
    final, best = _versions([row(1, None), row(2, 0.5), row(3, 0.5)])
    assert (final.round, best.round) == (3, 2)  # type: ignore[union-attr]
    assert _versions([]) == (None, None)


async def test_the_webhooks_are_in_the_openapi_document(service: Service) -> None:
    spec = (await service.client.get("/openapi.json")).json()
    assert set(spec["webhooks"]) == {
        "run.finished",
        "run.failed",
        "review.requested",
        "review.decided",
        "ping",
    }
    finished = spec["components"]["schemas"]["RunFinishedWebhook"]
    assert {"type", "id", "created", "run_id", "status"} <= set(finished["required"])
    assert all(field.get("description") for field in finished["properties"].values())
    for name in ("ReviewRequestedWebhook", "ReviewDecidedWebhook"):
        review = spec["components"]["schemas"][name]
        assert {"type", "id", "run_id", "review_id", "grading_progress"} <= set(review["required"])
        assert all(field.get("description") for field in review["properties"].values()), name


async def test_the_docs_work_offline(service: Service) -> None:
    for page in ("/docs", "/redoc"):
        html = (await service.client.get(page)).text
        assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html and "/openapi.json" in html
    html = (await service.client.get("/docs")).text
    for asset in ("/static-offline-docs/swagger-ui-bundle.js", "/static-offline-docs/swagger-ui.css"):
        assert asset in html
        served = await service.client.get(asset)
        assert served.status_code == 200 and len(served.content) > 10_000, asset


async def test_runs_are_filtered_by_metadata_and_time(service: Service) -> None:
    from datetime import UTC, datetime, timedelta

    auth = service.keys.auth()
    ids: dict[str, Any] = {}
    for pupil in ("P-1", "P-2", "P-1"):
        body = {"problem": {"question": f"What is {len(ids)} + 1?", "metadata": {"pupil": pupil, "n": 7}}}
        answer = await service.client.post("/v1/runs", json=body, headers=auth)
        ids[answer.json()["id"]] = pupil

    async def listed(**params: str) -> list[str]:
        answer = await service.client.get("/v1/runs", params=params, headers=auth)
        assert answer.status_code == 200, answer.text
        return [item["id"] for item in answer.json()["items"]]

    assert set(await listed(metadata="pupil:P-1")) == {i for i, p in ids.items() if p == "P-1"}
    assert await listed(metadata="pupil:P-9") == [] and await listed(metadata="nobody:x") == []
    now = datetime.now(UTC)
    assert set(await listed(created_after=(now - timedelta(hours=1)).isoformat())) == set(ids)
    assert await listed(created_after=(now + timedelta(hours=1)).isoformat()) == []
    assert await listed(created_before=(now - timedelta(hours=1)).isoformat()) == []
    in_paris = (now + timedelta(hours=1)).astimezone(timezone_paris()).isoformat()
    assert set(await listed(created_before=in_paris)) == set(ids)
    for bad in (
        {"created_after": "2026-01-01T00:00:00"},  # no timezone
        {"created_after": "0001-01-01T00:00:00+05:00"},
        {"created_before": "9999-12-31T23:59:59-05:00"},
        {"metadata": "no-colon"},
    ):
        answer = await service.client.get("/v1/runs", params=bad, headers=auth)
        assert answer.status_code == 422 and answer.headers["content-type"] == "application/problem+json", bad


def timezone_paris() -> tzinfo:
    from datetime import timedelta, timezone

    return timezone(timedelta(hours=1))


async def test_each_problem_type_has_one_title_whichever_path_raised_it(service: Service) -> None:
    from app.errors import AppError, BadRequest, MalformedJson, Unprocessable

    auth, json_body = service.keys.auth(), {"Content-Type": "application/json"}

    async def post(body: str) -> httpx.Response:
        return await service.client.post("/v1/runs", content=body, headers=auth | json_body)

    answers = [
        (Unprocessable, await post('{"problem": {"question": ""}}')),  # the schema (FastAPI)
        (Unprocessable, await post('{"problem": {"question": "q"}, "options": {"model": "gpt-9"}}')),  # ours
        (MalformedJson, await post('{"problem": ')),  # FastAPI's JSON error
        (
            MalformedJson,
            await post('{"problem": {"question": "q"}, "x": ' + "9" * 5_000 + "}"),
        ),  # the parser's
        (BadRequest, await service.client.get("/v1/runs", params={"cursor": "garbage!"}, headers=auth)),
    ]
    for kind, answer in answers:
        body = answer.json()
        assert (answer.status_code, body["type"].rsplit("/", 1)[1]) == (kind.status, kind.slug), body
        assert body["title"] == kind.title, body
    titles: dict[str, set[str]] = {}
    pending: list[type[AppError]] = [AppError]
    while pending:
        kind = pending.pop()
        titles.setdefault(kind.slug, set()).add(kind.title)
        pending += kind.__subclasses__()
    assert all(len(named) == 1 for named in titles.values()), titles
