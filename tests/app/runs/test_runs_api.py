"""The runs API in-process: every endpoint, the auth matrix, idempotency, pagination, errors."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agents.schemas import JUDGES
from agents.simulator import Rule, SimulatorServer
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service, assert_problem


async def submit(service: Service, body: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    response = await service.client.post(
        "/v1/runs", json=body or {"problem": PROBLEM}, params=params, headers=service.keys.auth()
    )
    assert response.status_code in (200, 202), response.text
    data: dict[str, object] = response.json()
    return data


async def test_wait_returns_the_full_trace(service: Service) -> None:
    response = await service.client.post(
        "/v1/runs", json={"problem": PROBLEM}, params={"wait": "true"}, headers=service.keys.auth()
    )
    assert response.status_code == 200
    trace = response.json()
    assert trace["status"] == "screened" and trace["rounds_to_pass"] == 2  # the offline panel screens
    first, second = trace["rounds"]
    assert [v["judge"] for v in first["verdicts"]] == list(JUDGES)
    assert first["decision"] == "revise" and first["quality"] < 0.85 and second["quality"] >= 0.85
    assert first["revision"]["thinking"] and "same time however many" in first["revision"]["question"]
    assert second["verification"] == [] and "40 minutes" in second["solution"]
    assert any(line.startswith("suggestion:") for line in first["feedback"])
    assert first["verdicts"][0]["prompt_version"].startswith("rubric@")
    assert trace["metrics"]["avg_quality_final"] > trace["metrics"]["avg_quality_all_steps"]
    # the version to hand on: the accepted one is the last and the best
    assert trace["final"] == trace["best"] and trace["best_round"] == 2
    assert trace["final"]["question"] == second["question"] and trace["final"]["quality"] == second["quality"]


async def test_post_answers_202_and_the_run_finishes(service: Service) -> None:
    response = await service.client.post("/v1/runs", json={"problem": PROBLEM}, headers=service.keys.auth())
    assert response.status_code == 202 and response.headers["location"].endswith(response.json()["id"])
    run_id = response.json()["id"]
    assert await service.app.state.executor.wait(run_id, 30)
    trace = (await service.client.get(f"/v1/runs/{run_id}", headers=service.keys.auth("read"))).json()
    assert trace["status"] == "screened" and len(trace["rounds"]) == 2


async def test_runs_with_llm_models_record_tokens(
    service: Service, simulator_server: SimulatorServer
) -> None:
    simulator_server.state.configure(
        simulator_server.state.config.model_copy(update={"rules": [Rule(role="^Judge", score=40, times=7)]})
    )
    body = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": "sim", "max_rounds": 2}}
    trace = await submit(service, body, wait="true")
    assert trace["status"] == "accepted"
    usage = trace["usage"]
    assert isinstance(usage, dict) and usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    verdict = trace["rounds"][0]["verdicts"][0]
    assert verdict["model"] == "sim" and verdict["raw_outputs"] and verdict["latency_s"] > 0


@pytest.mark.parametrize(
    ("method", "path", "key", "status"),
    [
        ("GET", "/v1/runs", None, 401),
        ("GET", "/v1/runs", "revoked", 401),
        ("GET", "/v1/runs", "write", 403),
        ("GET", "/v1/runs", "read", 200),
        ("POST", "/v1/runs", None, 401),
        ("POST", "/v1/runs", "read", 403),
        ("POST", "/v1/runs", "revoked", 401),
        ("GET", "/metrics", None, 401),
        ("GET", "/metrics", "read", 200),
        ("GET", "/healthz", None, 200),
        ("GET", "/readyz", None, 200),
    ],
)
async def test_auth_matrix(service: Service, method: str, path: str, key: str | None, status: int) -> None:
    headers = service.keys.auth(key) if key else {}
    response = await service.client.request(method, path, json={"problem": PROBLEM}, headers=headers)
    assert response.status_code in ((status, 202) if status == 200 and method == "POST" else (status,))
    if status >= 400:
        assert_problem(response, status)


async def test_forged_and_x_api_key_headers(service: Service) -> None:
    forged = await service.client.get("/v1/runs", headers={"Authorization": "Bearer tlk_forged"})
    assert_problem(forged, 401)
    assert forged.headers["www-authenticate"] == "Bearer"
    ok = await service.client.get("/v1/runs", headers={"X-API-Key": service.keys.read})
    assert ok.status_code == 200


async def test_idempotency_key_returns_the_same_run(service: Service) -> None:
    headers = service.keys.auth() | {"Idempotency-Key": "abc-123"}
    first = await service.client.post("/v1/runs", json={"problem": PROBLEM}, headers=headers)
    again = await service.client.post("/v1/runs", json={"problem": PROBLEM}, headers=headers)
    assert first.json()["id"] == again.json()["id"] and again.headers["idempotent-replayed"] == "true"
    listed = (await service.client.get("/v1/runs", headers=service.keys.auth())).json()["items"]
    assert len(listed) == 1
    other = {"problem": {"question": "What is 2 + 2?"}}
    assert_problem(await service.client.post("/v1/runs", json=other, headers=headers), 409)


async def test_cursor_pagination_and_filters(service: Service) -> None:
    ids = []
    for n in range(5):
        body = {"problem": {"question": f"What is {n} + 1?", "solution": f"{n} + 1 = {n + 1}"}}
        ids.append((await submit(service, body, wait="true"))["id"])
    seen, cursor = [], None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = (await service.client.get("/v1/runs", params=params, headers=service.keys.auth())).json()
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(ids))
    by_model = await service.client.get("/v1/runs", params={"model": "sim"}, headers=service.keys.auth())
    assert by_model.json()["items"] == []
    assert_problem(
        await service.client.get("/v1/runs", params={"cursor": "garbage!"}, headers=service.keys.auth()), 400
    )


async def test_cancel_running_and_finished(service: Service, simulator_server: SimulatorServer) -> None:
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"latency_s": 2.0}))
    try:
        run = await submit(service, {"problem": PROBLEM, "options": {"judge_model": "sim"}})
        cancelled = await service.client.post(f"/v1/runs/{run['id']}/cancel", headers=service.keys.auth())
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        assert_problem(
            await service.client.post(f"/v1/runs/{run['id']}/cancel", headers=service.keys.auth()), 409
        )
    finally:
        simulator_server.state.configure(simulator_server.state.config.model_copy(update={"latency_s": 0.0}))


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"problem": {"question": ""}}, 422, "question"),
        ({"problem": {"question": "x" * 8001}}, 422, "question"),
        ({"problem": PROBLEM, "options": {"model": "gpt-9"}}, 422, "unknown model 'gpt-9'"),
        ({"problem": PROBLEM, "options": {"max_rounds": 0}}, 422, "max_rounds"),
        ({"problem": PROBLEM, "options": {"policy": "strict"}}, 422, "policy"),
        ({"problem": PROBLEM, "surprise": 1}, 422, "surprise"),
        ({"problem": PROBLEM, "webhook_url": "not a url"}, 422, "webhook_url"),
    ],
)
async def test_bad_input_is_4xx_problem(
    service: Service, body: dict[str, object], status: int, needle: str
) -> None:
    response = await service.client.post("/v1/runs", json=body, headers=service.keys.auth())
    assert needle in response.text
    assert_problem(response, status)


async def test_malformed_json_and_oversize_bodies(service: Service) -> None:
    headers = service.keys.auth() | {"Content-Type": "application/json"}
    assert_problem(await service.client.post("/v1/runs", content=b'{"problem": ', headers=headers), 400)
    big = b'{"problem": {"question": "' + b"y" * 70_000 + b'"}}'
    assert_problem(await service.client.post("/v1/runs", content=big, headers=headers), 413)

    async def chunks():  # no Content-Length: the limit applies while the body streams in
        for _ in range(10):
            yield b"z" * 10_000

    streamed = await service.client.post("/v1/runs", content=chunks(), headers=headers)
    assert_problem(streamed, 413)


async def test_unknown_run_and_route(service: Service) -> None:
    assert_problem(await service.client.get("/v1/runs/nope", headers=service.keys.auth()), 404)
    assert_problem(await service.client.post("/v1/runs/nope/cancel", headers=service.keys.auth()), 404)
    assert_problem(await service.client.get("/v1/runs/nope/events", headers=service.keys.auth()), 404)
    assert_problem(await service.client.get("/v1/nothing", headers=service.keys.auth()), 404)


async def test_problems_are_deduplicated_by_content(service: Service) -> None:
    from sqlalchemy import func, select

    from app.models import ProblemRow

    await submit(service, wait="true")
    await submit(service, {"problem": {**PROBLEM, "question": PROBLEM["question"] + "  "}}, wait="true")
    async with service.app.state.sessions() as session:
        assert (await session.execute(select(func.count()).select_from(ProblemRow))).scalar() == 1


async def test_metrics_count_runs_and_llm_calls(service: Service) -> None:
    await submit(service, {"problem": PROBLEM, "options": {"judge_model": "sim"}}, wait="true")
    text = (await service.client.get("/metrics", headers=service.keys.auth("read"))).text
    assert 'thinkloop_runs_total{outcome="accepted"} 1.0' in text
    assert 'thinkloop_llm_tokens_total{direction="input",model="sim",role="judge"}' in text
    assert "thinkloop_rounds_to_pass_bucket" in text and "thinkloop_runs_in_flight 0.0" in text


async def test_the_trace_and_metrics_count_the_input_tokens_a_server_served_from_its_cache(
    service: Service, simulator_server: SimulatorServer
) -> None:
    """The second run's judges begin with the rules and problem the first run's were sent: each of
    its verdicts says how many of its prompt tokens came from the cache, and so does /metrics."""
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"profile_overrides": {"prompt_cache_min_tokens": 128}}))
    try:
        runs = [
            await submit(service, {"problem": PROBLEM, "options": {"judge_model": "sim"}}, wait="true")
            for _ in range(2)
        ]
    finally:  # the simulator outlives the test: the next one gets a server without the cache
        state.configure(state.config.model_copy(update={"profile_overrides": {}}))
    trace = (await service.client.get(f"/v1/runs/{runs[1]['id']}", headers=service.keys.auth("read"))).json()
    verdicts = [v for r in trace["rounds"] for v in r["verdicts"]]
    assert verdicts and all(0 < v["cached_input_tokens"] < v["input_tokens"] for v in verdicts), verdicts
    assert trace["usage"]["cached_input_tokens"] >= sum(v["cached_input_tokens"] for v in verdicts)
    text = (await service.client.get("/metrics", headers=service.keys.auth("read"))).text
    found = re.search(
        r'^thinkloop_llm_cached_input_tokens_total\{model="sim",role="judge"\} (\S+)$', text, re.M
    )
    assert found is not None and float(found.group(1)) >= 7 * 128, text


async def test_openapi_documents_every_route(service: Service) -> None:
    spec = (await service.client.get("/openapi.json")).json()
    assert {
        "/v1/runs",
        "/v1/runs/{run_id}",
        "/v1/runs/{run_id}/events",
        "/v1/runs/{run_id}/cancel",
        "/healthz",
        "/readyz",
        "/metrics",
    } <= set(spec["paths"])
    assert spec["components"]["schemas"]["RunCreate"]["examples"]


async def test_readyz_is_503_until_migrated(tmp_path: object, simulator_server: SimulatorServer) -> None:
    import httpx

    from app.db import migrate
    from app.main import create_app
    from tests.helpers.service import service_settings

    url = f"sqlite+aiosqlite:///{tmp_path}/fresh.db"
    app = create_app(service_settings(url, simulator_server))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as client,
    ):
        body = assert_problem(await client.get("/readyz"), 503)
        assert body["checks"] == {"database": True, "migrations": False}
        await migrate(url)
        assert (await client.get("/readyz")).json() == {
            "status": "ready",
            "checks": {"database": True, "migrations": True},
        }
