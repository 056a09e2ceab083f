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

from agents.models import ModelRegistry
from agents.schemas import Usage
from agents.simulator import SimulatorServer
from app.db import migrate
from app.main import create_app
from app.models import DEFAULT_PROJECT, DailyUsage, ValidityRecord
from tests.app.conftest import Service, seed_keys, service_settings
from tests.app.scripted_panels import ScriptedFactory

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
    made.scripts = dict(SCRIPTS)  # type: ignore[arg-type]
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


async def calibrated(service: Service, judge_model: str, threshold: float) -> None:
    share = {"n": 60, "count": 0, "rate": 0.0, "low": 0.0, "high": 0.06, "excluded": 0}
    async with service.app.state.sessions() as session:
        session.add(
            ValidityRecord(
                project_id=DEFAULT_PROJECT,
                panel_id=f"panel-{judge_model}",
                identity={},
                judge_model=judge_model,
                set_name="shipped",
                set_hash="0" * 64,
                split="heldout",
                n_flawed=60,
                n_sound=60,
                false_accept=share,
                specificity=share,
                detection=share,
                adversarial_gap=share,
                calibration={"score": "quality", "alpha": 0.05, "delta": 0.1, "threshold": threshold},
            )
        )
        await session.commit()


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
