"""Projects (tenants): nothing of one project is visible, changeable or deletable with another's
keys; metadata belongs to the submission; operator keys manage projects and keys; keys expire."""

from __future__ import annotations

from datetime import timedelta

import httpx
from sqlalchemy import update
from sqlmodel import col

from agents.llm.client import CachedReply
from app.batches.cache import SqlResponseCache
from app.db import create_engine, session_factory, short_session
from app.models import DEFAULT_PROJECT, ApiKey, utcnow
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service

PROBLEM_JSON = "application/problem+json"


async def _run(service: Service, which: str = "both", **extra: object) -> dict[str, object]:
    body = {"problem": PROBLEM} | extra
    response = await service.client.post(
        "/v1/runs", json=body, params={"wait": "true"}, headers=service.keys.auth(which)
    )
    assert response.status_code == 200, response.text
    trace: dict[str, object] = response.json()
    return trace


def _not_found(response: httpx.Response) -> None:
    assert response.status_code == 404, response.text
    assert response.headers["content-type"] == PROBLEM_JSON


async def test_another_projects_run_is_not_there(service: Service) -> None:
    mine = await _run(service)
    run_id = mine["id"]
    other = service.keys.auth("other")
    client = service.client
    _not_found(await client.get(f"/v1/runs/{run_id}", headers=other))
    _not_found(await client.get(f"/v1/runs/{run_id}/events", headers=other))
    _not_found(await client.get(f"/v1/runs/{run_id}/deliveries", headers=other))
    _not_found(await client.post(f"/v1/runs/{run_id}/cancel", headers=other))
    _not_found(await client.post(f"/v1/runs/{run_id}/deliveries/x/redeliver", headers=other))
    assert (await client.get("/v1/runs", headers=other)).json()["items"] == []
    # the same request's answer for an unknown id: ids say nothing across projects
    unknown = await client.get("/v1/runs/0123456789abcdef0123456789abcdef", headers=other)
    assert (
        unknown.json()["detail"].replace("0123456789abcdef0123456789abcdef", str(run_id))
        == ((await client.get(f"/v1/runs/{run_id}", headers=other)).json()["detail"])
    )
    theirs = await _run(service, "other")
    listed = (await client.get("/v1/runs", headers=other)).json()["items"]
    assert [item["id"] for item in listed] == [theirs["id"]]
    mine_listed = (await client.get("/v1/runs", headers=service.keys.auth())).json()["items"]
    assert [item["id"] for item in mine_listed] == [run_id]
    assert (await client.get(f"/v1/runs/{theirs['id']}", headers=service.keys.auth())).status_code == 404


async def test_an_idempotency_key_never_replays_another_projects_run(service: Service) -> None:
    body = {"problem": PROBLEM}
    first = await service.client.post(
        "/v1/runs", json=body, headers=service.keys.auth() | {"Idempotency-Key": "same"}
    )
    second = await service.client.post(
        "/v1/runs", json=body, headers=service.keys.auth("other") | {"Idempotency-Key": "same"}
    )
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] != second.json()["id"] and "idempotent-replayed" not in second.headers


async def test_metadata_belongs_to_the_run_not_to_the_shared_problem(service: Service) -> None:
    alice = await _run(service, problem=PROBLEM | {"metadata": {"student": "Alice", "school": "North"}})
    bob = await _run(service, "other", problem=PROBLEM | {"metadata": {"student": "Bob"}})
    assert alice["problem"]["metadata"] == {"student": "Alice", "school": "North"}  # type: ignore[index]
    assert bob["problem"]["metadata"] == {"student": "Bob"}  # type: ignore[index]
    again = (await service.client.get(f"/v1/runs/{alice['id']}", headers=service.keys.auth())).json()
    assert again["problem"]["metadata"] == {"student": "Alice", "school": "North"}


async def test_operator_keys_manage_projects_and_keys(service: Service) -> None:
    client, admin = service.client, service.keys.auth("operator")
    made = await client.post("/v1/projects", json={"name": "school-east"}, headers=admin)
    assert made.status_code == 201, made.text
    project = made.json()
    assert made.headers["location"] == f"/v1/projects/{project['id']}"
    taken = await client.post("/v1/projects", json={"name": "school-east"}, headers=admin)
    assert taken.status_code == 409 and taken.headers["content-type"] == PROBLEM_JSON
    names = [p["name"] for p in (await client.get("/v1/projects", headers=admin)).json()["items"]]
    assert DEFAULT_PROJECT in names and "school-east" in names

    expires = (utcnow() + timedelta(days=30)).isoformat()
    key = await client.post(
        f"/v1/projects/{project['id']}/keys",
        json={"name": "tutor-app", "scopes": ["read", "write"], "expires_at": expires},
        headers=admin,
    )
    assert key.status_code == 201, key.text
    created = key.json()
    assert created["secret"].startswith("tlk_") and created["project_id"] == project["id"]
    assert created["last_used_at"] is None and created["expires_at"] is not None

    fresh = {"Authorization": f"Bearer {created['secret']}"}
    assert (await client.get("/v1/runs", headers=fresh)).json()["items"] == []  # a new, empty project
    listed = (await client.get(f"/v1/projects/{project['id']}/keys", headers=admin)).json()["items"]
    assert [k["name"] for k in listed] == ["tutor-app"] and "secret" not in listed[0]
    assert listed[0]["last_used_at"] is not None

    revoked = await client.post(f"/v1/keys/{created['id']}/revoke", headers=admin)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    assert (await client.get("/v1/runs", headers=fresh)).status_code == 401

    past = await client.post(
        f"/v1/projects/{project['id']}/keys",
        json={"name": "late", "expires_at": "2001-01-01T00:00:00Z"},
        headers=admin,
    )
    assert past.status_code == 422
    naive = await client.post(
        f"/v1/projects/{project['id']}/keys",
        json={"name": "n", "expires_at": "2099-01-01T00:00:00"},
        headers=admin,
    )
    assert naive.status_code == 422
    _not_found(await client.post("/v1/projects/nope/keys", json={"name": "x"}, headers=admin))
    _not_found(await client.post("/v1/keys/nope/revoke", headers=admin))


async def test_operator_keys_set_and_change_a_projects_daily_caps(service: Service) -> None:
    client, admin = service.client, service.keys.auth("operator")
    body = {"name": "school-west", "daily_tokens": 5000, "daily_cost_usd": 2.5}
    made = (await client.post("/v1/projects", json=body, headers=admin)).json()
    assert (made["daily_tokens"], made["daily_cost_usd"]) == (5000, 2.5)
    url = f"/v1/projects/{made['id']}"
    changed = await client.patch(url, json={"daily_cost_usd": None}, headers=admin)
    assert changed.status_code == 200, changed.text
    assert (changed.json()["daily_tokens"], changed.json()["daily_cost_usd"]) == (5000, None)  # unsent: kept
    listed = {p["id"]: p for p in (await client.get("/v1/projects", headers=admin)).json()["items"]}
    assert (listed[made["id"]]["daily_tokens"], listed[made["id"]]["daily_cost_usd"]) == (5000, None)
    entries = (await client.get("/v1/audit", params={"target_id": made["id"]}, headers=admin)).json()["items"]
    assert [(e["action"], e["detail"]) for e in entries] == [
        ("updated", {"daily_cost_usd": None}),
        ("created", body),
    ]


async def test_a_projects_caps_are_checked_on_change(service: Service) -> None:
    client, admin = service.client, service.keys.auth("operator")
    project = (await client.post("/v1/projects", json={"name": "school-south"}, headers=admin)).json()
    assert (project["daily_tokens"], project["daily_cost_usd"]) == (None, None)
    url = f"/v1/projects/{project['id']}"
    wrongs = ({"daily_tokens": -1}, {"daily_tokens": 2**63}, {"daily_cost_usd": -0.5}, {"name": "renamed"})
    for wrong in wrongs:
        assert (await client.patch(url, json=wrong, headers=admin)).status_code == 422
    assert (
        await client.post("/v1/projects", json={"name": "x", "daily_tokens": -1}, headers=admin)
    ).status_code == 422
    _not_found(await client.patch("/v1/projects/nope", json={"daily_tokens": 1}, headers=admin))
    refused = await client.patch(url, json={"daily_tokens": 1}, headers=service.keys.auth("both"))
    assert refused.status_code == 403
    assert (await client.get("/v1/audit", params={"action": "updated"}, headers=admin)).json()["items"] == []


async def test_a_project_is_created_with_a_guarantee_target_both_or_neither(service: Service) -> None:
    client, admin = service.client, service.keys.auth("operator")
    target = {"guarantee_alpha": 0.05, "guarantee_delta": 0.1}
    made = await client.post("/v1/projects", json={"name": "school-east", **target}, headers=admin)
    assert made.status_code == 201, made.text
    assert {key: made.json()[key] for key in target} == target
    shown = (await client.get("/v1/projects", headers=admin)).json()["items"]
    assert {key: next(p for p in shown if p["id"] == made.json()["id"])[key] for key in target} == target
    plain = (await client.post("/v1/projects", json={"name": "school-plain"}, headers=admin)).json()
    assert (plain["guarantee_alpha"], plain["guarantee_delta"]) == (None, None)
    wrongs = (
        {"guarantee_alpha": 0.05},  # half a target
        {"guarantee_delta": 0.1},
        {"guarantee_alpha": 0, "guarantee_delta": 0.1},
        {"guarantee_alpha": 1, "guarantee_delta": 0.1},
        {"guarantee_alpha": 0.05, "guarantee_delta": 1.5},
        {"guarantee_alpha": 0.05, "guarantee_delta": -0.1},
    )
    for number, wrong in enumerate(wrongs):
        refused = await client.post("/v1/projects", json={"name": f"wrong-{number}", **wrong}, headers=admin)
        assert refused.status_code == 422, (wrong, refused.text)
    names = {p["name"] for p in (await client.get("/v1/projects", headers=admin)).json()["items"]}
    assert not any(name.startswith("wrong-") for name in names)


async def test_a_patch_never_leaves_half_a_guarantee_target(service: Service) -> None:
    client, admin = service.client, service.keys.auth("operator")
    made = (await client.post("/v1/projects", json={"name": "school-half"}, headers=admin)).json()
    url = f"/v1/projects/{made['id']}"

    async def stored() -> tuple[float | None, float | None]:
        shown = (await client.get("/v1/projects", headers=admin)).json()["items"]
        row = next(p for p in shown if p["id"] == made["id"])
        return row["guarantee_alpha"], row["guarantee_delta"]

    for half in (
        {"guarantee_alpha": 0.05},
        {"guarantee_delta": 0.1},
        {"guarantee_alpha": 0.05, "guarantee_delta": None},
    ):
        refused = await client.patch(url, json=half, headers=admin)
        assert refused.status_code == 422, (half, refused.text)
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert "guarantee_alpha and guarantee_delta" in refused.json()["detail"]
        assert await stored() == (None, None)
    whole = await client.patch(url, json={"guarantee_alpha": 0.05, "guarantee_delta": 0.1}, headers=admin)
    assert whole.status_code == 200, whole.text
    for cleared in ({"guarantee_alpha": None}, {"guarantee_delta": None}):
        refused = await client.patch(url, json=cleared, headers=admin)
        assert refused.status_code == 422, (cleared, refused.text)
        assert await stored() == (0.05, 0.1)
    one_side = await client.patch(url, json={"guarantee_alpha": 0.02}, headers=admin)
    assert one_side.status_code == 200 and await stored() == (0.02, 0.1)  # still a whole target
    lifted = await client.patch(url, json={"guarantee_alpha": None, "guarantee_delta": None}, headers=admin)
    assert lifted.status_code == 200 and await stored() == (None, None)


async def test_only_admin_keys_reach_the_admin_api_and_admin_is_no_data_scope(service: Service) -> None:
    client = service.client
    for which in ("read", "write", "both", "other"):
        response = await client.get("/v1/projects", headers=service.keys.auth(which))
        assert response.status_code == 403, which
    assert (await client.post("/v1/projects", json={"name": "x"})).status_code == 401
    assert (await client.get("/v1/runs", headers=service.keys.auth("admin"))).status_code == 403


async def test_an_expired_key_is_refused(service: Service, database_url: str) -> None:
    headers = service.keys.auth("other")
    assert (await service.client.get("/v1/runs", headers=headers)).status_code == 200
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            await session.execute(
                update(ApiKey)
                .where(col(ApiKey.name) == "other")
                .values(expires_at=utcnow() - timedelta(seconds=1))
            )
    finally:
        await engine.dispose()
    refused = await service.client.get("/v1/runs", headers=headers)
    assert refused.status_code == 401 and "expired" in refused.json()["detail"]


async def test_cached_replies_are_seen_by_their_project_only(database_url: str) -> None:
    from app.db import migrate

    await migrate(database_url)
    engine = create_engine(database_url)
    try:
        sessions = session_factory(engine)
        a, b = SqlResponseCache(sessions, "project-a"), SqlResponseCache(sessions, "project-b")
        default = SqlResponseCache(sessions)
        await a.put("k" * 64, "m", "A's reply")
        assert await a.get("k" * 64) == CachedReply("A's reply")
        assert await b.get("k" * 64) is None and await default.get("k" * 64) is None
        await default.put("d" * 64, "m", "plain")
        assert await SqlResponseCache(sessions, DEFAULT_PROJECT).get("d" * 64) == CachedReply("plain")
        assert await a.get("d" * 64) is None
    finally:
        await engine.dispose()


async def test_another_projects_datasets_and_batches_are_not_there(service: Service) -> None:
    from tests.helpers.batches import settle, start

    batch = await start(service)
    await settle(service, batch["id"])
    dataset_id, batch_id = batch["dataset_id"], batch["id"]
    client, other = service.client, service.keys.auth("other")
    _not_found(await client.get(f"/v1/datasets/{dataset_id}", headers=other))
    _not_found(await client.delete(f"/v1/datasets/{dataset_id}", headers=other))
    assert (await client.get("/v1/datasets", headers=other)).json()["items"] == []
    body = {"dataset_id": dataset_id, "models": ["sim"], "judge_model": "sim"}
    refused = await client.post("/v1/batches", json=body, headers=other)
    assert refused.status_code == 422 and f"There is no dataset {dataset_id}" in refused.json()["detail"]
    for path in ("", "/report", "/items", "/events"):
        _not_found(await client.get(f"/v1/batches/{batch_id}{path}", headers=other))
    for verb in ("pause", "resume", "cancel", "retry-failed"):
        _not_found(await client.post(f"/v1/batches/{batch_id}/{verb}", headers=other))
    _not_found(await client.delete(f"/v1/batches/{batch_id}", headers=other))
    assert (await client.get("/v1/batches", headers=other)).json()["items"] == []
    # and the batch's item runs are the first project's alone
    items = (await client.get(f"/v1/batches/{batch_id}/items", headers=service.keys.auth())).json()["items"]
    _not_found(await client.get(f"/v1/runs/{items[0]['run_id']}", headers=other))
    mine = (await client.get(f"/v1/runs/{items[0]['run_id']}", headers=service.keys.auth())).json()
    assert mine["batch_id"] == batch_id and mine["problem"]["metadata"]  # the dataset row's metadata


async def test_an_id_no_database_could_hold_is_simply_not_found(service: Service) -> None:
    for path in ("/v1/runs/a%00b", "/v1/batches/a%00b", "/v1/datasets/a%00b", "/v1/runs/a%00b/events"):
        _not_found(await service.client.get(path, headers=service.keys.auth()))
