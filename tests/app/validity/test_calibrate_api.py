"""POST /v1/judges/calibrate: the guaranteed threshold over HTTP, as `judges calibrate` finds it, with
the fixed-sequence scan's steps and the record it saves; bad input is a problem+json 4xx."""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import select

from app.models import ValidityRecord
from tests.helpers.service import Service, assert_problem
from tests.helpers.validity import RECORDABLE

PATH = "/v1/judges/calibrate"
HELD = [item | {"split": "heldout"} for item in RECORDABLE]
TARGET = {"alpha": 0.2, "delta": 0.2}


async def post(service: Service, body: dict[str, Any], key: str = "both") -> Any:
    return await service.client.post(PATH, json=body, headers=service.keys.auth(key))


async def test_calibrate_answers_the_threshold_its_scan_and_the_saved_record(service: Service) -> None:
    body = {"items": HELD, "judge_model": "rubric", "save": True, **TARGET}
    response = await post(service, body, "validator")
    assert response.status_code == 200, response.text
    found = response.json()
    assert (found["alpha"], found["delta"], found["split"]) == (0.2, 0.2, "heldout")
    steps = found["steps"]
    assert found["tested"] == len(steps) > 0
    assert [s["threshold"] for s in steps] == sorted((s["threshold"] for s in steps), reverse=True)
    assert all(s["passed"] == (s["bound"] <= 0.2) for s in steps)
    assert all(s["passed"] for s in steps[:-1])  # fixed sequence: it stops at the first failure
    passed = [s for s in steps if s["passed"]]
    assert found["threshold"] is not None and found["threshold"] == passed[-1]["threshold"]
    assert found["guaranteed"] == passed[-1]["bound"] <= 0.2
    assert 0.0 < found["coverage"] <= 1.0 and found["sound"] == 21
    async with service.app.state.sessions() as session:
        record = await session.get(ValidityRecord, found["record_id"])
    assert record is not None and record.panel_id == found["panel_id"]
    assert record.calibration is not None and record.calibration["threshold"] == found["threshold"]


async def test_without_save_nothing_is_stored(service: Service) -> None:
    response = await post(service, {"items": HELD, "judge_model": "rubric", **TARGET})
    assert response.status_code == 200, response.text
    assert response.json()["record_id"] is None and response.json()["panel_id"] is None
    async with service.app.state.sessions() as session:
        assert (await session.execute(select(ValidityRecord))).scalars().all() == []


@pytest.mark.parametrize(
    "wrong",
    [
        {"alpha": 0},
        {"alpha": 1},
        {"delta": 1.5},
        {"delta": -0.1},
        {"alpha": "0.05"},  # strict: a string is no number
        {"split": "nope"},
        {"builtin": True},  # items and builtin: one source only
        {"items": []},
        {"judge_model": "gpt-9"},
        {"twins": True},  # a calibration judges no twins
    ],
)
async def test_bad_input_is_a_problem(service: Service, wrong: dict[str, Any]) -> None:
    body = {"items": HELD, "judge_model": "rubric", **TARGET} | wrong
    assert_problem(await post(service, body), 422)


async def test_saving_needs_the_validate_scope(service: Service) -> None:
    body = {"items": HELD, "judge_model": "rubric", "save": True, **TARGET}
    assert_problem(await post(service, body, "both"), 403)
