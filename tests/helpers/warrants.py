"""Warrants: records saved through the validate route, runs that need one, and the held-out sets they rest
on."""

from __future__ import annotations

from typing import Any

from sqlmodel import select

from app.db import create_engine, session_factory, short_session
from app.models import ValidityRecord
from app.validity.service import builtin_set
from tests.helpers.service import Service
from tests.helpers.validity import RECORDABLE

SIM = {"model": "sim", "judge_model": "sim", "max_rounds": 1}

# a sound problem: only the judges decide it (the verifier's gate finds nothing to refuse)
SOUND = {
    "question": "Tom has 3 bags with 4 apples in each bag. How many apples does Tom have?",
    "solution": "3 × 4 = 12, so Tom has 12 apples.",
}

# `thinkloop refine` on the sound problem with the simulator as judge (the command a warrant gates)
REFINE = ["refine", "--question", SOUND["question"], "--solution", SOUND["solution"], "--judge-model", "sim"]

# Held-out problems of the shipped set: 22 flawed ones (each with its corrected version, a sound
# one), and one flawed problem with 19 sound controls (20 sound versions, as the larger bench).
HELDOUT = [i.model_dump(mode="json", exclude_none=True) for i in builtin_set() if i.split == "heldout"]
TWENTY_TWO = [i for i in HELDOUT if i["kind"] == "flawed"][:22]
ONE = TWENTY_TWO[:1] + [i for i in HELDOUT if i["kind"] == "control"][:19]

# a warrant rests on held-out problems only
HELD = [item | {"split": "heldout"} for item in RECORDABLE]


async def validate(service: Service, key: str = "validator", **fields: Any) -> dict[str, Any]:
    body = {"items": HELD, "judge_model": "sim", "save": True} | fields
    response = await service.client.post("/v1/judges/validate", json=body, headers=service.keys.auth(key))
    assert response.status_code == 200, response.text
    report: dict[str, Any] = response.json()
    return report


async def run(service: Service, key: str = "both", **extra: Any) -> dict[str, Any]:
    body = {"problem": SOUND, "options": SIM} | extra
    response = await service.client.post(
        "/v1/runs", json=body, params={"wait": "true"}, headers=service.keys.auth(key)
    )
    assert response.status_code == 200, response.text
    trace: dict[str, Any] = response.json()
    return trace


async def stored_records(database_url: str) -> list[ValidityRecord]:
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            return list((await session.execute(select(ValidityRecord))).scalars().all())
    finally:
        await engine.dispose()
