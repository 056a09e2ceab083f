"""Warrants over HTTP: a panel validated with ``save: true`` gives accepted runs a warrant naming its
record; a new prompt version is a new, unmeasured panel; a required warrant turns an uncertified
acceptance into needs_review; GET /v1/panels lists what was measured."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlmodel import select

import prompts
from agents.simulator import Rule, SimulatorServer
from app.db import create_engine, migrate, session_factory, short_session
from app.main import create_app
from app.models import ValidityRecord, WebhookDelivery
from tests.helpers.service import Service, assert_problem, seed_keys, service_settings
from tests.helpers.validity import ITEMS
from tests.helpers.warrants import HELD, run, stored_records, validate


async def test_a_validated_panel_gives_accepted_runs_a_warrant_naming_its_record(service: Service) -> None:
    before = await run(service)
    assert before["status"] == "accepted" and before["warrant"] == {"status": "none"}
    report = await validate(service, set_name="two-proportion-flaws")
    record = report["record"]
    # the simulator passes everything: both flawed problems accepted, Wilson 95 % [0.342, 1]
    assert record["false_accept"] == pytest.approx(
        {"n": 2, "count": 2, "rate": 1.0, "low": 0.3424, "high": 1.0}, abs=1e-4
    )
    assert record["n_flawed"] == 2 and record["n_sound"] == 21 and record["split"] == "heldout"
    assert record["set_name"] == "two-proportion-flaws" and len(record["set_hash"]) == 64
    assert record["specificity"]["count"] == 21 and record["specificity_low"] == record["specificity"]["low"]
    assert record["n_twins"] == 0
    after = await run(service)
    warrant = after["warrant"]
    assert after["status"] == "accepted" and warrant["status"] == "valid"
    assert warrant["record_id"] == record["id"] and warrant["panel_id"] == record["panel_id"]
    assert warrant["false_accept_upper"] == pytest.approx(record["false_accept"]["high"])
    assert warrant["false_accept"] == record["false_accept"] and warrant["set"] == "two-proportion-flaws"
    listed = await service.client.get("/v1/runs", headers=service.keys.auth("read"))
    newest = listed.json()["items"][0]
    assert newest["id"] == after["id"] and newest["warrant"]["record_id"] == record["id"]


async def test_a_new_prompt_version_is_a_new_panel_without_a_warrant(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    await validate(service)
    assert (await run(service))["warrant"]["status"] == "valid"
    original = prompts.load_prompt("judge_evaluate")
    changed = dataclasses.replace(
        original,
        text=original.text + "\nBe strict.",
        own=original.own + "\nBe strict.",
        version=f"{original.name}@0123456789ab",
    )
    real = prompts.load_prompt

    def load(name: str) -> prompts.Prompt:
        return changed if name == "judge_evaluate" else real(name)

    monkeypatch.setattr("agents.identity.load_prompt", load)
    monkeypatch.setattr("agents.judges.load_prompt", load)
    trace = await run(service)
    assert trace["status"] == "accepted" and trace["warrant"]["status"] == "none"
    panels = (await service.client.get("/v1/panels", headers=service.keys.auth("read"))).json()
    assert len(panels["items"]) == 1  # the old panel; the changed one was never measured
    assert panels["items"][0]["identity"]["prompts"]["judge_evaluate"] == original.version


async def test_a_record_warrants_only_runs_whose_endpoint_reports_the_model_it_measured(
    service: Service, simulator_server: SimulatorServer, database_url: str
) -> None:
    record = (await validate(service))["record"]  # the simulator reports the model asked for: sim-1
    (stored,) = await stored_records(database_url)
    assert stored.identity["model"] == "sim-1" and stored.identity["reported_model"] == "sim-1"
    assert stored.identity["max_tokens"] == {"judge": 1000, "solver": 500}
    assert (await run(service))["warrant"]["record_id"] == record["id"]
    # the same name, URL and configuration, but the server now serves another model
    reporting(simulator_server, "llama-3-8b-q4")
    swapped = await run(service)
    assert swapped["status"] == "accepted" and swapped["warrant"] == {"status": "none"}
    assert swapped["rounds"][0]["verdicts"][0]["reported_model"] == "llama-3-8b-q4"
    other = (await validate(service, set_name="after-the-swap"))["record"]
    assert other["panel_id"] != record["panel_id"]  # a record of the other model's panel
    assert (await run(service))["warrant"]["record_id"] == other["id"]
    reporting(simulator_server, None)
    assert (await run(service))["warrant"]["record_id"] == record["id"]  # each reported id its own


def reporting(server: SimulatorServer, model: str | None) -> None:
    """The simulator's replies report ``model`` (None: the model the request asked for)."""
    overrides = {"reported_model": model} if model else {}
    server.state.configure(server.state.config.model_copy(update={"profile_overrides": overrides}))


async def test_not_accepted_runs_carry_no_warrant(
    service: Service, simulator_server: SimulatorServer
) -> None:
    await validate(service)
    simulator_server.state.configure(
        simulator_server.state.config.model_copy(update={"rules": [Rule(role="^Judge", score=40)]})
    )
    trace = await run(service)
    assert trace["status"] == "exhausted" and trace["warrant"] is None


async def test_the_run_finished_webhook_carries_the_warrant(service: Service, database_url: str) -> None:
    record = (await validate(service))["record"]
    trace = await run(service, webhook_url="http://127.0.0.1:9/hook")
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            query = select(WebhookDelivery).where(WebhookDelivery.run_id == trace["id"])
            deliveries = (await session.execute(query)).scalars().all()
    finally:
        await engine.dispose()
    payload = next(d.payload for d in deliveries if d.event == "run.finished")
    assert payload["status"] == "accepted" and payload["warrant"]["record_id"] == record["id"]
    events = await service.client.get(f"/v1/runs/{trace['id']}/events", headers=service.keys.auth("read"))
    finished = [json.loads(line[6:]) for line in events.text.splitlines() if line.startswith("data: ")][-1]
    assert finished["warrant"]["record_id"] == record["id"]


async def test_panels_are_listed_with_their_records_newest_first_in_pages(service: Service) -> None:
    first = (await validate(service, set_name="first"))["record"]
    second = (await validate(service, set_name="second"))["record"]
    rubric = (await validate(service, judge_model="rubric", set_name="offline"))["record"]
    page = await service.client.get("/v1/panels", params={"limit": 1}, headers=service.keys.auth("read"))
    assert page.status_code == 200, page.text
    body = page.json()
    assert [p["id"] for p in body["items"]] == [rubric["panel_id"]] and body["next_cursor"]
    offline = body["items"][0]["identity"]
    assert offline["judge_model"] == "rubric" and offline["checks"].startswith("rubric@")
    assert offline["prompts"] == {} and offline["model"] is None and offline["policy"]["name"] == "default"
    rest = await service.client.get(
        "/v1/panels", params={"limit": 1, "cursor": body["next_cursor"]}, headers=service.keys.auth("read")
    )
    sim = rest.json()
    assert rest.json()["next_cursor"] is None and sim["items"][0]["id"] == first["panel_id"]
    assert [r["id"] for r in sim["items"][0]["records"]] == [second["id"], first["id"]]
    identity = sim["items"][0]["identity"]
    assert identity["model"] == "sim-1" and identity["solver"].startswith("solver@")
    assert set(identity["prompts"]) == {
        f"judge_{j}" for j in ("remember", "understand", "apply", "analyze")
    } | {
        "judge_evaluate",
        "judge_create",
        "judge_holistic",
    }
    # another project's key sees only what its own runs may cite: none of the default project's
    other = await service.client.get("/v1/panels", headers=service.keys.auth("other"))
    assert other.json()["items"] == []


@pytest.mark.parametrize(
    ("params", "status"),
    [({"limit": "0"}, 422), ({"records": "101"}, 422), ({"cursor": "garbage!"}, 400)],
)
async def test_bad_panel_queries_are_problems(service: Service, params: dict[str, str], status: int) -> None:
    assert_problem(
        await service.client.get("/v1/panels", params=params, headers=service.keys.auth("read")), status
    )


async def test_panels_need_a_read_key(service: Service) -> None:
    assert_problem(await service.client.get("/v1/panels"), 401)
    assert_problem(await service.client.get("/v1/panels", headers=service.keys.auth("write")), 403)


async def test_a_bench_with_an_errored_version_saves_no_record(
    service: Service, simulator_server: SimulatorServer, database_url: str
) -> None:
    simulator_server.state.configure(
        simulator_server.state.config.model_copy(update={"rules": [Rule(role="^Judge", status=500)]})
    )
    body = {"items": HELD, "judge_model": "sim", "save": True}
    response = await service.client.post(
        "/v1/judges/validate", json=body, headers=service.keys.auth("validator")
    )
    problem = assert_problem(response, 422)
    assert "no validity record was saved" in str(problem["detail"])
    excluded = problem["excluded"]
    assert isinstance(excluded, dict)
    assert (excluded["total"], excluded["errored"], excluded["undecided"]) == (23, 23, 0)
    assert await stored_records(database_url) == []


async def test_a_bench_without_held_out_problems_saves_no_record(service: Service, database_url: str) -> None:
    body = {"items": ITEMS, "judge_model": "sim", "save": True}  # the tune split only
    response = await service.client.post(
        "/v1/judges/validate", json=body, headers=service.keys.auth("validator")
    )
    assert "the bench judged no held-out problem" in str(assert_problem(response, 422)["detail"])
    assert await stored_records(database_url) == []


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"items": ITEMS, "save": "maybe"}, "save"),
        ({"builtin": True, "save": True, "set_name": ""}, "set_name"),
        ({"builtin": True, "save": True, "set_name": "x" * 201}, "set_name"),
    ],
)
async def test_bad_save_fields_are_422(service: Service, body: dict[str, Any], fragment: str) -> None:
    response = await service.client.post(
        "/v1/judges/validate", json=body, headers=service.keys.auth("validator")
    )
    problem = assert_problem(response, 422)
    assert fragment in json.dumps(problem["errors"])


@pytest.fixture
async def strict(database_url: str, simulator_server: SimulatorServer) -> AsyncIterator[Service]:
    """The API with THINKLOOP_REQUIRE_WARRANT=0.10."""
    await migrate(database_url)
    keys = await seed_keys(database_url)
    app = create_app(service_settings(database_url, simulator_server, require_warrant=0.10))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield Service(app, client, keys)


async def test_a_required_warrant_sends_an_uncertified_acceptance_to_review(strict: Service) -> None:
    never = await run(strict)
    assert never["status"] == "needs_review" and never["warrant"] is None
    assert never["stop_reason"] == (
        "panel not certified: this panel has never been validated (required: false accepts ≤ 10.0%, "
        "sound passed ≥ 50.0%)"
    )
    record = (await validate(strict))["record"]  # false accepts 2 of 2: bounded at 100 %, not 10 %
    above = await run(strict)
    assert above["status"] == "needs_review" and above["rounds"][0]["decision"] == "needs_review"
    assert above["stop_reason"] == (
        f"panel not certified: its cited validity record ({record['id']}) bounds false accepts at "
        "100.0% (95 %), above the required 10.0%"
    )


async def test_a_project_may_require_a_warrant_of_its_own(service: Service) -> None:
    await validate(service)
    admin = service.keys.auth("admin")
    projects = (await service.client.get("/v1/projects", headers=admin)).json()["items"]
    default = next(p for p in projects if p["name"] == "default")
    assert default["require_warrant"] is None
    changed = await service.client.patch(
        f"/v1/projects/{default['id']}", json={"require_warrant": 0.1}, headers=admin
    )
    assert changed.status_code == 200 and changed.json()["require_warrant"] == 0.1
    trace = await run(service)
    assert trace["status"] == "needs_review" and trace["stop_reason"].startswith(
        "panel not certified: its cited"
    )
    other = await run(service, key="other")  # the other project requires nothing: its acceptance stands
    assert other["status"] == "accepted" and other["warrant"] == {"status": "none"}
    for bad in (0, 1.5, -0.1, "x"):
        response = await service.client.patch(
            f"/v1/projects/{default['id']}", json={"require_warrant": bad}, headers=admin
        )
        assert_problem(response, 422)
    made = await service.client.post(
        "/v1/projects",
        json={"name": "strict-school", "require_warrant": 0.05},
        headers=service.keys.auth("operator"),
    )
    assert made.status_code == 201 and made.json()["require_warrant"] == 0.05


async def test_a_not_shipped_requirement_holds_an_acceptance_measured_on_the_shipped_set_only(
    service: Service, database_url: str
) -> None:
    """A project requiring a warrant measured elsewhere than the shipped set, on at least 2 flawed:
    its only record, of the shipped set, sends an acceptance to review with the cause; a record with
    a public benchmark's source of 2 flawed meets it; a minimum of 3 flawed does not."""
    shipped = (await validate(service))["record"]
    engine = create_engine(database_url)  # a record of the shipped set, saved before sources were kept
    try:
        async with short_session(session_factory(engine)) as session:
            row = await session.get(ValidityRecord, shipped["id"])
            assert row is not None
            row.set_name, row.source_kind, row.sources = "shipped", "shipped", None
            await session.commit()
    finally:
        await engine.dispose()
    admin = service.keys.auth("admin")
    default = next(
        p
        for p in (await service.client.get("/v1/projects", headers=admin)).json()["items"]
        if p["name"] == "default"
    )
    changed = await service.client.patch(
        f"/v1/projects/{default['id']}",
        json={"require_warrant_source": "not-shipped", "require_warrant_min_flawed": 2},
        headers=admin,
    )
    assert changed.status_code == 200 and changed.json()["require_warrant_min_flawed"] == 2
    held = await run(service)
    assert held["status"] == "needs_review" and held["stop_reason"] == (
        f"panel not certified: its cited validity record ({shipped['id']}) was measured on shipped "
        "(shipped, 2 flawed), not on the required source: not-shipped with at least 2 flawed"
    )
    umwp = {"name": "umwp", "kind": "benchmark"}
    benchmark = (await validate(service, items=[item | {"source": umwp} for item in HELD]))["record"]
    assert [(s["name"], s["kind"], s["n_flawed"]) for s in benchmark["sources"]] == [("umwp", "benchmark", 2)]
    accepted = await run(service)
    assert accepted["status"] == "accepted" and accepted["warrant"]["record_id"] == benchmark["id"]
    assert accepted["warrant"]["sources"][0]["kind"] == "benchmark"
    await service.client.patch(
        f"/v1/projects/{default['id']}", json={"require_warrant_min_flawed": 3}, headers=admin
    )
    too_few = await run(service)
    assert too_few["status"] == "needs_review" and "with at least 3 flawed" in too_few["stop_reason"]
    shown = await service.client.get(
        f"/v1/panels/records/{benchmark['id']}", headers=service.keys.auth("both")
    )
    assert shown.json()["sources"][0]["set_hash"] == benchmark["sources"][0]["set_hash"]


async def test_panels_show_the_latest_repair_figures_per_reviser(service: Service, database_url: str) -> None:
    from datetime import UTC, datetime

    from app.models import RepairRecord

    record = (await validate(service))["record"]
    (row,) = await stored_records(database_url)

    def repair(reviser: str, repaired: int, day: int) -> RepairRecord:
        share = {"n": 10, "count": repaired, "rate": repaired / 10, "low": 0.0, "high": 1.0}
        return RepairRecord(
            project_id=row.project_id,
            panel_id=record["panel_id"],
            identity=row.identity,
            judge_model="sim",
            reviser=reviser,
            set_name="shipped",
            set_hash="ab" * 32,
            split="heldout",
            max_rounds=3,
            runs=10,
            decided=10,
            repaired=share,
            accepted_but_wrong=share | {"count": 1},
            gave_up=share | {"count": 9 - repaired},
            counts={"repaired": repaired},
            measured_at=datetime(2026, 11, day, tzinfo=UTC),
        )

    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            session.add_all([repair("student", 2, 1), repair("student", 5, 2), repair("tutor", 7, 1)])
            session.add(repair("other-panel", 1, 1))
            await session.commit()
    finally:
        await engine.dispose()
    page = (await service.client.get("/v1/panels", headers=service.keys.auth("validator"))).json()
    (panel,) = [p for p in page["items"] if p["id"] == record["panel_id"]]
    shown = {r["reviser"]: (r["repaired"]["count"], r["decided"]) for r in panel["repairs"]}
    assert shown == {"other-panel": (1, 10), "student": (5, 10), "tutor": (7, 10)}  # the latest of each
    other = (await service.client.get("/v1/panels", headers=service.keys.auth("other"))).json()
    assert all(not p["repairs"] for p in other["items"])  # another project's measurements stay its own
