"""Hostile input gets a clear refusal and leaves stored data intact; secrets never leak."""

from __future__ import annotations

import json

import httpx
import pytest

from agents.simulator import SimulatorServer
from app.db import migrate
from app.main import create_app
from app.models import WebhookDelivery
from app.webhooks.outbox import WebhookTargetRefused, check_target, post
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service, assert_problem, seed_keys, service_settings

JSON = {"Content-Type": "application/json"}


async def run_count(service: Service) -> int:
    listed = await service.client.get("/v1/runs", params={"limit": 100}, headers=service.keys.auth("read"))
    return len(listed.json()["items"])


async def test_hostile_bodies_are_refused_and_nothing_is_stored(service: Service) -> None:
    accepted = await service.client.post("/v1/runs", json={"problem": PROBLEM}, headers=service.keys.auth())
    assert accepted.status_code == 202
    deep = '{"problem": {"question": "q", "metadata": {"a": ' + "[" * 20000 + "]" * 20000 + "}}}"
    bodies: list[tuple[bytes | str, int]] = [
        (deep, 400),  # deeply nested JSON
        (b'{"problem": {"question": "\xff\xfe not UTF-8"}}', 400),
        ('{"problem": {"question": "a\\u0000b"}}', 422),  # NUL: PostgreSQL cannot store it
        ('{"problem": {"question": "x" }, "options": {"model": {"$ne": null}}}', 422),
        ("[" * 70000, 413),  # over the body limit
    ]
    for body, status in bodies:
        response = await service.client.post("/v1/runs", content=body, headers=service.keys.auth() | JSON)
        assert_problem(response, status)
    assert await run_count(service) == 1


async def test_a_name_the_database_cannot_hold_is_a_422_not_a_500(
    service: Service, database_url: str
) -> None:
    body = b'{"question": "A box holds 4 pens. How many pens are in 3 boxes?"}'
    response = await service.client.post(
        "/v1/datasets", params={"name": "evil\x00name.jsonl"}, content=body, headers=service.keys.auth()
    )
    # PostgreSQL cannot store NUL in text, so neither database takes it: a clear 422, nothing stored
    assert "NUL (U+0000)" in str(assert_problem(response, 422)["detail"])
    listed = await service.client.get("/v1/datasets", headers=service.keys.auth("read"))
    assert listed.json()["items"] == []


async def test_ten_thousand_hostile_dataset_rows(service: Service) -> None:
    hostile = [
        "not json",
        '{"question": ""}',
        '{"question": {"$ne": 1}}',
        json.dumps({"question": "nul \x00 here"}),
        '{"question": "ok", "metadata": "not an object"}',
    ]
    too_long = json.dumps({"question": "x" * 8100})  # over the 8,000-character limit
    lines = [hostile[i % len(hostile)] for i in range(9_900)] + [too_long] * 100
    rows = "\n".join(lines).encode()
    response = await service.client.post(
        "/v1/datasets", params={"name": "hostile.jsonl"}, content=rows, headers=service.keys.auth()
    )
    body = assert_problem(response, 422)
    assert body["error_count"] == 10_000 and len(body["row_errors"]) == 100
    listed = await service.client.get("/v1/datasets", headers=service.keys.auth("read"))
    assert listed.json()["items"] == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata (link-local)
        "http://[fe80::1]/hook",
        "http://10.0.0.7/hook",
        "http://192.168.1.20:8080/hook",
        "https://8.8.8.8/hook",
        "http://[::ffff:169.254.169.254]/hook",
    ],
)
async def test_webhooks_to_non_loopback_addresses_are_refused(service: Service, url: str) -> None:
    body = {"problem": PROBLEM, "webhook_url": url}
    response = await service.client.post("/v1/runs", json=body, headers=service.keys.auth())
    assert "webhook_url refused" in str(assert_problem(response, 422)["detail"])
    assert await run_count(service) == 0


async def test_the_allow_list_admits_named_hosts_and_networks() -> None:
    # loopback: only a port named for it (another local service's /quitquitquit stays out of reach)
    for url in ("http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://[::1]:9/hook"):
        with pytest.raises(WebhookTargetRefused, match="is on this machine"):
            await check_target(url, [])
        with pytest.raises(WebhookTargetRefused):
            await check_target(url, ["127.0.0.1", "localhost", "127.0.0.1:10", "localhost:10"])
    await check_target("http://127.0.0.1:9/hook", ["127.0.0.1:9"])
    await check_target("http://localhost:9/hook", ["localhost:*"])
    await check_target("http://localhost:9/hook", ["127.0.0.1:9", "[::1]:9"])  # by the addresses it has
    await check_target("http://[::1]:9/hook", ["[::1]:9"])
    await check_target("http://127.0.0.2:8080/quit", ["127.0.0.0/8:8080"])
    with pytest.raises(WebhookTargetRefused):
        await check_target("http://127.0.0.1:8080/quitquitquit?admin=1", ["127.0.0.1:9000"])
    # elsewhere: the host (and the port, when the entry names one)
    await check_target("https://10.1.2.3/hook", ["10.0.0.0/8"])
    await check_target("https://hooks.example.com:8443/x", ["hooks.example.com:8443"])
    with pytest.raises(WebhookTargetRefused):
        await check_target("https://hooks.example.com/x", ["hooks.example.com:8443"])
    await check_target("https://hooks.example.com/x", ["*.example.com"])
    with pytest.raises(WebhookTargetRefused):
        await check_target("https://10.1.2.3/hook", ["10.9.0.0/16"])
    with pytest.raises(WebhookTargetRefused):
        await check_target("ftp://127.0.0.1/hook", [])


async def test_delivery_checks_the_target_again_and_sends_nothing() -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200)

    transport = httpx.MockTransport(answer)
    delivery = WebhookDelivery(
        run_id="r", event="run.finished", url="http://169.254.169.254/hook", status="pending"
    )
    async with httpx.AsyncClient(transport=transport) as client:
        attempt = await post(client, delivery, "s", [])
    assert attempt.refused and not attempt.delivered and sent == []


async def test_secrets_never_reach_logs_traces_or_error_bodies(
    database_url: str,
    simulator_server: SimulatorServer,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider_key, webhook_secret = "sk-provider-SECRET-4242", "whsec-SECRET-9191"
    monkeypatch.setenv("SIM_PROVIDER_KEY", provider_key)
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [], "latency_s": 0.0}))
    await migrate(database_url)
    keys = await seed_keys(database_url)
    model = {"model": "sim-1", "base_url": simulator_server.base_url, "api_key_env": "SIM_PROVIDER_KEY"}
    settings = service_settings(
        database_url,
        simulator_server,
        models={"sim": model},
        webhook_secret=webhook_secret,
        log_level="DEBUG",
        webhook_attempts=1,
    )
    app = create_app(settings)
    bodies = []
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            run = {
                "problem": PROBLEM,
                "options": {"model": "sim", "judge_model": "sim", "max_rounds": 2},
                # nothing listens: it fails (a parameter named like a secret would be refused at once)
                "webhook_url": "http://127.0.0.1:9/hook?ref=URL-SECRET-7",
            }
            created = await client.post("/v1/runs?wait=true", json=run, headers=keys.auth())
            bodies.append(created.text)
            run_id = created.json()["id"]
            bodies.append((await client.get(f"/v1/runs/{run_id}", headers=keys.auth())).text)
            bodies.append((await client.get(f"/v1/runs/{run_id}/events", headers=keys.auth())).text)
            bodies.append((await client.get("/v1/runs", headers={"X-API-Key": keys.both + "x"})).text)
            bodies.append((await client.get("/metrics", headers=keys.auth())).text)
    captured = capfd.readouterr()
    everything = "\n".join([*bodies, captured.out, captured.err])
    assert "run.finished" in everything  # the logs were captured
    for secret in (provider_key, webhook_secret, keys.both, keys.read, "URL-SECRET-7"):
        at = everything.find(secret)
        assert at < 0, f"{secret!r} leaked: …{everything[max(0, at - 300) : at + 40]}…"
