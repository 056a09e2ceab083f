"""Which record a run cites, and whose records it may cite (issue 49, defects 4 and 6), over HTTP
with a scripted judge (the simulator passes every version): a one-item bench never displaces a
22-item record, every record stays listed, a pin overrides; a record belongs to the project of the
key that saved it, saving needs the validate or admin scope, and an operator's publication, which
is audited, is what lets every project cite one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.service import Service, assert_problem
from tests.helpers.warrants import HELD, ONE, TWENTY_TWO, run, stored_records, validate


async def panels(service: Service, key: str = "read") -> list[dict[str, Any]]:
    response = await service.client.get("/v1/panels", params={"records": 100}, headers=service.keys.auth(key))
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


async def other_key(service: Service, scopes: list[str]) -> dict[str, str]:
    """Headers of a new key of the other project (the "other" key's), made by the operator."""
    operator = service.keys.auth("operator")
    projects = (await service.client.get("/v1/projects", headers=operator)).json()["items"]
    other = next(p for p in projects if p["name"].startswith("other-"))
    made = await service.client.post(
        f"/v1/projects/{other['id']}/keys", json={"name": "bench", "scopes": scopes}, headers=operator
    )
    assert made.status_code == 201, made.text
    return {"Authorization": f"Bearer {made.json()['secret']}"}


async def test_a_one_item_bench_does_not_replace_a_22_item_record_and_a_pin_overrides(
    service: Service,
) -> None:
    honest = (await validate(service, items=TWENTY_TWO, set_name="district"))["record"]
    assert honest["n_flawed"] == 22
    picked = (await validate(service, items=ONE, set_name="picked"))["record"]  # saved later
    assert picked["n_flawed"] == 1 and picked["panel_id"] == honest["panel_id"]
    assert (await run(service))["warrant"]["record_id"] == honest["id"]
    # both stay listed, the cherry-picked one beside the honest one; the larger is the one cited
    (panel,) = await panels(service)
    assert [r["id"] for r in panel["records"]] == [picked["id"], honest["id"]]
    assert (panel["cited"], panel["pinned"]) == (honest["id"], False)
    # the project pins the smaller record: its runs cite it, until the pin is lifted
    path = f"/v1/panels/records/{picked['id']}/pin"
    pinned = await service.client.post(path, headers=service.keys.auth("validator"))
    assert pinned.status_code == 200, pinned.text
    assert pinned.json()["record_id"] == picked["id"] and pinned.json()["panel_id"] == picked["panel_id"]
    assert (await run(service))["warrant"]["record_id"] == picked["id"]
    (panel,) = await panels(service)
    assert (panel["cited"], panel["pinned"]) == (picked["id"], True)
    shown = await service.client.get(f"/v1/panels/records/{picked['id']}", headers=service.keys.auth("read"))
    assert shown.json()["cited"] is True and shown.json()["pinned"] is True
    assert shown.json()["identity"] == panel["identity"]
    lifted = await service.client.delete(path, headers=service.keys.auth("admin"))  # admin holds validate
    assert lifted.status_code == 204, lifted.text
    assert (await run(service))["warrant"]["record_id"] == honest["id"]
    audit = await service.client.get(
        "/v1/audit", params={"target_id": picked["id"]}, headers=service.keys.auth("admin")
    )
    assert [e["action"] for e in audit.json()["items"]] == ["unpinned", "pinned"]


@pytest.mark.both_databases  # the pins' composite key and the publication, on each database
async def test_a_pin_of_an_unknown_or_foreign_record_is_a_404_and_needs_the_scope(service: Service) -> None:
    theirs = (await validate(service, key="validator"))["record"]  # the default project's
    other = await other_key(service, ["read", "write", "validate"])
    for path in (f"/v1/panels/records/{theirs['id']}", f"/v1/panels/records/{'f' * 32}"):
        assert_problem(await service.client.post(f"{path}/pin", headers=other), 404)
        assert_problem(await service.client.delete(f"{path}/pin", headers=other), 404)
        assert_problem(await service.client.get(path, headers=other), 404)
    assert_problem(await service.client.post("/v1/panels/records/x%00y/pin", headers=other), 404)
    # a key without the validate or admin scope pins nothing, in its own project either
    path = f"/v1/panels/records/{theirs['id']}/pin"
    assert_problem(await service.client.post(path, headers=service.keys.auth("both")), 403)
    assert_problem(
        await service.client.delete(path, headers=service.keys.auth("validator")), 404
    )  # not pinned


async def test_a_record_saved_in_one_project_is_never_cited_by_anothers_runs(service: Service) -> None:
    """Defect 6: the other project requires a warrant its panel has never earned; records saved by
    the default project's keys, and by a key of a third party's choosing, leave its runs in review."""
    operator = service.keys.auth("operator")
    projects = (await service.client.get("/v1/projects", headers=operator)).json()["items"]
    other = next(p for p in projects if p["name"].startswith("other-"))
    strict = await service.client.patch(
        f"/v1/projects/{other['id']}", json={"require_warrant": 1.0}, headers=operator
    )
    assert strict.status_code == 200, strict.text
    assert (await run(service, key="other"))["status"] == "needs_review"
    # the default project's read-write key (no admin, no validate) cannot save at all
    body = {"items": HELD, "judge_model": "sim", "save": True}
    refused = await service.client.post("/v1/judges/validate", json=body, headers=service.keys.auth("both"))
    assert "'validate' or 'admin' scope" in str(assert_problem(refused, 403)["detail"])
    assert await stored_records_of(service) == []
    # a record the default project may save is the default project's: the other's runs never cite it
    mine = (await validate(service, key="validator"))["record"]
    assert (await run(service))["warrant"]["record_id"] == mine["id"]
    still = await run(service, key="other")
    assert still["status"] == "needs_review" and still["stop_reason"].startswith("panel not certified")
    assert await panels(service, key="other") == []
    # ... and the other project's own record is not the default project's to cite
    theirs = await service.client.post(
        "/v1/judges/validate", json=body, headers=await other_key(service, ["write", "validate"])
    )
    assert theirs.status_code == 200, theirs.text
    assert (await run(service))["warrant"]["record_id"] == mine["id"]
    assert (await run(service, key="other"))["warrant"]["record_id"] == theirs.json()["record"]["id"]


async def stored_records_of(service: Service) -> list[str]:
    url = str(service.app.state.settings.database_url)
    return [r.id for r in await stored_records(url)]


async def test_a_key_with_write_and_admin_may_save_and_one_with_write_alone_may_not(service: Service) -> None:
    body = {"items": HELD, "judge_model": "sim", "save": True}
    writer = await service.client.post("/v1/judges/validate", json=body, headers=service.keys.auth("write"))
    assert_problem(writer, 403)
    unsaved = await service.client.post(
        "/v1/judges/validate", json=body | {"save": False}, headers=service.keys.auth("write")
    )
    assert unsaved.status_code == 200 and unsaved.json()["record"] is None  # the bench itself is write's
    admin = await other_key(service, ["write", "admin"])
    saved = await service.client.post("/v1/judges/validate", json=body, headers=admin)
    assert saved.status_code == 200, saved.text
    assert (await run(service, key="other"))["warrant"]["record_id"] == saved.json()["record"]["id"]


@pytest.mark.both_databases  # the pins' composite key and the publication, on each database
async def test_an_operator_published_record_is_cited_across_projects_and_audited(service: Service) -> None:
    record = (await validate(service, key="validator"))["record"]
    assert (await run(service, key="other"))["warrant"] == {"status": "none"}
    path = f"/v1/panels/records/{record['id']}/publish"
    for key in ("admin", "validator", "both"):  # a project's keys publish nothing
        assert_problem(await service.client.post(path, headers=service.keys.auth(key)), 403)
    assert_problem(
        await service.client.post(
            f"/v1/panels/records/{'e' * 32}/publish", headers=service.keys.auth("operator")
        ),
        404,
    )
    published = await service.client.post(path, headers=service.keys.auth("operator"))
    assert published.status_code == 200, published.text
    assert published.json()["published_at"] is not None
    assert (await run(service, key="other"))["warrant"]["record_id"] == record["id"]
    (panel,) = await panels(service, key="other")
    assert panel["cited"] == record["id"] and panel["records"][0]["published_at"] is not None
    # the other project may pin it now, as one of the records its runs may cite
    other = await other_key(service, ["validate"])
    assert (
        await service.client.post(f"/v1/panels/records/{record['id']}/pin", headers=other)
    ).status_code == 200
    entries = await service.client.get(
        "/v1/audit", params={"action": "published"}, headers=service.keys.auth("operator")
    )
    (entry,) = entries.json()["items"]
    assert entry["target_type"] == "validity-record" and entry["target_id"] == record["id"]
    assert entry["project_id"] == "default" and entry["actor"].startswith("operator (")
    withdrawn = await service.client.delete(path, headers=service.keys.auth("operator"))
    assert withdrawn.status_code == 200 and withdrawn.json()["published_at"] is None
    assert (await run(service, key="other"))["warrant"] == {"status": "none"}  # its pin holds nothing now
    assert (await run(service))["warrant"]["record_id"] == record["id"]
