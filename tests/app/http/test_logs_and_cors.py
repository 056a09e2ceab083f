"""structlog JSON lines carry the run id and round; CORS follows the settings."""

from __future__ import annotations

import json

import httpx
import pytest

from agents.schemas import JUDGES
from agents.simulator import Rule, SimulatorServer
from app.db import migrate
from app.main import create_app
from tests.helpers.problems import PROBLEM
from tests.helpers.service import seed_keys, service_settings


async def test_log_lines_are_json_with_run_and_round(
    database_url: str, simulator_server: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    simulator_server.state.configure(
        simulator_server.state.config.model_copy(
            update={"rules": [Rule(role="Judge: Apply", malformed=True, times=1)]}
        )
    )
    await migrate(database_url)
    keys = await seed_keys(database_url)
    app = create_app(service_settings(database_url, simulator_server, log_json=True, log_level="INFO"))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as client,
    ):
        body = {"problem": PROBLEM, "options": {"judge_model": "sim"}}
        response = await client.post("/v1/runs", json=body, headers=keys.auth(), params={"wait": "true"})
        run = response.json()
    # every line is one JSON object: the libraries' records (the HTTP client's, SQLAlchemy's) too
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert all(isinstance(line, dict) and "event" in line and "level" in line for line in lines)
    malformed = next(line for line in lines if line["event"] == "llm.malformed_output")
    assert malformed["run_id"] == run["id"] and malformed["round"] == 1 and malformed["judge"] == "apply"
    finished = next(line for line in lines if line["event"] == "run.finished")
    assert finished["run_id"] == run["id"] and finished["rounds_to_pass"] == run["rounds_to_pass"]
    assert finished["avg_quality_final"] == run["metrics"]["avg_quality_final"]
    assert finished["avg_quality_all_steps"] == run["metrics"]["avg_quality_all_steps"]
    assert set(finished["level_final"]) == set(JUDGES)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_an_endpoint_error_is_an_error_run_with_its_cause_in_trace_and_logs(
    database_url: str, simulator_server: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # Round 1 fails, then the model under test's endpoint answers 503 to every attempt.
    rules = [Rule(role="^Judge", score=40), Rule(role="^Reviser", status=503)]
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"rules": rules}))
    await migrate(database_url)
    keys = await seed_keys(database_url)
    app = create_app(service_settings(database_url, simulator_server, log_json=True, log_level="INFO"))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as client,
    ):
        body = {"problem": PROBLEM, "options": {"judge_model": "sim", "model": "sim"}}
        run = (await client.post("/v1/runs", json=body, headers=keys.auth(), params={"wait": "true"})).json()
        events = (await client.get(f"/v1/runs/{run['id']}/events", headers=keys.auth())).text
    assert run["status"] == "error" and "no usable revision" in run["stop_reason"]
    failure = run["failure"]
    assert (failure["model"], failure["status"], failure["kind"]) == ("sim", 503, "endpoint")
    assert (
        failure["host"].startswith("127.0.0.1:") and run["rounds"][0]["revision"]["failure"]["status"] == 503
    )
    assert '"outcome": "error"' in events
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    failed = next(line for line in lines if line["event"] == "llm.call_failed")
    assert failed["exc_type"] == "OpenAIAPIError" and "simulated 503" in failed["exc_message"]
    assert "Traceback (most recent call last)" in failed["exception"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_cors_follows_settings(database_url: str, simulator_server: SimulatorServer) -> None:
    await migrate(database_url)
    app = create_app(service_settings(database_url, simulator_server, cors_origins=["https://tutor.example"]))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as client,
    ):
        preflight = {"Origin": "https://tutor.example", "Access-Control-Request-Method": "POST"}
        allowed = await client.options("/v1/runs", headers=preflight)
        denied = await client.options("/v1/runs", headers=preflight | {"Origin": "https://evil.example"})
    assert allowed.headers["access-control-allow-origin"] == "https://tutor.example"
    assert "access-control-allow-origin" not in denied.headers


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_an_unhandled_error_is_a_500_problem_with_the_request_id_in_answer_and_log(
    database_url: str, simulator_server: SimulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    app = create_app(service_settings(database_url, simulator_server, log_json=True, log_level="INFO"))

    async def explode() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/test-only/explode", explode)  # this test's app only
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/test-only/explode", headers={"X-Request-ID": "req-500"})
    assert response.status_code == 500 and response.headers["x-request-id"] == "req-500"
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == "https://thinkloop.dev/problems/internal-error"
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
    failed = next(line for line in lines if line["event"] == "http.unhandled_error")
    assert failed["request_id"] == "req-500" and failed["exc_type"] == "RuntimeError"
    logged = next(line for line in lines if line["event"] == "http.request")
    assert (logged["request_id"], logged["status"]) == ("req-500", 500)
