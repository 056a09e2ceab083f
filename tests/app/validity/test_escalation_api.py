"""A run with a guarantee target through the API: its panel's acceptance below the calibrated
threshold escalates to the configured stronger panel, then to needs_review; the stop reason and the
run's events show each step."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlmodel import select

from agents.llm.calls import Usage
from agents.llm.models import ModelRegistry
from agents.simulator import SimulatorServer
from app.db import migrate
from app.main import create_app
from app.models import DEFAULT_PROJECT, DailyUsage, Project, ValidityRecord
from tests.helpers.calibrated import calibrated_record, store
from tests.helpers.scripted_panels import ScriptedFactory
from tests.helpers.service import Service, seed_keys, service_settings

SOUND = {
    "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
    "solution": "3 × 4 = 12, so Tom has 12 apples.",
}
MODELS = {name: {"model": f"{name}-1", "base_url": "http://127.0.0.1:9/v1"} for name in ("weak", "strong")}
# weak: every judge 90 with confidence 60 (Q 0.92); strong: 95 with confidence 80 (Q 0.96)
SCRIPTS = {"weak": lambda _: (90, 60), "strong": lambda _: (95, 80)}
# What each stronger judge's call reports spending (the run's own panel reports nothing).
STRONG_CALL = Usage(input_tokens=100, output_tokens=10, calls=1, cost_usd=0.001)


def scripted(settings: Any, registry: ModelRegistry) -> ScriptedFactory:
    made = ScriptedFactory(registry, os.environ)
    made.scripts = dict(SCRIPTS)
    made.usages = {"strong": STRONG_CALL}
    return made


@pytest.fixture
async def escalating(
    database_url: str, simulator_server: SimulatorServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Service]:
    """The API whose panels are scripted, with ``strong`` the panel to escalate to."""
    monkeypatch.setattr("app.main.panel_factory", scripted)
    await migrate(database_url)
    keys = await seed_keys(database_url)
    settings = service_settings(database_url, simulator_server, models=MODELS, escalate_to=["strong"])
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield Service(app, client, keys)


async def calibrated(service: Service, judge_model: str, threshold: float, **where: Any) -> ValidityRecord:
    """A record of ``judge_model``'s panel with its calibrated threshold (``where``: of another
    panel identity, or another project, as ``calibrated_record`` takes them)."""
    registry = service.app.state.registry
    record = calibrated_record(registry, judge_model, threshold, **where)
    async with service.app.state.sessions() as session:
        await store(session, record)
    return record


def events(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]


async def run(service: Service, options: dict[str, Any]) -> dict[str, Any]:
    body = {"problem": SOUND, "options": {"judge_model": "weak", "max_rounds": 1, **options}}
    response = await service.client.post(
        "/v1/runs", json=body, params={"wait": "true"}, headers=service.keys.auth()
    )
    assert response.status_code in (200, 202), response.text
    data: dict[str, Any] = response.json()
    return data


async def test_below_the_threshold_escalates_to_the_stronger_panel_then_to_review(
    escalating: Service,
) -> None:
    await calibrated(escalating, "weak", 0.95)
    await calibrated(escalating, "strong", 0.99)
    ran = await run(escalating, {"guarantee": {"alpha": 0.05, "delta": 0.1}})
    assert ran["status"] == "needs_review", ran
    assert ran["stop_reason"].startswith("below the guaranteed threshold")
    stream = await escalating.client.get(f"/v1/runs/{ran['id']}/events", headers=escalating.keys.auth("read"))
    cascade = [e for e in events(stream.text) if e["type"] == "round.escalated"]
    assert [(e["stage"], e["panel"], e["decision"]) for e in cascade] == [
        (0, "the run's panel", "escalated"),
        (1, "strong", "escalated"),
        (2, "a person", "needs_review"),
    ]
    assert cascade[0]["threshold"] == 0.95 and cascade[1]["quality"] > cascade[0]["quality"]
    trace = (
        await escalating.client.get(f"/v1/runs/{ran['id']}", headers=escalating.keys.auth("read"))
    ).json()
    assert [step["decision"] for step in trace["rounds"][0]["escalations"]] == [
        "escalated",
        "escalated",
        "needs_review",
    ]


async def test_without_a_target_the_panel_accepts(escalating: Service) -> None:
    await calibrated(escalating, "weak", 0.95)
    ran = await run(escalating, {})
    assert ran["status"] == "accepted", ran


async def test_the_stronger_panel_above_its_threshold_accepts(escalating: Service) -> None:
    await calibrated(escalating, "weak", 0.95)
    await calibrated(escalating, "strong", 0.95)
    ran = await run(escalating, {"guarantee": {"alpha": 0.05, "delta": 0.1}})
    assert ran["status"] == "accepted" and "stronger panel strong" in ran["stop_reason"]


async def test_the_projects_target_applies_to_its_runs(escalating: Service) -> None:
    await calibrated(escalating, "weak", 0.95)
    target = {"guarantee_alpha": 0.05, "guarantee_delta": 0.1}
    url = f"/v1/projects/{DEFAULT_PROJECT}"
    changed = await escalating.client.patch(url, json=target, headers=escalating.keys.auth("admin"))
    assert changed.status_code == 200, changed.text
    assert {key: changed.json()[key] for key in target} == target
    ran = await run(escalating, {})
    assert ran["status"] == "needs_review" and ran["stop_reason"].startswith("below the guaranteed threshold")


async def spent_today(service: Service) -> int:
    async with service.app.state.sessions() as session:
        rows = (await session.execute(select(DailyUsage))).scalars().all()
        return sum(row.input_tokens for row in rows if row.project_id == DEFAULT_PROJECT)


async def test_the_stronger_panels_calls_are_charged_to_the_run_its_ledger_and_metrics(
    escalating: Service,
) -> None:
    """Seven stronger judges' calls: on the run's usage, its project's daily ledger and /metrics."""
    await calibrated(escalating, "weak", 0.95)
    await calibrated(escalating, "strong", 0.99)
    before = await spent_today(escalating)
    ran = await run(escalating, {"guarantee": {"alpha": 0.05, "delta": 0.1}})
    assert ran["status"] == "needs_review", ran
    trace = (
        await escalating.client.get(f"/v1/runs/{ran['id']}", headers=escalating.keys.auth("read"))
    ).json()
    stage = trace["rounds"][0]["escalations"][1]
    assert stage["panel"] == "strong" and stage["usage"]["input_tokens"] == 700
    assert stage["usage"]["calls"] == 7
    unescalated = await run(escalating, {})
    plain = (
        await escalating.client.get(f"/v1/runs/{unescalated['id']}", headers=escalating.keys.auth("read"))
    ).json()
    assert trace["usage"]["input_tokens"] == plain["usage"]["input_tokens"] + 700
    assert await spent_today(escalating) - before == (
        trace["usage"]["input_tokens"] + plain["usage"]["input_tokens"]
    )
    metrics = (await escalating.client.get("/metrics", headers=escalating.keys.auth("read"))).text
    line = 'thinkloop_llm_tokens_total{direction="input",model="strong",role="escalation"} 700.0'
    assert line in metrics


@pytest.mark.parametrize(
    "other",
    [
        {"reported": "weak-2"},  # the endpoint behind the name now reports another model id
        {"policy": "think-paper"},  # another scoring policy: another panel
    ],
)
async def test_a_threshold_calibrated_for_another_panel_under_the_same_name_is_not_used(
    escalating: Service, other: dict[str, Any]
) -> None:
    """A record of ``weak`` calibrated for another panel identity gives this panel no threshold:
    its acceptance escalates (the stronger panel has none either), then goes to review."""
    await calibrated(escalating, "weak", 0.5, **other)  # Q 0.92 would clear it
    await calibrated(escalating, "strong", 0.5, **other)
    ran = await run(escalating, {"guarantee": {"alpha": 0.05, "delta": 0.1}})
    assert ran["status"] == "needs_review", ran
    assert ran["stop_reason"].startswith("below the guaranteed threshold")
    trace = (
        await escalating.client.get(f"/v1/runs/{ran['id']}", headers=escalating.keys.auth("read"))
    ).json()
    steps = trace["rounds"][0]["escalations"]
    assert [(s["panel"], s["threshold"], s["decision"]) for s in steps] == [
        ("the run's panel", None, "escalated"),
        ("strong", None, "escalated"),
        ("a person", None, "needs_review"),
    ]
    assert "calibrated threshold none" in steps[0]["reason"]


async def test_the_same_panels_record_gives_its_threshold(escalating: Service) -> None:
    """The record of this very panel (its endpoint reporting weak-1) is the one used."""
    await calibrated(escalating, "weak", 0.5, reported="weak-2")
    await calibrated(escalating, "weak", 0.9)
    ran = await run(escalating, {"guarantee": {"alpha": 0.05, "delta": 0.1}})
    assert ran["status"] == "accepted", ran


async def test_another_projects_calibration_is_never_used(escalating: Service) -> None:
    async with escalating.app.state.sessions() as session:
        session.add(Project(id="other", name="other-school"))
        await session.commit()
    await calibrated(escalating, "weak", 0.5, project_id="other")
    ran = await run(escalating, {"guarantee": {"alpha": 0.05, "delta": 0.1}})
    assert ran["status"] == "needs_review", ran


@pytest.mark.parametrize(
    "guarantee",
    [{"alpha": 0.05}, {"delta": 0.1}, {}, {"alpha": 0, "delta": 0.1}, {"alpha": 0.05, "delta": 1}],
)
async def test_a_runs_half_or_invalid_target_is_refused(
    escalating: Service, guarantee: dict[str, Any]
) -> None:
    body = {"problem": SOUND, "options": {"judge_model": "weak", "guarantee": guarantee}}
    refused = await escalating.client.post("/v1/runs", json=body, headers=escalating.keys.auth())
    assert refused.status_code == 422, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    listed = await escalating.client.get("/v1/runs", headers=escalating.keys.auth("read"))
    assert listed.json()["items"] == []


STRONG_CALLS: list[str] = []
# strong's verdicts are long (its bound on a reply): one escalation step is estimated far above a
# round of weak's, so what the run reserved for its round cannot cover it
BIG_STRONG = {**MODELS, "strong": {**MODELS["strong"], "max_tokens": {"judge": 60000}}}


def counting(settings: Any, registry: ModelRegistry) -> ScriptedFactory:
    made = scripted(settings, registry)

    def strong(problem: Any) -> tuple[int, int]:
        STRONG_CALLS.append(problem.question)
        return 95, 80

    made.scripts["strong"] = strong
    return made


@pytest.fixture
async def capped(
    database_url: str, simulator_server: SimulatorServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Service]:
    """As ``escalating``, with a project daily token cap of 1: a run's first round is admitted
    (its reservation may pass the cap by that one step), nothing after it."""
    monkeypatch.setattr("app.main.panel_factory", counting)
    STRONG_CALLS.clear()
    await migrate(database_url)
    keys = await seed_keys(database_url)
    settings = service_settings(
        database_url,
        simulator_server,
        models=BIG_STRONG,
        escalate_to=["strong"],
        project_daily_tokens=1,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield Service(app, client, keys)


async def test_an_escalation_past_the_daily_cap_is_refused_as_a_round_is(capped: Service) -> None:
    """The stronger panel's step is reserved at its own model's estimate before its calls: past the
    cap, none of its calls is made and the run stops as a round past the cap stops it."""
    await calibrated(capped, "weak", 0.95)
    await calibrated(capped, "strong", 0.9)
    ran = await run(capped, {"guarantee": {"alpha": 0.05, "delta": 0.1}})
    assert ran["status"] == "error" and ran["stop_reason"].startswith("stopped at a daily cap"), ran
    assert STRONG_CALLS == []
    async with capped.app.state.sessions() as session:
        rows = (await session.execute(select(DailyUsage))).scalars().all()
    assert [(row.reserved_tokens, row.reserved_cost_usd) for row in rows] == [(0, 0.0)]


async def test_an_escalation_under_the_cap_is_reserved_and_made(escalating: Service) -> None:
    """Without a cap reached, the same cascade runs: the reservation refuses nothing it should not."""
    await calibrated(escalating, "weak", 0.95)
    await calibrated(escalating, "strong", 0.9)
    ran = await run(escalating, {"guarantee": {"alpha": 0.05, "delta": 0.1}})
    assert ran["status"] == "accepted" and "stronger panel strong" in ran["stop_reason"], ran
