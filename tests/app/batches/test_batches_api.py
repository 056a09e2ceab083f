"""/v1/datasets and /v1/batches: uploads validated by row, batch lifecycle, reports, progress stream."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse

from agents.simulator import Rule, SimulatorServer
from tests.helpers.batches import JSONL, SAMPLE, settle, start, upload, verdicts
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Keys, LiveServer, Service, assert_problem

THINK_LAYOUT = (
    "ID,question,Figure,LaTeX question,solution,mathConcept1,mathConcept2,mathConcept3,"
    "Difficulty,Grade,Resource\n"
    '1,"A tank fills in 3 hours with one pump. How long with 3 pumps?",,,"3 × 3 = 9 hours.",'
    "rates,,,easy,6,own\n"
    '2,"Ann has 4 bags of 6 apples. How many apples?",,,"4 + 6 = 10 apples.",multiplication,,,easy,3,own\n'
)
CSV = {"Content-Type": "text/csv"}


async def test_upload_registers_rows_and_lists_duplicates(service: Service) -> None:
    text = SAMPLE.read_text().splitlines()
    response = await upload(service, "\n".join([*text, text[0]]).encode(), **JSONL)
    assert response.status_code == 201, response.text
    dataset = response.json()
    assert dataset["n_problems"] == 12 and dataset["format"] == "jsonl"
    assert dataset["duplicates"] == [{"line": 13, "message": "same problem as line 1"}]
    got = await service.client.get(response.headers["location"], headers=service.keys.auth("read"))
    assert got.json()["id"] == dataset["id"] and got.json()["duplicates"] == dataset["duplicates"]
    listed = (await service.client.get("/v1/datasets", headers=service.keys.auth("read"))).json()
    assert [d["id"] for d in listed["items"]] == [dataset["id"]]


async def test_think_layout_is_detected_from_csv(service: Service) -> None:
    response = await upload(
        service, THINK_LAYOUT.encode(), name="bad_questions", **{"Content-Type": "text/csv"}
    )
    assert response.status_code == 201, response.text
    assert response.json()["format"] == "think-csv" and response.json()["n_problems"] == 2


async def test_bad_rows_are_refused_by_line_and_nothing_is_stored(service: Service) -> None:
    good = '{"question": "A bus seats 40. How many buses for 130 pupils?", "solution": "130 / 40 = 4 buses."}'
    rows = [*SAMPLE.read_text().splitlines()[:3], '{"question": ""}', "not json", good]
    body = assert_problem(await upload(service, "\n".join(rows).encode(), **JSONL), 422)
    assert body["error_count"] == 2
    assert [e["line"] for e in body["row_errors"]] == [4, 5]
    listed = (await service.client.get("/v1/datasets", headers=service.keys.auth("read"))).json()
    assert listed["items"] == []


def rows_text() -> str:
    return (
        '{"question": "A bus seats 40. How many buses for 130 pupils?", "solution": "130 / 40 = 3.25 buses."}'
    )


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        (b"\xff\xfe not utf-8", 422, "not UTF-8"),
        (b"", 422, "no problems"),
        (b"x" * (10 * 1024 * 1024 + 1), 413, "larger than"),
    ],
)
async def test_unreadable_files(service: Service, body: bytes, status: int, fragment: str) -> None:
    problem = assert_problem(await upload(service, body, **JSONL), status)
    assert fragment in str(problem["detail"])


async def test_a_batch_runs_to_completion_and_reports_in_every_format(service: Service) -> None:
    batch = await start(service, models=["sim", "rubric"], control_arm=True)
    assert batch["progress"]["total"] == 12 * 2 * 2
    done = await settle(service, batch["id"])
    assert done["progress"]["status"] == "completed"
    assert verdicts(done["progress"]["items"]) == {"verdict": 48}
    assert done["progress"]["input_tokens"] > 0 and done["finished_at"]
    auth = service.keys.auth("read")
    path = f"/v1/batches/{batch['id']}/report"
    report = (await service.client.get(path, headers=auth)).json()
    assert {(r["model"], r["arm"]) for r in report["rows"]} == {
        ("rubric", "control"),
        ("rubric", "loop"),
        ("sim", "control"),
        ("sim", "loop"),
    }
    assert report["agreement"]["loop"]["versions"] >= 12 and report["outcomes"]["total"] == 48
    assert {c["kind"] for c in report["comparisons"]} == {"loop_vs_control", "models"}
    markdown = await service.client.get(path, params={"format": "md"}, headers=auth)
    assert (
        markdown.headers["content-type"].startswith("text/markdown")
        and "| sim | loop | 12 |" in markdown.text
    )
    csv_text = (await service.client.get(path, params={"format": "csv"}, headers=auth)).text
    assert len(csv_text.splitlines()) == 5
    page = await service.client.get(path, params={"format": "html"}, headers=auth)
    assert page.headers["content-type"].startswith("text/html")
    figures = re.findall(r'data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page.text)
    assert len(figures) >= 5 and all(base64.b64decode(f).startswith(b"<?xml") for f in figures)
    assert_problem(await service.client.get(path, params={"format": "pdf"}, headers=auth), 422)


async def test_items_list_outcomes_and_causes_page_by_page(
    service: Service, simulator_server: SimulatorServer
) -> None:
    # problem 1 fails its judges, and the model under test is down; three more (fp-02, fp-08,
    # fp-11) pass the judges but state a wrong computation, so the verifier's gate asks for a
    # revision too: 4 problems × 2 repeats end in error
    choir = "A choir of 30 singers"
    rules = [Rule(role="^Judge", contains=choir, score=40), Rule(role="^Reviser", status=503)]
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"rules": rules}))
    batch = await start(service, repeats=2)
    done = await settle(service, batch["id"])
    assert verdicts(done["progress"]["items"]) == {"verdict": 16, "error": 8}
    path, auth = f"/v1/batches/{batch['id']}/items", service.keys.auth("read")
    seen, cursor = [], None
    while True:  # keyset pages of 5 until the last one
        page = (
            await service.client.get(
                path, params={"limit": 5} | ({"cursor": cursor} if cursor else {}), headers=auth
            )
        ).json()
        seen += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 24 and len({i["id"] for i in seen}) == 24
    errors = (await service.client.get(path, params={"outcome": "error"}, headers=auth)).json()["items"]
    assert len(errors) == 8 and all(i["status"] == "error" and i["rounds"] == 1 for i in errors)
    failure = errors[0]["failure"]
    assert (failure["model"], failure["status"], failure["kind"]) == ("sim", 503, "endpoint")
    assert "HTTP 503" in errors[0]["error"] and "no usable revision" in errors[0]["stop_reason"]
    # A failure is never a score: the judged round's Q is not the item's final quality (null, not 0).
    assert all(i["final_quality"] is None for i in errors)
    trace = (await service.client.get(f"/v1/runs/{errors[0]['run_id']}", headers=auth)).json()
    assert trace["status"] == "error" and trace["metrics"] is None and trace["rounds_to_pass"] is None
    accepted = (await service.client.get(path, params={"status": "accepted"}, headers=auth)).json()["items"]
    assert {(i["status"], i["outcome"]) for i in accepted} == {("accepted", "accepted")}
    assert len(accepted) == 16
    # An item's status is its run's: the old words (done, failed, pending) are no status any more.
    assert_problem(await service.client.get(path, params={"status": "done"}, headers=auth), 422)
    assert_problem(await service.client.get(path, params={"cursor": "x1"}, headers=auth), 400)
    assert_problem(await service.client.get(path, params={"outcome": "won"}, headers=auth), 422)
    assert_problem(await service.client.get("/v1/batches/nope/items", headers=auth), 404)
    report = (await service.client.get(f"/v1/batches/{batch['id']}/report", headers=auth)).json()
    (row,) = report["rows"]
    assert row["items"]["error"] == 8 and row["scored_items"] == 16 and row["problems"] == 8
    assert row["errors"][0]["cause"].endswith("HTTP 503 InternalServerError")
    assert report["repeats"]["identical"] is True  # temperature 0 and the cache: counted once


async def test_every_finished_item_is_a_run_with_its_whole_trace(service: Service) -> None:
    batch = await start(service, control_arm=True)
    await settle(service, batch["id"])
    auth = service.keys.auth("read")
    items = (await service.client.get(f"/v1/batches/{batch['id']}/items", headers=auth)).json()["items"]
    assert len(items) == 24 and len({i["run_id"] for i in items}) == 24
    for item in (next(i for i in items if i["arm"] == arm) for arm in ("loop", "control")):
        trace = (await service.client.get(f"/v1/runs/{item['run_id']}", headers=auth)).json()
        assert (trace["batch_id"], trace["arm"], trace["model"]) == (batch["id"], item["arm"], "sim")
        assert trace["status"] == item["outcome"] and len(trace["rounds"]) == item["rounds"]
        assert all(len(r["verdicts"]) == 7 and r["verdicts"][0]["rationale"] for r in trace["rounds"])
        async with aconnect_sse(
            service.client, "GET", f"/v1/runs/{item['run_id']}/events", headers=auth
        ) as source:
            kinds = [event.event async for event in source.aiter_sse()]
        assert kinds[0] == "run.started" and kinds[-1] == "run.finished"
        assert kinds.count("judge.verdict") == 7 * item["rounds"]
        if item["arm"] == "control":  # one blind revision (round 0), then judged once
            assert "revision.proposed" in kinds and trace["rounds"][0]["round"] == 1


async def test_an_item_is_followed_live_as_a_run_and_cancelled_only_with_its_batch(
    service: Service, simulator_server: SimulatorServer
) -> None:
    simulator_server.state.held = True  # items start and wait for their first answers
    try:
        batch = await start(service)
        path, auth = f"/v1/batches/{batch['id']}/items", service.keys.auth()
        for _ in range(1200):  # a hang guard, not a timing check
            items = (await service.client.get(path, params={"status": "running"}, headers=auth)).json()
            started = [i for i in items["items"] if i["run_id"]]
            if started:
                break
            await asyncio.sleep(0.05)
        run = (await service.client.get(f"/v1/runs/{started[0]['run_id']}", headers=auth)).json()
        assert run["status"] in ("queued", "running") and run["batch_id"] == batch["id"]
        refused = await service.client.post(f"/v1/runs/{run['id']}/cancel", headers=auth)
        assert_problem(refused, 409)
        assert "cancel the batch" in refused.json()["detail"]
    finally:
        simulator_server.state.held = False
    done = await settle(service, batch["id"])
    assert verdicts(done["progress"]["items"]) == {"verdict": 12}


async def test_budget_cap_stops_the_batch_with_a_clear_state(service: Service) -> None:
    batch = await start(service, budget_tokens=1)
    done = await settle(service, batch["id"])
    progress = done["progress"]
    assert progress["status"] == "budget_exhausted" and progress["stop_reason"].startswith("budget reached")
    assert progress["items"].get("cancelled", 0) > 0 and "queued" not in progress["items"]
    assert verdicts(progress["items"]).get("verdict", 0) + progress["items"]["cancelled"] == 12


async def test_pause_resume_cancel_and_conflicts(service: Service, simulator_server: SimulatorServer) -> None:
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"latency_s": 0.1}))
    batch = await start(service, repeats=3)
    base, auth = f"/v1/batches/{batch['id']}", service.keys.auth()
    paused = await service.client.post(f"{base}/pause", headers=auth)
    assert paused.status_code == 200 and paused.json()["progress"]["status"] == "paused"
    assert_problem(await service.client.post(f"{base}/pause", headers=auth), 409)
    resumed = await service.client.post(f"{base}/resume", headers=auth)
    assert resumed.json()["progress"]["status"] == "running"
    cancelled = await service.client.post(f"{base}/cancel", headers=auth)
    assert cancelled.json()["progress"]["status"] == "cancelled"
    done = await settle(service, batch["id"])
    items = done["progress"]["items"]
    assert (
        set(verdicts(items)) <= {"verdict", "cancelled"}
        and sum(items.values()) == 36
        and items["cancelled"] > 0
    )
    assert_problem(await service.client.post(f"{base}/resume", headers=auth), 409)
    assert_problem(await service.client.post(f"{base}/retry-failed", headers=auth), 409)
    assert_problem(await service.client.post("/v1/batches/nope/cancel", headers=auth), 404)


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"models": ["gpt-9"]}, "unknown model 'gpt-9'"),
        ({"dataset_id": "missing"}, "no dataset missing"),
        ({"models": []}, "does not match the schema"),
        ({"max_rounds": 11}, "does not match the schema"),
        ({"surprise": True}, "does not match the schema"),
    ],
)
async def test_bad_batch_requests(service: Service, fields: dict[str, Any], fragment: str) -> None:
    dataset = (await upload(service, SAMPLE.read_bytes(), **JSONL)).json()
    body = {"dataset_id": dataset["id"], "models": ["sim"]} | fields
    problem = assert_problem(
        await service.client.post("/v1/batches", json=body, headers=service.keys.auth()), 422
    )
    assert fragment in str(problem["detail"])
    listed = (await service.client.get("/v1/batches", headers=service.keys.auth("read"))).json()
    assert listed["items"] == []


async def test_scopes(service: Service) -> None:
    read, write = service.keys.auth("read"), service.keys.auth("write")
    assert_problem(await upload(service, b"{}", **(read | JSONL)), 403)
    assert_problem(await service.client.post("/v1/batches", json={}, headers=read), 403)
    assert_problem(await service.client.get("/v1/batches", headers=write), 403)
    assert_problem(await service.client.get("/v1/datasets"), 401)


async def test_progress_stream_counts_up_to_the_end(live: tuple[LiveServer, Keys]) -> None:
    server, keys = live
    async with httpx.AsyncClient(base_url=server.url, timeout=60, headers=keys.auth()) as client:
        dataset = (await client.post("/v1/datasets?name=s.jsonl", content=SAMPLE.read_bytes())).json()
        body = {"dataset_id": dataset["id"], "models": ["sim"], "judge_model": "sim", "repeats": 2}
        batch = (await client.post("/v1/batches", json=body)).json()
        events = []
        async with aconnect_sse(client, "GET", f"/v1/batches/{batch['id']}/events") as source:
            async for sse in source.aiter_sse():
                if sse.data:
                    events.append((sse.event, json.loads(sse.data)))
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "batch.finished" and set(kinds[:-1]) <= {"batch.progress"}
    finished = [data["finished"] for _, data in events]
    assert finished == sorted(finished) and finished[-1] == 24
    assert events[-1][1]["status"] == "completed" and verdicts(events[-1][1]["items"]) == {"verdict": 24}


async def test_a_batch_over_the_item_limit_is_refused(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.batches.endpoints.MAX_BATCH_ITEMS", 20)
    dataset = (await upload(service, SAMPLE.read_bytes(), **JSONL)).json()
    body = {"dataset_id": dataset["id"], "models": ["sim", "rubric"]}  # 24 items
    response = await service.client.post("/v1/batches", json=body, headers=service.keys.auth())
    assert "24 items; the limit is 20" in str(assert_problem(response, 422)["detail"])


async def test_batches_and_datasets_are_filtered_by_status_and_time_and_still_page(service: Service) -> None:
    from datetime import UTC, datetime, timedelta

    read = service.keys.auth("read")
    one_row = b'{"question": "What is 2 + 2?"}\n'
    dataset_ids = [(await upload(service, one_row, name=f"set{n}.jsonl")).json()["id"] for n in range(3)]
    batches = [
        await service.client.post(
            "/v1/batches", json={"dataset_id": d, "models": ["sim"]}, headers=service.keys.auth()
        )
        for d in dataset_ids
    ]
    batch_ids = [b.json()["id"] for b in batches]
    for batch_id in batch_ids:
        await settle(service, batch_id)

    async def listed(collection: str, **params: str) -> list[str]:
        seen, cursor = [], None
        while True:  # one item a page: the filters hold across the keyset pages
            page_params = params | {"limit": "1"} | ({"cursor": cursor} if cursor else {})
            answer = await service.client.get(f"/v1/{collection}", params=page_params, headers=read)
            assert answer.status_code == 200, answer.text
            seen += [item["id"] for item in answer.json()["items"]]
            if (cursor := answer.json()["next_cursor"]) is None:
                return seen

    now = datetime.now(UTC)
    hour_ago, in_an_hour = (now - timedelta(hours=1)).isoformat(), (now + timedelta(hours=1)).isoformat()
    for collection, ids in (("batches", batch_ids), ("datasets", dataset_ids)):
        assert await listed(collection, created_after=hour_ago) == list(reversed(ids))
        assert await listed(collection, created_after=in_an_hour) == []
        assert await listed(collection, created_before=hour_ago) == []
        assert await listed(collection, created_after=hour_ago, created_before=in_an_hour) == list(
            reversed(ids)
        )
        for bad in (
            {"created_after": "2026-01-01T00:00:00"},  # no timezone
            {"created_before": "9999-12-31T23:59:59-05:00"},
        ):
            assert_problem(await service.client.get(f"/v1/{collection}", params=bad, headers=read), 422)
    assert await listed("batches", status="completed") == list(reversed(batch_ids))
    assert await listed("batches", status="paused") == []
    assert_problem(await service.client.get("/v1/batches", params={"status": "done"}, headers=read), 422)


async def test_a_batch_that_ends_during_a_read_is_shown_ended_or_running_throughout(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch ends between the request's own read of it and the read of its progress: the
    response shows one state, so "completed" never stands beside a null ``finished_at``."""
    from app.batches import repository as repo
    from app.batches.service import BatchService
    from app.db import short_session
    from app.models import BATCH_ACTIVE, utcnow

    batch = await start(service, models=["rubric"])
    original = BatchService.snapshot

    async def ending(self: BatchService, batch_id: str) -> Any:
        async with short_session(self.sessions) as session:
            await repo.transition(session, batch_id, BATCH_ACTIVE, status="completed", finished_at=utcnow())
        return await original(self, batch_id)

    monkeypatch.setattr(BatchService, "snapshot", ending)
    shown = (await service.client.get(f"/v1/batches/{batch['id']}", headers=service.keys.auth("read"))).json()
    assert shown["progress"]["status"] == "completed" and shown["finished_at"]
    monkeypatch.undo()
    await settle(service, batch["id"])  # the items in flight finish before the app stops


async def test_runs_are_filtered_apart_into_batch_items_and_runs_of_their_own(service: Service) -> None:
    """GET /v1/runs?source=batch|api (and ?batch=ID) keeps batch items' runs apart from runs
    submitted on their own; a value it does not know is a 422 problem."""
    batch = await start(service)
    await settle(service, batch["id"])
    own = await service.client.post(
        "/v1/runs?wait=true", json={"problem": PROBLEM}, headers=service.keys.auth()
    )
    assert own.status_code in (200, 201), own.text
    read = service.keys.auth("read")

    async def listed(**params: str) -> list[dict[str, Any]]:
        answer = await service.client.get("/v1/runs", params={"limit": 100, **params}, headers=read)
        assert answer.status_code == 200, answer.text
        return list(answer.json()["items"])

    everything = await listed()
    items = await listed(source="batch")
    alone = await listed(source="api")
    assert items and all(r["batch_id"] == batch["id"] for r in items)
    assert [r["id"] for r in alone] == [own.json()["id"]]
    assert len(items) + len(alone) == len(everything)
    assert [r["id"] for r in await listed(batch=batch["id"])] == [r["id"] for r in items]
    assert await listed(source="api", batch=batch["id"]) == []
    for bad in ({"source": "both"}, {"batch": "no such/batch"}):
        assert_problem(await service.client.get("/v1/runs", params=bad, headers=read), 422)


async def test_each_item_names_its_problem_by_the_dataset_s_own_id(service: Service) -> None:
    batch = await start(service)
    await settle(service, batch["id"])
    page = await service.client.get(
        f"/v1/batches/{batch['id']}/items", params={"limit": 500}, headers=service.keys.auth("read")
    )
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    items = page.json()["items"]
    assert {i["dataset_item_id"] for i in items} == {row["id"] for row in rows}
