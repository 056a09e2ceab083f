"""Webhook endpoints a project registers: each gets every run of its project that ends, signed with
its own secret; a test event; deletion; nothing of it is visible to another project."""

from __future__ import annotations

import json

from app.webhooks.signing import ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service, assert_problem
from tests.helpers.webhooks import Receiver, wait_for

ENDPOINTS = "/v1/webhook-endpoints"


def _signed_by(hit: object, secret: str) -> bool:
    headers, body = hit.headers, hit.body  # type: ignore[attr-defined]
    return verify(secret, headers[ID_HEADER], headers[TIMESTAMP_HEADER], body, headers[SIGNATURE_HEADER])


async def test_a_registered_endpoint_gets_every_run_of_its_project(service: Service) -> None:
    sessions, client, auth = service.app.state.sessions, service.client, service.keys.auth()
    endpoint_receiver, url_receiver = Receiver(), Receiver()
    with endpoint_receiver.serve() as endpoint_server, url_receiver.serve() as url_server:
        made = await client.post(
            ENDPOINTS,
            json={"url": f"{endpoint_server.url}/hook?school=north", "description": "grading"},
            headers=auth,
        )
        assert made.status_code == 201, made.text
        endpoint = made.json()
        assert endpoint["secret"].startswith("whsec_") and endpoint["url"].endswith("/hook")  # no query shown
        listed = (await client.get(ENDPOINTS, headers=auth)).json()["items"]
        assert [e["id"] for e in listed] == [endpoint["id"]] and "secret" not in listed[0]

        body = {"problem": PROBLEM, "webhook_url": f"{url_server.url}/hook"}
        run = (await client.post("/v1/runs", json=body, params={"wait": "true"}, headers=auth)).json()
        deliveries = (await client.get(f"/v1/runs/{run['id']}/deliveries", headers=auth)).json()["items"]
        assert len(deliveries) == 2
        for delivery in deliveries:
            await wait_for(sessions, delivery["id"], "delivered")
        # another project's run is not sent to it
        other = await client.post(
            "/v1/runs", json={"problem": PROBLEM}, params={"wait": "true"}, headers=service.keys.auth("other")
        )
        assert other.status_code == 200
    (to_endpoint,) = endpoint_receiver.hits
    (to_url,) = url_receiver.hits
    assert _signed_by(to_endpoint, endpoint["secret"]) and not _signed_by(to_endpoint, "whsec-test")
    assert _signed_by(to_url, "whsec-test")  # a run's own webhook_url: the service's secret
    sent, also = json.loads(to_endpoint.body), json.loads(to_url.body)
    assert sent == also and (sent["type"], sent["run_id"], sent["status"]) == (
        "run.finished",
        run["id"],
        "screened",  # the offline panel screens, it never accepts
    )
    log = (await client.get(f"{ENDPOINTS}/{endpoint['id']}/deliveries", headers=auth)).json()["items"]
    assert [d["status"] for d in log] == ["delivered"]


async def test_a_test_event_and_deletion(service: Service) -> None:
    sessions, client, auth = service.app.state.sessions, service.client, service.keys.auth()
    receiver = Receiver()
    with receiver.serve() as server:
        endpoint = (await client.post(ENDPOINTS, json={"url": f"{server.url}/hook"}, headers=auth)).json()
        ping = await client.post(f"{ENDPOINTS}/{endpoint['id']}/test", headers=auth)
        assert ping.status_code == 202 and ping.json()["event"] == "ping"
        await wait_for(sessions, ping.json()["id"], "delivered")
        (hit,) = receiver.hits
        assert _signed_by(hit, endpoint["secret"]) and json.loads(hit.body)["type"] == "ping"
        assert hit.headers["thinkloop-event"] == "ping"

        other = service.keys.auth("other")
        for method, path in (
            ("GET", f"{ENDPOINTS}/{endpoint['id']}"),
            ("POST", f"{ENDPOINTS}/{endpoint['id']}/test"),
            ("GET", f"{ENDPOINTS}/{endpoint['id']}/deliveries"),
            ("DELETE", f"{ENDPOINTS}/{endpoint['id']}"),
        ):
            assert (await client.request(method, path, headers=other)).status_code == 404, (method, path)
        assert (await client.get(ENDPOINTS, headers=other)).json()["items"] == []

        gone = await client.delete(f"{ENDPOINTS}/{endpoint['id']}", headers=auth)
        assert gone.status_code == 204
        assert (await client.get(f"{ENDPOINTS}/{endpoint['id']}", headers=auth)).status_code == 404
        run = (
            await client.post("/v1/runs", json={"problem": PROBLEM}, params={"wait": "true"}, headers=auth)
        ).json()
        assert (await client.get(f"/v1/runs/{run['id']}/deliveries", headers=auth)).json()["items"] == []
    assert len(receiver.hits) == 1


async def test_an_endpoint_must_pass_the_allow_list(service: Service) -> None:
    for url in ("http://10.1.2.3/hook", "http://169.254.169.254/latest", "http://[::1]:9/hook"):
        refused = await service.client.post(ENDPOINTS, json={"url": url}, headers=service.keys.auth())
        assert refused.status_code == 422 and "url refused" in refused.json()["detail"], url
    assert (await service.client.get(ENDPOINTS, headers=service.keys.auth())).json()["items"] == []


async def test_a_webhook_url_holding_a_password_or_token_is_refused_and_nothing_is_stored(
    service: Service,
) -> None:
    client, auth = service.client, service.keys.auth()
    refused = (
        "http://user:pw@127.0.0.1:9/hook",
        "http://user@127.0.0.1:9/hook",
        "http://127.0.0.1:9/hook?token=abc",
        "http://127.0.0.1:9/hook?school=north&API-Key=abc",
        "http://127.0.0.1:9/hook?accessToken=abc",
        "http://127.0.0.1:9/hook?client_secret=abc",
        "http://127.0.0.1:9/hook?password=abc",
        "http://127.0.0.1:9/hook?sig=abc",
    )
    for url in refused:
        body = assert_problem(await client.post(ENDPOINTS, json={"url": url}, headers=auth), 422)
        assert "credential" in str(body["detail"]) and "abc" not in str(body["detail"]), url
        run = {"problem": PROBLEM, "webhook_url": url}
        body = assert_problem(await client.post("/v1/runs", json=run, headers=auth), 422)
        assert "webhook_url refused" in str(body["detail"]), url
    assert (await client.get(ENDPOINTS, headers=auth)).json()["items"] == []
    assert (await client.get("/v1/runs", headers=auth)).json()["items"] == []
    # a query that names no secret is kept (and still never shown)
    fine = await client.post(
        ENDPOINTS, json={"url": "http://127.0.0.1:9/hook?school=north&monkey=1"}, headers=auth
    )
    assert fine.status_code == 201 and fine.json()["url"] == "http://127.0.0.1:9/hook"
