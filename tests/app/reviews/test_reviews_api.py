"""The review queue over HTTP: which runs enter it, what a teacher sees and decides, and what bad
input gets. (tests/app/reviews/test_review_loop.py drives the whole loop on PostgreSQL.)"""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import col, select

from app.models import AuditEvent, Project, WebhookDelivery
from app.reviews.queue import audit_draw
from tests.helpers.reviewing import auth, corrected, decide, make_key, queue, sound, submit, unread
from tests.helpers.service import Service, assert_problem

HOOK = "http://127.0.0.1:9/hook"  # a receiver nobody listens on: deliveries are stored before any attempt
FLAWED: dict[str, Any] = {
    "decision": "flawed",
    "flaws": [{"type": "missing_data", "evidence": "Lena's count of shells is never given"}],
}


async def stored(service: Service, table: Any, *where: Any) -> list[Any]:
    async with service.app.state.sessions() as session:
        return list((await session.execute(select(table).where(*where))).scalars().all())


@pytest.fixture
async def teacher(service: Service, database_url: str) -> str:
    """A review key of the default project (the service's keys' project)."""
    secret, _ = await make_key(database_url, "ms-okafor", ["review"])
    return secret


async def test_a_needs_review_run_enters_the_queue_with_its_cause_and_is_pending_manual(
    service: Service, teacher: str
) -> None:
    problem = unread(1) | {"metadata": {"pupil": "P-17"}}
    trace = await submit(service, service.keys.both, problem, webhook_url=HOOK)
    assert trace["status"] == "needs_review" and trace["grading_progress"] == "PendingManual"
    [item] = await queue(service, teacher)
    assert item["run_id"] == trace["id"] and item["reason"] == "needs_review" and item["status"] == "pending"
    assert item["cause"] == trace["stop_reason"] and item["metadata"] == {"pupil": "P-17"}
    assert item["round"] == 1 and item["question"] == unread(1)["question"]
    detail = (await service.client.get(f"/v1/reviews/{item['id']}", headers=auth(teacher))).json()
    assert {v["judge"] for v in detail["verdicts"]} >= {"remember", "apply", "holistic"}
    assert all(v["rationale"] for v in detail["verdicts"])
    assert detail["history"] == [] and detail["stop_reason"] == trace["stop_reason"]
    events = await stored(service, WebhookDelivery, col(WebhookDelivery.run_id) == trace["id"])
    by_event = {row.event: row.payload for row in events}
    assert by_event["review.requested"]["review_id"] == item["id"]
    assert by_event["review.requested"]["grading_progress"] == "PendingManual"
    assert by_event["run.finished"]["grading_progress"] == "PendingManual"


async def test_an_accepted_run_is_not_queued_unless_drawn_for_audit(
    service: Service, teacher: str, database_url: str
) -> None:
    trace = await submit(service, service.keys.both, sound(1))
    assert trace["status"] == "accepted" and trace["grading_progress"] == "FullyGraded"
    assert await queue(service, teacher) == []
    await make_key(database_url, "auditor", ["review"], audit_rate=1.0)  # sets the default project's rate
    audited = await submit(service, service.keys.both, sound(2))
    assert audited["status"] == "accepted" and audited["grading_progress"] == "PendingManual"
    [item] = await queue(service, teacher)
    assert item["run_id"] == audited["id"] and item["reason"] == "audit" and item["cause"] == "audit sample"
    [project] = await stored(service, Project, col(Project.id) == "default")
    # anyone with the seed redoes the draw
    assert (
        item["draw"]["value"] == audit_draw(project.audit_seed, audited["id"]) and item["draw"]["rate"] == 1.0
    )


def test_the_audit_draw_is_uniform_and_reproducible() -> None:
    draws = [audit_draw("seed", f"run-{n}") for n in range(4000)]
    assert draws == [audit_draw("seed", f"run-{n}") for n in range(4000)]
    assert all(0 <= d < 1 for d in draws)
    assert 0.45 < sum(d < 0.5 for d in draws) / len(draws) < 0.55  # 4000 draws: ±0.05 is > 6 sd
    assert audit_draw("other seed", "run-1") != audit_draw("seed", "run-1")


async def test_a_decision_is_recorded_audited_announced_and_ends_manual_grading(
    service: Service, teacher: str
) -> None:
    trace = await submit(service, service.keys.both, unread(2), webhook_url=HOOK)
    [item] = await queue(service, teacher)
    body = FLAWED | {"corrected": corrected(2), "note": "give Lena's count"}
    decided = await decide(service, teacher, item["id"], body)
    assert decided["decision"] == "flawed" and decided["reviewer"] == "ms-okafor"
    assert decided["corrected"] == corrected(2) and decided["replaces"] is None
    after = (await service.client.get(f"/v1/runs/{trace['id']}", headers=service.keys.auth("read"))).json()
    assert after["grading_progress"] == "FullyGraded"
    assert await queue(service, teacher, status="pending") == []
    [logged] = await stored(service, AuditEvent, col(AuditEvent.action) == "decided")
    assert logged.target_id == item["id"] and logged.detail == {
        "decision": "flawed",
        "flaws": ["missing_data"],
        "replaces": None,
    }
    events = await stored(service, WebhookDelivery, col(WebhookDelivery.event) == "review.decided")
    assert events and events[0].payload["decision_id"] == decided["id"]
    assert events[0].payload["grading_progress"] == "FullyGraded"


async def test_a_later_decision_replaces_an_earlier_one_and_the_history_is_kept(
    service: Service, teacher: str
) -> None:
    await submit(service, service.keys.both, unread(3))
    [item] = await queue(service, teacher)
    first = await decide(service, teacher, item["id"], {"decision": "sound"})
    again = await service.client.post(
        f"/v1/reviews/{item['id']}/decision", json=FLAWED, headers=auth(teacher)
    )
    body = assert_problem(again, 409)
    assert body["current"] == {"status": "decided", "decision": "sound", "decision_id": first["id"]}
    second = await decide(
        service, teacher, item["id"], FLAWED | {"replaces": first["id"], "reviewer": "mr-ito"}
    )
    assert second["replaces"] == first["id"] and second["reviewer"] == "mr-ito"
    detail = (await service.client.get(f"/v1/reviews/{item['id']}", headers=auth(teacher))).json()
    assert [d["id"] for d in detail["history"]] == [first["id"], second["id"]]
    assert detail["decision"]["id"] == second["id"] and detail["status"] == "decided"
    stale = await service.client.post(
        f"/v1/reviews/{item['id']}/decision", json=FLAWED | {"replaces": first["id"]}, headers=auth(teacher)
    )
    assert assert_problem(stale, 409)["current"]["decision_id"] == second["id"]


async def test_the_same_idempotency_key_gets_the_first_decision(service: Service, teacher: str) -> None:
    await submit(service, service.keys.both, unread(4))
    [item] = await queue(service, teacher)
    url, headers = f"/v1/reviews/{item['id']}/decision", auth(teacher) | {"Idempotency-Key": "k-1"}
    first = await service.client.post(url, json={"decision": "sound"}, headers=headers)
    again = await service.client.post(url, json={"decision": "sound"}, headers=headers)
    assert first.status_code == 201 and again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true" and again.json()["id"] == first.json()["id"]
    other = await service.client.post(url, json=FLAWED, headers=headers)
    assert_problem(other, 409)
    detail = (await service.client.get(f"/v1/reviews/{item['id']}", headers=auth(teacher))).json()
    assert len(detail["history"]) == 1


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (
            {"decision": "flawed", "flaws": [{"type": "typo", "evidence": "x"}]},
            "the valid ones are false_proportionality",
        ),
        ({"decision": "flawed"}, "at least one flaw"),
        ({"decision": "sound", "flaws": FLAWED["flaws"]}, "names no flaws"),
        ({"decision": "sound", "corrected": {"question": "   ", "solution": "x"}}, "question"),
        ({"decision": "sound", "corrected": {"question": "x" * 20001, "solution": "x"}}, "question"),
        ({"decision": "maybe"}, "decision"),
    ],
)
async def test_bad_decisions_are_422(
    service: Service, teacher: str, body: dict[str, Any], fragment: str
) -> None:
    await submit(service, service.keys.both, unread(5))
    [item] = await queue(service, teacher)
    response = await service.client.post(
        f"/v1/reviews/{item['id']}/decision", json=body, headers=auth(teacher)
    )
    problem = assert_problem(response, 422)
    assert fragment in str(problem)
    assert (await queue(service, teacher))[0]["status"] == "pending"  # nothing stored


async def test_only_a_review_key_of_the_project_reads_and_decides_its_queue(
    service: Service, teacher: str, database_url: str
) -> None:
    await submit(service, service.keys.both, unread(6))
    [item] = await queue(service, teacher)
    url = f"/v1/reviews/{item['id']}/decision"
    for key in ("both", "admin", "validator"):  # no review scope: 403, whatever else it holds
        assert_problem(
            await service.client.post(url, json={"decision": "sound"}, headers=service.keys.auth(key)), 403
        )
        assert_problem(await service.client.get("/v1/reviews", headers=service.keys.auth(key)), 403)
    elsewhere, _ = await make_key(database_url, "other-teacher", ["review"], project="school-south")
    assert_problem(await service.client.post(url, json={"decision": "sound"}, headers=auth(elsewhere)), 404)
    assert_problem(await service.client.get(f"/v1/reviews/{item['id']}", headers=auth(elsewhere)), 404)
    assert await queue(service, elsewhere) == []
    # a review key reads and decides the queue, and nothing else
    assert_problem(await service.client.get("/v1/runs", headers=auth(teacher)), 403)
    assert_problem(
        await service.client.post("/v1/runs", json={"problem": sound(1)}, headers=auth(teacher)), 403
    )


async def test_a_review_can_be_requested_once_for_an_ended_run(service: Service, teacher: str) -> None:
    trace = await submit(service, service.keys.both, sound(3))
    url = f"/v1/runs/{trace['id']}/review-requests"
    made = await service.client.post(url, json={"note": "the pupil disputes it"}, headers=service.keys.auth())
    assert made.status_code == 201, made.text
    assert made.json()["reason"] == "requested" and made.json()["cause"] == "the pupil disputes it"
    assert made.json()["grading_progress"] == "PendingManual"
    assert_problem(await service.client.post(url, headers=service.keys.auth()), 409)
    assert_problem(await service.client.post(url, headers=service.keys.auth("other")), 404)
    assert_problem(await service.client.post(url, headers=service.keys.auth("read")), 403)
    await decide(service, teacher, made.json()["id"], {"decision": "sound"})
    again = await service.client.post(url, headers=auth(teacher))  # decided: a teacher may ask again
    assert again.status_code == 201


async def test_the_review_set_is_the_decisions_as_labels_and_erasure_changes_its_hash(
    service: Service, teacher: str
) -> None:
    runs = [await submit(service, service.keys.both, unread(n)) for n in (7, 8)]
    items = {item["run_id"]: item for item in await queue(service, teacher)}
    await decide(service, teacher, items[runs[0]["id"]]["id"], FLAWED | {"corrected": corrected(7)})
    await decide(
        service, teacher, items[runs[1]["id"]]["id"], {"decision": "sound", "corrected": corrected(8)}
    )
    found = (await service.client.get("/v1/reviews/set", headers=service.keys.auth("read"))).json()
    assert found["name"] == "reviews of default" and found["flawed"] == 1 and found["sound"] == 3
    assert found["reviewers"] == 1 and found["reviewer_names"] == ["ms-okafor"]
    first, control, edited = found["items"]
    assert first["kind"] == "flawed" and first["split"] == "heldout" and first["corrected"] == corrected(7)
    assert first["flaws"] == [FLAWED["flaws"][0] | {"levels": ["understand", "evaluate"]}]
    assert (
        control["kind"] == "control"
        and edited["kind"] == "control"
        and edited["question"] == corrected(8)["question"]
    )
    from agents.labelled.canonical import canonical_hash

    assert found["hash"] == canonical_hash(found["items"])  # anyone re-hashes the set
    deleted = await service.client.delete(f"/v1/runs/{runs[1]['id']}", headers=service.keys.auth())
    assert deleted.status_code == 204
    after = (await service.client.get("/v1/reviews/set", headers=auth(teacher))).json()
    assert after["hash"] != found["hash"] and [i["kind"] for i in after["items"]] == ["flawed"]
    assert [item["run_id"] for item in await queue(service, teacher)] == [runs[0]["id"]]


async def test_the_judges_agreement_with_the_teachers(
    service: Service, teacher: str, database_url: str
) -> None:
    await make_key(database_url, "auditor", ["review"], audit_rate=1.0)
    for n in range(4):
        await submit(service, service.keys.both, sound(n))
        await submit(service, service.keys.both, unread(n))
    for item in await queue(service, teacher):
        body = {"decision": "sound"} if item["reason"] == "audit" else FLAWED
        await decide(service, teacher, item["id"], body)
    found = (await service.client.get("/v1/reviews/agreement", headers=auth(teacher))).json()
    assert found["decided"] == 8 and found["reviewers"] == 1
    # the simulator's judges pass everything: no agreement beyond chance with the teachers' mix
    assert found["judges"]["apply"] == {"n": 8, "kappa": 0.0, "low": 0.0, "high": 0.0}
    # the held items were not accepted, the audited ones were: no false accept, every sound passed
    assert found["false_accept"]["count"] == 0 and found["false_accept"]["n"] == 4
    assert found["specificity"]["count"] == 4 and found["specificity"]["n"] == 4
    assert found["audit"]["accepted"]["text"].startswith(
        "accepted runs that teachers judged flawed: 0 of 4 ("
    )


def test_kappa_carries_a_bootstrap_interval_and_its_n() -> None:
    from app.reviews.agreement import kappa_interval

    perfect = kappa_interval([(True, True), (False, False)] * 10)
    assert perfect == {"n": 20, "kappa": 1.0, "low": 1.0, "high": 1.0}
    mixed = [(True, True)] * 12 + [(False, False)] * 6 + [(True, False)] * 3 + [(False, True)] * 2
    found = kappa_interval(mixed)
    assert found["n"] == 23 and found["low"] < found["kappa"] < found["high"]
    assert found == kappa_interval(mixed)  # seeded: the same report every time
    assert kappa_interval([]) == {"n": 0, "kappa": None, "low": None, "high": None}


async def test_a_batch_report_shows_how_its_judges_agree_with_the_teachers(
    service: Service, teacher: str
) -> None:
    from tests.helpers.batches import settle, start

    batch = await start(service)
    await settle(service, batch["id"])
    assert await queue(service, teacher) == []  # a batch's runs enter only on request
    path = f"/v1/batches/{batch['id']}/report"
    before = (await service.client.get(path, headers=service.keys.auth("read"))).json()
    assert before["teachers"] is None
    items = (
        await service.client.get(f"/v1/batches/{batch['id']}/items", headers=service.keys.auth("read"))
    ).json()["items"]
    for item, decision in zip(
        items[:3], ({"decision": "sound"}, FLAWED, {"decision": "sound"}), strict=False
    ):
        asked = await service.client.post(
            f"/v1/runs/{item['run_id']}/review-requests", headers=service.keys.auth()
        )
        assert asked.status_code == 201, asked.text
        await decide(service, teacher, asked.json()["id"], decision)
    report = (await service.client.get(path, headers=service.keys.auth("read"))).json()
    assert report["teachers"]["decided"] == 3 and set(report["teachers"]["judges"]) >= {"apply", "holistic"}
    text = (await service.client.get(path, params={"format": "md"}, headers=service.keys.auth("read"))).text
    assert (
        "## Judges against the teachers" in text and "3 of this batch's runs decided by 1 teacher(s)" in text
    )
