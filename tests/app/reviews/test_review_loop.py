"""The whole review loop through the HTTP API on PostgreSQL: runs on the simulator's panel enter a
project's queue (needs_review, or drawn for audit), a teacher decides every item, the decisions
become the project's review set, a bench on it saves a record, and new runs' warrants cite
"reviews of <project>"; a project requiring its warrant from reviews sends an acceptance measured
elsewhere to needs_review; the review events reach a receiver signed like every other."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from app.reviews.queue import audit_draw
from tests.helpers.reviewing import auth, corrected, decide, queue, sound, submit, unread
from tests.helpers.service import Service
from tests.helpers.validity import RECORDABLE
from tests.helpers.webhooks import Receiver
from thinkloop_client.webhooks import verify

pytestmark = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
MISSING = {"type": "missing_data", "evidence": "Lena's count of shells is never given"}
WRONG = {"type": "answer_mismatch", "evidence": "the answer counts bags, the question asks for apples"}


async def project_with_keys(service: Service, name: str, **fields: Any) -> dict[str, Any]:
    """A project made by the operator (with ``fields``), and its keys: app (read, write), teacher
    (review), validator (write, validate) and admin."""
    operator = service.keys.auth("operator")
    made = await service.client.post("/v1/projects", json={"name": name} | fields, headers=operator)
    assert made.status_code == 201, made.text
    project = made.json()
    keys = {}
    for who, scopes in {
        "app": ["read", "write"],
        "teacher": ["review"],
        "validator": ["write", "validate"],
        "admin": ["admin"],
    }.items():
        key = await service.client.post(
            f"/v1/projects/{project['id']}/keys", json={"name": who, "scopes": scopes}, headers=operator
        )
        assert key.status_code == 201, key.text
        keys[who] = key.json()["secret"]
    return project | {"keys": keys}


def decision_for(item: dict[str, Any], n_flawed_accepted: list[int]) -> dict[str, Any]:
    """What the teacher decides: the held (unread) problems are flawed, with a correction; of the
    accepted ones, the first two audited are judged flawed (with a correction), the rest sound."""
    if item["reason"] == "needs_review":
        n = int(item["question"].split("beach ")[1].split(".")[0])
        return {"decision": "flawed", "flaws": [MISSING], "corrected": corrected(n), "reviewer": "mr-ito"}
    if item["reason"] == "audit" and len(n_flawed_accepted) < 2:
        n_flawed_accepted.append(1)
        fixed = {"question": item["question"], "solution": item["solution"].replace(", so", "; so")}
        return {"decision": "flawed", "flaws": [WRONG], "corrected": fixed}
    return {"decision": "sound"}


async def test_teachers_decisions_become_the_labels_that_warrant_the_panel(service: Service) -> None:
    north = await project_with_keys(service, "school-north", audit_rate=0.5)
    keys = north["keys"]
    receiver = Receiver()
    with receiver.serve() as hooks:
        endpoint = await service.client.post(
            "/v1/webhook-endpoints", json={"url": f"{hooks.url}/hook"}, headers=auth(keys["app"])
        )
        assert endpoint.status_code == 201, endpoint.text
        secret = endpoint.json()["secret"]
        # 40 runs: 30 sound problems (accepted) and 10 whose answer rests on a step nothing checked
        runs = [
            await submit(service, keys["app"], sound(n) | {"metadata": {"pupil": f"P-{n}"}})
            for n in range(30)
        ]
        runs += [await submit(service, keys["app"], unread(n)) for n in range(10)]
        accepted = [r for r in runs if r["status"] == "accepted"]
        assert len(accepted) == 30 and sum(r["status"] == "needs_review" for r in runs) == 10
        drawn = {r["id"] for r in accepted if audit_draw(north["audit_seed"], r["id"]) < 0.5}
        items = await queue(service, keys["teacher"])
        assert {i["run_id"] for i in items if i["reason"] == "audit"} == drawn and drawn
        assert sum(i["reason"] == "needs_review" for i in items) == 10
        # a teacher also asks for the accepted runs not drawn, so that the set has sound versions enough
        for run in accepted:
            if run["id"] not in drawn:
                asked = await service.client.post(
                    f"/v1/runs/{run['id']}/review-requests", headers=auth(keys["teacher"])
                )
                assert asked.status_code == 201, asked.text
        items = await queue(service, keys["teacher"], status="pending")
        assert len(items) == 40 and all(i["grading_progress"] == "PendingManual" for i in items)
        flawed_accepted: list[int] = []
        for item in items:
            await decide(service, keys["teacher"], item["id"], decision_for(item, flawed_accepted))
        assert await queue(service, keys["teacher"], status="pending") == []
        await _signed(receiver, secret, {"review.requested": 40, "review.decided": 40})

    review_set = (await service.client.get("/v1/reviews/set", headers=auth(keys["teacher"]))).json()
    assert review_set["name"] == "reviews of school-north" and review_set["reviewers"] == 2
    assert review_set["flawed"] == 12 and review_set["sound"] == 40  # 28 decided sound, 12 corrections
    # The bench on the review set: the panel holds the versions whose answer rests on an unread
    # relation again (held: no pass), passes the corrections and the sound ones
    bench = await service.client.post(
        "/v1/judges/validate",
        json={"review_set": True, "judge_model": "sim", "save": True},
        headers=auth(keys["validator"]),
    )
    assert bench.status_code == 200, bench.text
    record = bench.json()["record"]
    assert record["set_name"] == "reviews of school-north" and record["set_hash"] == review_set["hash"]
    assert record["source_kind"] == "reviews" and record["reviewers"] == 2
    assert record["n_flawed"] == 12 and record["n_sound"] == 40
    # the two audited acceptances the teacher judged flawed still pass the panel: false accepts
    assert record["false_accept"]["count"] == 2 and record["specificity"]["count"] == 40
    after = await submit(service, keys["app"], sound(31))
    warrant = after["warrant"]
    assert after["status"] == "accepted" and warrant["record_id"] == record["id"]
    assert warrant["set"] == "reviews of school-north"
    assert warrant["source"] == {"kind": "reviews", "name": "reviews of school-north", "reviewers": 2}
    # the judges against the teachers
    agreement = (await service.client.get("/v1/reviews/agreement", headers=auth(keys["teacher"]))).json()
    assert agreement["decided"] == 40 and agreement["audit"]["accepted"]["count"] == 2
    assert agreement["audit"]["accepted"]["n"] == len(drawn)
    panels = (await service.client.get("/v1/panels", headers=auth(keys["app"]))).json()["items"]
    [panel] = [p for p in panels if p["cited"] == record["id"]]
    assert (
        panel["teachers"]["decided"] == 40
        and panel["teachers"]["judges"].keys() == agreement["judges"].keys()
    )
    # another project never sees this project's set or record
    other = await service.client.get("/v1/reviews/set", headers=service.keys.auth("read"))
    assert other.json()["items"] == [] and other.json()["name"] == "reviews of default"


async def _signed(receiver: Receiver, secret: str, expected: dict[str, int], within_s: float = 60) -> None:
    """Wait until the receiver got ``expected`` review events, and check every one verifies."""
    for _ in range(int(within_s / 0.1)):
        bodies = [json.loads(hit.body) for hit in receiver.hits]
        counts = {event: sum(b["type"] == event for b in bodies) for event in expected}
        if counts == expected:
            break
        await asyncio.sleep(0.1)
    assert counts == expected
    for hit in receiver.hits:
        verify(secret, hit.headers, hit.body)  # raises unless signed with the endpoint's secret


async def test_a_project_requiring_its_own_reviews_holds_an_acceptance_measured_elsewhere(
    service: Service,
) -> None:
    south = await project_with_keys(service, "school-south")
    keys = south["keys"]
    held = [item | {"split": "heldout"} for item in RECORDABLE]
    bench = await service.client.post(
        "/v1/judges/validate",
        json={"items": held, "judge_model": "sim", "save": True, "set_name": "district-file"},
        headers=auth(keys["validator"]),
    )
    assert bench.status_code == 200, bench.text
    record = bench.json()["record"]
    assert record["source_kind"] == "own"
    assert (await submit(service, keys["app"], sound(1)))["status"] == "accepted"
    changed = await service.client.patch(
        f"/v1/projects/{south['id']}", json={"require_warrant_source": "reviews"}, headers=auth(keys["admin"])
    )
    assert changed.status_code == 200 and changed.json()["require_warrant_source"] == "reviews"
    trace = await submit(service, keys["app"], sound(2))
    assert trace["status"] == "needs_review" and trace["grading_progress"] == "PendingManual"
    assert trace["stop_reason"] == (
        f"panel not certified: its cited validity record ({record['id']}) was measured on district-file "
        "(own, 2 flawed), not on the required source: reviews"
    )
    [item] = await queue(service, keys["teacher"])
    assert item["cause"] == trace["stop_reason"]
