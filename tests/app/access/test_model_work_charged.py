"""Every route that can make a model call checks the daily caps before it makes one, and what it
spends is charged to the project's and the key's ledgers as a run's calls are.

The sweep knows every route that changes something: each is either one that can make model calls
(and is swept with a project capped at 0) or one that cannot; a new route fails
``test_every_route_that_changes_something_is_classified`` until it is put in one list or the other.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from agents.simulator.replies import all_text
from agents.simulator.server import SimulatorServer
from app.access.usage import key_spent_on, spent_on
from app.db import create_engine, session_factory
from app.models import ApiKey, utcnow
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service, assert_problem
from tests.helpers.validity import ITEMS

SIM = {"model": "sim", "judge_model": "sim"}
# Routes that can make model calls (the method and the route's path).
MODEL_ROUTES = {
    ("POST", "/v1/runs"),
    ("POST", "/v1/batches"),
    ("POST", "/v1/batches/{batch_id}/resume"),
    ("POST", "/v1/batches/{batch_id}/retry-failed"),
    ("POST", "/v1/judges/validate"),
    ("POST", "/v1/judges/calibrate"),
    ("POST", "/v1/models/{name}/check"),
}
# Routes that change something without any model call (cancelling, deleting, keys, webhooks…).
OTHER_ROUTES = {
    ("POST", "/v1/runs/{run_id}/cancel"),
    ("DELETE", "/v1/runs/{run_id}"),
    ("POST", "/v1/runs/{run_id}/deliveries/{delivery_id}/redeliver"),
    ("POST", "/v1/runs/{run_id}/deliveries/redeliver"),
    ("POST", "/v1/webhook-deliveries/redeliver"),
    ("POST", "/v1/projects/{project_id}/webhook-secret/rotate"),
    ("POST", "/v1/webhook-endpoints"),
    ("DELETE", "/v1/webhook-endpoints/{endpoint_id}"),
    ("POST", "/v1/webhook-endpoints/{endpoint_id}/test"),
    ("POST", "/v1/webhook-endpoints/{endpoint_id}/rotate-secret"),
    ("POST", "/v1/datasets"),
    ("DELETE", "/v1/datasets/{dataset_id}"),
    ("POST", "/v1/batches/{batch_id}/pause"),
    ("POST", "/v1/batches/{batch_id}/cancel"),
    ("DELETE", "/v1/batches/{batch_id}"),
    ("POST", "/v1/projects"),
    ("PATCH", "/v1/projects/{project_id}"),
    ("POST", "/v1/projects/{project_id}/keys"),
    ("POST", "/v1/keys/{key_id}/revoke"),
    ("POST", "/v1/panels/records/{record_id}/pin"),
    ("DELETE", "/v1/panels/records/{record_id}/pin"),
    ("POST", "/v1/panels/records/{record_id}/publish"),
    ("DELETE", "/v1/panels/records/{record_id}/publish"),
    ("POST", "/v1/runs/{run_id}/review-requests"),
    ("POST", "/v1/reviews/{review_id}/decision"),
}


def test_every_route_that_changes_something_is_classified(service: Service) -> None:
    paths = service.app.openapi()["paths"]
    found = {(method.upper(), path) for path, ops in paths.items() for method in ops if method != "get"}
    assert found == MODEL_ROUTES | OTHER_ROUTES


async def _paused_batch(client: httpx.AsyncClient, auth: dict[str, str]) -> str:
    dataset = await client.post(
        "/v1/datasets",
        params={"name": "one.jsonl"},
        content=b'{"question": "What is 2 + 2?", "solution": "2 + 2 = 4"}\n',
        headers=auth | {"Content-Type": "application/x-ndjson"},
    )
    body = {"dataset_id": dataset.json()["id"], "models": ["sim"], "judge_model": "sim", "max_rounds": 1}
    batch = (await client.post("/v1/batches", json=body, headers=auth)).json()
    await client.post(f"/v1/batches/{batch['id']}/pause", headers=auth)
    for _ in range(600):  # until nothing is in flight: no call of the batch's may land after this
        got = (await client.get(f"/v1/batches/{batch['id']}", headers=auth)).json()["progress"]
        if got["status"] in ("paused", "completed") and not got["items"].get("running"):
            break
        await asyncio.sleep(0.05)
    return str(batch["id"])


async def _spent(database_url: str, project_id: str, key_id: str | None = None) -> tuple[Any, ...]:
    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            project = await spent_on(session, project_id, utcnow().date())
            key = await key_spent_on(session, key_id, utcnow().date()) if key_id else None
            return project, key
    finally:
        await engine.dispose()


async def _key_id(database_url: str, secret: str) -> ApiKey:
    from app.access.signin import find_key

    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            key = await find_key(session, secret)
            assert key is not None
            return key
    finally:
        await engine.dispose()


async def test_a_project_capped_at_0_makes_no_model_call_through_any_route(
    service: Service, simulator_server: SimulatorServer, database_url: str
) -> None:
    client, operator = service.client, service.keys.auth("operator")
    made = (await client.post("/v1/projects", json={"name": "capped"}, headers=operator)).json()
    key = await client.post(
        f"/v1/projects/{made['id']}/keys", json={"name": "app", "scopes": ["read", "write"]}, headers=operator
    )
    auth = {"Authorization": f"Bearer {key.json()['secret']}"}
    batch_id = await _paused_batch(client, auth)  # made before the cap: resuming it is new work
    spent_before = await _spent(database_url, made["id"])
    own = (await client.get("/v1/projects", headers=service.keys.auth("admin"))).json()["items"][0]
    for project_id in (made["id"], own["id"]):  # the operator's own project too (it checks models)
        capped = await client.patch(f"/v1/projects/{project_id}", json={"daily_tokens": 0}, headers=operator)
        assert capped.status_code == 200, capped.text
    calls_before = len(simulator_server.state.requests)

    sweep: dict[tuple[str, str], dict[str, Any]] = {
        ("POST", "/v1/runs"): {"json": {"problem": PROBLEM, "options": SIM}, "headers": auth},
        ("POST", "/v1/batches"): {
            "json": {"dataset_id": "x", "models": ["sim"], "judge_model": "sim"},
            "headers": auth,
        },
        ("POST", "/v1/batches/{batch_id}/resume"): {"headers": auth},
        ("POST", "/v1/batches/{batch_id}/retry-failed"): {"headers": auth},
        ("POST", "/v1/judges/validate"): {"json": {"items": ITEMS, "judge_model": "sim"}, "headers": auth},
        ("POST", "/v1/judges/calibrate"): {
            "json": {"items": ITEMS, "judge_model": "sim", "split": "all"},
            "headers": auth,
        },
        ("POST", "/v1/models/{name}/check"): {"headers": operator},
    }
    assert set(sweep) == MODEL_ROUTES  # every route that can make a model call is swept
    datasets = (await client.get("/v1/datasets", headers=auth)).json()["items"]
    sweep[("POST", "/v1/batches")]["json"]["dataset_id"] = datasets[0]["id"]
    for (method, path), request in sweep.items():
        url = path.replace("{batch_id}", batch_id).replace("{name}", "sim")
        response = await client.request(method, url, **request)
        problem = assert_problem(response, 429)
        assert str(problem["type"]).endswith("/quota-exceeded"), (path, problem)
        assert int(response.headers["retry-after"]) >= 1
        waited = (
            await client.post(url, params={"wait": "true"}, **request) if path == "/v1/runs" else response
        )
        assert waited.status_code == 429
    assert len(simulator_server.state.requests) == calls_before  # no model call was made
    assert await _spent(database_url, made["id"]) == spent_before  # and nothing was charged
    runs = (await client.get("/v1/runs", headers=auth)).json()["items"]
    assert all(run["batch_id"] == batch_id for run in runs)  # no run was stored


async def test_the_validity_bench_is_charged_to_the_project_and_the_key_as_runs_are(
    service: Service, simulator_server: SimulatorServer, database_url: str
) -> None:
    key = await _key_id(database_url, service.keys.both)
    before = await _spent(database_url, key.project_id, key.id)
    calls_before = len(simulator_server.state.requests)
    response = await service.client.post(
        "/v1/judges/validate", json={"items": ITEMS, "judge_model": "sim"}, headers=service.keys.auth()
    )
    assert response.status_code == 200, response.text
    calls = simulator_server.state.requests[calls_before:]
    assert len(calls) >= response.json()["calls"]["total"] > 0
    (project_tokens, _), (key_tokens, _) = await _spent(database_url, key.project_id, key.id)
    charged = project_tokens - before[0][0]
    # the simulator bills a request's prompt at a quarter token a character; every reply at least 1
    prompts = sum(max(1, len(all_text(call.body)) // 4) for call in calls)
    assert prompts + len(calls) <= charged
    assert key_tokens - before[1][0] == charged  # the key's ledger too, as for a run
    # and the cap reads it: capped at what it spent, the project is refused its next run
    own = (await service.client.get("/v1/projects", headers=service.keys.auth("admin"))).json()["items"][0]
    await service.client.patch(
        f"/v1/projects/{own['id']}",
        json={"daily_tokens": project_tokens},
        headers=service.keys.auth("operator"),
    )
    refused = await service.client.post("/v1/runs", json={"problem": PROBLEM}, headers=service.keys.auth())
    assert assert_problem(refused, 429)["spent"] == {"tokens": project_tokens, "cost_usd": 0.0}


async def test_a_calibration_is_charged_to_the_project_and_the_key_as_a_bench_is(
    service: Service, simulator_server: SimulatorServer, database_url: str
) -> None:
    key = await _key_id(database_url, service.keys.both)
    before = await _spent(database_url, key.project_id, key.id)
    calls_before = len(simulator_server.state.requests)
    body = {"items": ITEMS, "judge_model": "sim", "split": "all", "alpha": 0.2, "delta": 0.2}
    response = await service.client.post("/v1/judges/calibrate", json=body, headers=service.keys.auth())
    assert response.status_code == 200, response.text
    calls = simulator_server.state.requests[calls_before:]
    assert calls  # the judges were asked
    (project_tokens, _), (key_tokens, _) = await _spent(database_url, key.project_id, key.id)
    charged = project_tokens - before[0][0]
    prompts = sum(max(1, len(all_text(call.body)) // 4) for call in calls)
    assert prompts + len(calls) <= charged
    assert key_tokens - before[1][0] == charged


@pytest.mark.parametrize("twins", [True])  # many versions: it is still judging when the client leaves
async def test_a_bench_whose_client_goes_away_is_charged_for_the_calls_made(
    service: Service, simulator_server: SimulatorServer, database_url: str, twins: bool
) -> None:
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"latency_s": 0.05}))
    key = await _key_id(database_url, service.keys.both)
    before = await _spent(database_url, key.project_id)
    body = {"items": ITEMS, "judge_model": "sim", "twins": twins}
    task = asyncio.create_task(
        service.client.post("/v1/judges/validate", json=body, headers=service.keys.auth())
    )
    for _ in range(3000):  # until two versions' judge calls are answered, and more are on their way
        if sum(r.answered is not None for r in state.requests) >= 15:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the bench's calls were not answered")
    await asyncio.sleep(0.1)  # their replies read
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(500):  # the charge is written after the client left, in its own session
        after = await _spent(database_url, key.project_id)
        if after[0][0] > before[0][0]:
            break
        await asyncio.sleep(0.02)
    assert after[0][0] > before[0][0]


async def test_a_model_check_is_charged_to_the_operators_project_and_key(
    service: Service, simulator_server: SimulatorServer, database_url: str
) -> None:
    key = await _key_id(database_url, service.keys.operator)
    before = await _spent(database_url, key.project_id, key.id)
    calls_before = len(simulator_server.state.requests)
    checked = await service.client.post("/v1/models/sim/check", headers=service.keys.auth("operator"))
    assert checked.status_code == 200, checked.text
    calls = simulator_server.state.requests[calls_before:]
    (project_tokens, _), (key_tokens, _) = await _spent(database_url, key.project_id, key.id)
    prompts = sum(max(1, len(all_text(call.body)) // 4) for call in calls)
    assert calls and prompts + len(calls) <= project_tokens - before[0][0]
    assert key_tokens - before[1][0] == project_tokens - before[0][0]
