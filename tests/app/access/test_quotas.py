"""Quotas: requests per minute per key and per project (429 with RateLimit-* and Retry-After, shared
through Redis by every process), daily token and cost caps checked before a run or batch is stored,
and the brake on repeated failed sign-ins."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import redis

from agents.simulator import SimulatorServer
from app.main import create_app
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Keys, seed_keys, service_settings
from tests.helpers.workers import redis_url

pytestmark = pytest.mark.both_databases

PROBLEM_JSON = "application/problem+json"
LIMITS = redis_url("limits")  # a database of its own (this xdist worker's): flushed by this test


@asynccontextmanager
async def api(
    database_url: str, simulator: SimulatorServer, **settings: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """An API process (in this one) with these settings."""
    app = create_app(service_settings(database_url, simulator, **settings))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


async def _keys(database_url: str) -> Keys:
    from app.db import migrate

    await migrate(database_url)
    return await seed_keys(database_url)


def _too_many(response: httpx.Response, slug: str = "too-many-requests") -> dict[str, Any]:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    assert int(response.headers["retry-after"]) >= 1
    body: dict[str, Any] = response.json()
    assert body["type"].endswith(f"/{slug}")
    return body


async def test_a_keys_requests_per_minute(database_url: str, simulator_server: SimulatorServer) -> None:
    keys = await _keys(database_url)
    async with api(database_url, simulator_server, key_requests_per_minute=3) as client:
        answers = [await client.get("/v1/runs", headers=keys.auth("read")) for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 200]
        assert [a.headers["ratelimit-remaining"] for a in answers] == ["2", "1", "0"]
        assert all(a.headers["ratelimit-limit"] == "3" for a in answers)
        assert 1 <= int(answers[-1].headers["ratelimit-reset"]) <= 60
        refused = await client.get("/v1/runs", headers=keys.auth("read"))
        body = _too_many(refused)
        assert "This key made 3 requests in the last minute" in body["detail"]
        assert refused.headers["ratelimit-remaining"] == "0"
        # another key of the same project has its own window
        assert (await client.get("/v1/runs", headers=keys.auth("both"))).status_code == 200


async def test_a_projects_requests_per_minute(database_url: str, simulator_server: SimulatorServer) -> None:
    keys = await _keys(database_url)
    async with api(database_url, simulator_server, project_requests_per_minute=4) as client:
        for which in ("read", "both", "read", "both"):
            assert (await client.get("/v1/runs", headers=keys.auth(which))).status_code == 200
        body = _too_many(await client.get("/v1/runs", headers=keys.auth("both")))
        assert "This project made 4 requests" in body["detail"]
        # another project is not affected
        assert (await client.get("/v1/runs", headers=keys.auth("other"))).status_code == 200


async def test_with_redis_two_api_processes_share_one_window(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    keys = await _keys(database_url)
    settings = {"key_requests_per_minute": 4, "limits_url": LIMITS}
    redis.Redis.from_url(LIMITS).flushdb()
    try:
        async with (
            api(database_url, simulator_server, **settings) as a,
            api(database_url, simulator_server, **settings) as b,
        ):
            answers = [await client.get("/v1/runs", headers=keys.auth("read")) for client in (a, b) * 3]
        assert [answer.status_code for answer in answers] == [200, 200, 200, 200, 429, 429]
    finally:
        redis.Redis.from_url(LIMITS).flushdb()


async def test_failed_sign_ins_are_slowed(database_url: str, simulator_server: SimulatorServer) -> None:
    keys = await _keys(database_url)
    async with api(database_url, simulator_server, signin_failures_per_minute=5) as client:
        for _ in range(5):
            guess = {"Authorization": f"Bearer tlk_{uuid.uuid4().hex}"}
            assert (await client.get("/v1/runs", headers=guess)).status_code == 401
        body = _too_many(await client.get("/v1/runs", headers={"Authorization": "Bearer tlk_guess"}))
        assert "failed sign-ins" in body["detail"]
        # the brake is on the client, so even a good key waits out the window from there
        _too_many(await client.get("/v1/runs", headers=keys.auth("read")))
        # a missing key is a mistake, not a guess: still a plain 401
        assert (await client.get("/v1/runs")).status_code == 401


async def test_a_daily_token_cap_stops_new_runs_and_batches(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    keys = await _keys(database_url)
    async with api(database_url, simulator_server, project_daily_tokens=1) as client:
        body = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": "sim"}}
        first = await client.post("/v1/runs", json=body, params={"wait": "true"}, headers=keys.auth())
        assert first.status_code == 200 and first.json()["usage"]["input_tokens"] > 0
        before = (await client.get("/v1/runs", headers=keys.auth())).json()["items"]
        refused = await client.post("/v1/runs", json=body, headers=keys.auth())
        problem = _too_many(refused, "quota-exceeded")
        assert problem["spent"]["tokens"] > 1 and "resets at midnight UTC" in problem["detail"]
        assert (await client.get("/v1/runs", headers=keys.auth())).json()["items"] == before  # nothing stored
        dataset = await client.post(
            "/v1/datasets",
            params={"name": "one.jsonl"},
            content=b'{"question": "What is 2 + 2?", "solution": "4"}\n',
            headers=keys.auth() | {"Content-Type": "application/x-ndjson"},
        )
        assert dataset.status_code == 201, dataset.text
        batch = {"dataset_id": dataset.json()["id"], "models": ["sim"], "judge_model": "sim"}
        _too_many(await client.post("/v1/batches", json=batch, headers=keys.auth()), "quota-exceeded")
        # another project's day is its own
        other = await client.post("/v1/runs", json={"problem": PROBLEM}, headers=keys.auth("other"))
        assert other.status_code == 202


async def test_deleting_the_days_runs_gives_no_spend_back(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    """The cap reads a ledger that deleting runs (and batches) leaves alone: what was spent today
    stays spent, to the token, and the project is still refused."""
    keys = await _keys(database_url)
    async with api(database_url, simulator_server, project_daily_tokens=1) as client:
        body = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": "sim"}}
        run = (await client.post("/v1/runs", json=body, params={"wait": "true"}, headers=keys.auth())).json()
        spent = run["usage"]["input_tokens"] + run["usage"]["output_tokens"]
        assert spent > 1
        assert (await client.delete(f"/v1/runs/{run['id']}", headers=keys.auth())).status_code == 204
        assert (await client.get("/v1/runs", headers=keys.auth())).json()["items"] == []
        problem = _too_many(await client.post("/v1/runs", json=body, headers=keys.auth()), "quota-exceeded")
        assert problem["spent"]["tokens"] == spent


async def test_a_daily_cost_cap_counts_a_deleted_batchs_calls(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    keys = await _keys(database_url)
    priced = {"model": "sim-1", "base_url": simulator_server.base_url, "timeout_s": 5, "max_retries": 1}
    priced["price"] = {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0}
    async with api(
        database_url, simulator_server, models={"sim": priced}, project_daily_cost_usd=0.01
    ) as client:
        dataset = await client.post(
            "/v1/datasets",
            params={"name": "one.jsonl"},
            content=b'{"question": "What is 2 + 2?", "solution": "2 + 2 = 4"}\n',
            headers=keys.auth() | {"Content-Type": "application/x-ndjson"},
        )
        batch = {"dataset_id": dataset.json()["id"], "models": ["sim"], "judge_model": "sim", "max_rounds": 1}
        created = await client.post("/v1/batches", json=batch, headers=keys.auth())
        assert created.status_code == 202, created.text
        batch_id = created.json()["id"]
        for _ in range(600):
            got = (await client.get(f"/v1/batches/{batch_id}", headers=keys.auth())).json()
            if got["progress"]["status"] == "completed" and not got["progress"]["items"].get("running"):
                break
            await asyncio.sleep(0.05)
        cost = got["progress"]["cost_usd"]
        assert cost >= 0.01, got
        for steer in ("retry-failed", "resume"):  # new work on an old batch is capped like a new one
            steered = await client.post(f"/v1/batches/{batch_id}/{steer}", headers=keys.auth())
            _too_many(steered, "quota-exceeded")
        assert (await client.delete(f"/v1/batches/{batch_id}", headers=keys.auth())).status_code == 204
        problem = _too_many(
            await client.post("/v1/batches", json=batch, headers=keys.auth()), "quota-exceeded"
        )
        assert problem["spent"]["cost_usd"] == pytest.approx(cost, rel=1e-6)


async def test_quotas_let_requests_through_while_redis_is_away(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    keys = await _keys(database_url)
    away = {"key_requests_per_minute": 1, "limits_url": "redis://127.0.0.1:1/0"}  # nothing listens there
    async with api(database_url, simulator_server, **away) as client:
        answers = [await client.get("/v1/runs", headers=keys.auth("read")) for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 200]
        assert "ratelimit-limit" not in answers[0].headers
        wrong = await client.get("/v1/runs", headers={"Authorization": "Bearer tlk_wrong"})
        assert wrong.status_code == 401


SIM_RUN = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": "sim"}}


async def test_a_keys_daily_cap_leaves_the_projects_other_keys_working(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    keys = await _keys(database_url)
    async with api(database_url, simulator_server, key_daily_tokens=1) as client:
        first = await client.post(
            "/v1/runs", json=SIM_RUN, params={"wait": "true"}, headers=keys.auth("both")
        )
        assert first.status_code == 200 and first.json()["usage"]["input_tokens"] > 0
        problem = _too_many(
            await client.post("/v1/runs", json=SIM_RUN, headers=keys.auth("both")), "quota-exceeded"
        )
        assert problem["detail"].startswith("This key's runs spent")
        # the project's other key has a day of its own
        assert (await client.post("/v1/runs", json=SIM_RUN, headers=keys.auth("write"))).status_code == 202


async def test_deleting_a_keys_runs_gives_it_no_spend_back(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    keys = await _keys(database_url)
    async with api(database_url, simulator_server, key_daily_tokens=1) as client:
        run = (
            await client.post("/v1/runs", json=SIM_RUN, params={"wait": "true"}, headers=keys.auth("both"))
        ).json()
        spent = run["usage"]["input_tokens"] + run["usage"]["output_tokens"]
        assert (await client.delete(f"/v1/runs/{run['id']}", headers=keys.auth("both"))).status_code == 204
        problem = _too_many(
            await client.post("/v1/runs", json=SIM_RUN, headers=keys.auth("both")), "quota-exceeded"
        )
        assert problem["spent"]["tokens"] == spent


async def test_a_batchs_items_are_charged_to_the_key_that_created_it(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    keys = await _keys(database_url)
    priced = {"model": "sim-1", "base_url": simulator_server.base_url, "timeout_s": 5, "max_retries": 1}
    priced["price"] = {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0}
    async with api(database_url, simulator_server, models={"sim": priced}, key_daily_cost_usd=0.01) as client:
        dataset = await client.post(
            "/v1/datasets",
            params={"name": "one.jsonl"},
            content=b'{"question": "What is 2 + 2?", "solution": "2 + 2 = 4"}\n',
            headers=keys.auth("both") | {"Content-Type": "application/x-ndjson"},
        )
        batch = {"dataset_id": dataset.json()["id"], "models": ["sim"], "judge_model": "sim", "max_rounds": 1}
        created = await client.post("/v1/batches", json=batch, headers=keys.auth("both"))
        assert created.status_code == 202, created.text
        for _ in range(600):
            got = (await client.get(f"/v1/batches/{created.json()['id']}", headers=keys.auth("both"))).json()
            if got["progress"]["status"] == "completed" and not got["progress"]["items"].get("running"):
                break
            await asyncio.sleep(0.05)
        problem = _too_many(
            await client.post("/v1/runs", json=SIM_RUN, headers=keys.auth("both")), "quota-exceeded"
        )
        assert problem["spent"]["cost_usd"] == pytest.approx(got["progress"]["cost_usd"], rel=1e-6)
        assert (await client.post("/v1/runs", json=SIM_RUN, headers=keys.auth("write"))).status_code == 202


async def test_a_projects_own_cap_stands_in_for_the_global_one(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    keys = await _keys(database_url)
    async with api(database_url, simulator_server, project_daily_tokens=10**9) as client:
        admin = keys.auth("operator")
        made = await client.post("/v1/projects", json={"name": "capped", "daily_tokens": 1}, headers=admin)
        assert made.status_code == 201 and made.json()["daily_tokens"] == 1
        key = await client.post(f"/v1/projects/{made.json()['id']}/keys", json={"name": "app"}, headers=admin)
        capped = {"Authorization": f"Bearer {key.json()['secret']}"}
        for auth in (capped, keys.auth("both")):
            ran = await client.post("/v1/runs", json=SIM_RUN, params={"wait": "true"}, headers=auth)
            assert ran.status_code == 200 and ran.json()["usage"]["input_tokens"] > 1
        problem = _too_many(await client.post("/v1/runs", json=SIM_RUN, headers=capped), "quota-exceeded")
        assert "(1 tokens" in problem["detail"]
        # the project at the global cap is not refused
        assert (await client.post("/v1/runs", json=SIM_RUN, headers=keys.auth("both"))).status_code == 202
        # back to the global cap: the capped project may run again
        patched = await client.patch(
            f"/v1/projects/{made.json()['id']}", json={"daily_tokens": None}, headers=admin
        )
        assert patched.status_code == 200 and patched.json()["daily_tokens"] is None
        assert (await client.post("/v1/runs", json=SIM_RUN, headers=capped)).status_code == 202
