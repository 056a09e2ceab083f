"""Scopes between tenants: a project's admin manages only its own project; the instance's operator
key manages every one; an Idempotency-Key is the project's, whichever of its keys replays it."""

from __future__ import annotations

from typing import Any

from tests.helpers.service import Service, assert_problem

PROBLEM = {"question": "What is 2 + 3?", "solution": "2 + 3 = 5"}


async def _other_project(service: Service) -> dict[str, Any]:
    """The second project of the fixture (the "other" key's), as the operator lists it."""
    operator = service.keys.auth("operator")
    projects = (await service.client.get("/v1/projects", headers=operator)).json()["items"]
    return next(p for p in projects if p["name"].startswith("other-"))


async def _key(service: Service, project_id: str, who: str, **body: Any) -> dict[str, Any]:
    response = await service.client.post(
        f"/v1/projects/{project_id}/keys", json={"name": "app"} | body, headers=service.keys.auth(who)
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_a_project_admin_gets_404_on_another_projects_keys_caps_and_audit(service: Service) -> None:
    client, admin = service.client, service.keys.auth("admin")
    other = await _other_project(service)
    theirs = await _key(service, other["id"], "operator")
    for response in (
        await client.post(f"/v1/projects/{other['id']}/keys", json={"name": "mine-now"}, headers=admin),
        await client.get(f"/v1/projects/{other['id']}/keys", headers=admin),
        await client.post(f"/v1/keys/{theirs['id']}/revoke", headers=admin),
        await client.patch(f"/v1/projects/{other['id']}", json={"require_warrant": 0.5}, headers=admin),
        await client.patch(f"/v1/projects/{other['id']}", json={"daily_tokens": 0}, headers=admin),
        await client.get("/v1/audit", params={"project_id": other["id"]}, headers=admin),
    ):
        assert_problem(response, 404)
    # Nothing changed there: their key works, their caps and keys are as they were.
    still = await client.get("/v1/runs", headers={"Authorization": f"Bearer {theirs['secret']}"})
    assert still.status_code == 200
    operator = service.keys.auth("operator")
    listed = (await client.get(f"/v1/projects/{other['id']}/keys", headers=operator)).json()["items"]
    assert [k["name"] for k in listed] == ["other", "app"] and listed[1]["revoked_at"] is None
    assert (await _other_project(service))["daily_tokens"] is None
    # The admin sees its own project only, and its audit log holds no entry of another project's.
    projects = (await client.get("/v1/projects", headers=admin)).json()["items"]
    assert [p["name"] for p in projects] == ["default"]
    await _key(service, projects[0]["id"], "admin")
    entries = (await client.get("/v1/audit", headers=admin)).json()["items"]
    assert entries and {e["project_id"] for e in entries} == {projects[0]["id"]}


async def test_a_project_admin_manages_its_own_keys_but_not_caps_projects_or_operators(
    service: Service,
) -> None:
    client, admin = service.client, service.keys.auth("admin")
    (own,) = (await client.get("/v1/projects", headers=admin)).json()["items"]
    made = await _key(service, own["id"], "admin", scopes=["read", "write", "admin"])
    listed = (await client.get(f"/v1/projects/{own['id']}/keys", headers=admin)).json()["items"]
    assert made["id"] in [k["id"] for k in listed]
    revoked = await client.post(f"/v1/keys/{made['id']}/revoke", headers=admin)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    warrant = await client.patch(f"/v1/projects/{own['id']}", json={"require_warrant": 0.2}, headers=admin)
    assert warrant.status_code == 200 and warrant.json()["require_warrant"] == 0.2
    for response in (
        await client.patch(f"/v1/projects/{own['id']}", json={"daily_tokens": 10**9}, headers=admin),
        await client.patch(f"/v1/projects/{own['id']}", json={"daily_cost_usd": None}, headers=admin),
        await client.post("/v1/projects", json={"name": "my-own-tenant"}, headers=admin),
        await client.post(
            f"/v1/projects/{own['id']}/keys", json={"name": "up", "scopes": ["operator"]}, headers=admin
        ),
        await client.post("/v1/models/sim/check", headers=admin),
    ):
        assert_problem(response, 403)
    names = [
        p["name"]
        for p in (await client.get("/v1/projects", headers=service.keys.auth("operator"))).json()["items"]
    ]
    assert "my-own-tenant" not in names


async def test_an_operator_key_manages_every_project_and_grants_the_operator_scope(service: Service) -> None:
    client, operator = service.client, service.keys.auth("operator")
    other = await _other_project(service)
    theirs = await _key(service, other["id"], "operator")
    changed = await client.patch(f"/v1/projects/{other['id']}", json={"daily_tokens": 5}, headers=operator)
    assert changed.status_code == 200 and changed.json()["daily_tokens"] == 5
    revoked = await client.post(f"/v1/keys/{theirs['id']}/revoke", headers=operator)
    assert revoked.status_code == 200
    entries = (await client.get("/v1/audit", params={"project_id": other["id"]}, headers=operator)).json()
    assert {e["action"] for e in entries["items"]} >= {"created", "updated", "revoked"}
    second = await _key(service, other["id"], "operator", scopes=["operator"])
    assert second["scopes"] == ["operator"]
    again = await client.get("/v1/projects", headers={"Authorization": f"Bearer {second['secret']}"})
    assert len(again.json()["items"]) >= 2
    # The operator scope is no data scope: it reads no runs.
    assert_problem(await client.get("/v1/runs", headers=operator), 403)


async def test_an_idempotency_key_replayed_by_a_rotated_key_of_the_project_returns_the_same_run(
    service: Service,
) -> None:
    client = service.client
    (own,) = (await client.get("/v1/projects", headers=service.keys.auth("admin"))).json()["items"]
    first = await client.post(
        "/v1/runs", json={"problem": PROBLEM}, headers=service.keys.auth() | {"Idempotency-Key": "pupil-17"}
    )
    assert first.status_code == 202
    rotated = await _key(service, own["id"], "admin")  # the new key; the old one is revoked
    keys = (await client.get(f"/v1/projects/{own['id']}/keys", headers=service.keys.auth("admin"))).json()
    old = next(k for k in keys["items"] if k["name"] == "both")
    await client.post(f"/v1/keys/{old['id']}/revoke", headers=service.keys.auth("admin"))
    assert (await client.get("/v1/runs", headers=service.keys.auth())).status_code == 401
    headers = {"Authorization": f"Bearer {rotated['secret']}", "Idempotency-Key": "pupil-17"}
    again = await client.post("/v1/runs", json={"problem": PROBLEM}, headers=headers)
    assert again.status_code == 202 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    listed = (await client.get("/v1/runs", headers=service.keys.auth("read"))).json()["items"]
    assert [r["id"] for r in listed] == [first.json()["id"]]
    changed = {"problem": {"question": "What is 4 + 4?"}}
    assert_problem(await client.post("/v1/runs", json=changed, headers=headers), 409)
