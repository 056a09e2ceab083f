"""POST /v1/batches?dry_run=true: the estimate of a batch, with nothing run or stored."""

from __future__ import annotations

from typing import Any

import pytest

from agents.simulator import SimulatorServer
from tests.helpers.batches import JSONL, SAMPLE, settle, start, upload
from tests.helpers.service import Service, assert_problem

DRY = {"dry_run": "true"}


async def listed(service: Service) -> list[Any]:
    response = await service.client.get("/v1/batches", headers=service.keys.auth("read"))
    return list(response.json()["items"])


async def test_dry_run_estimates_and_stores_no_batch(
    service: Service, simulator_server: SimulatorServer
) -> None:
    dataset = (await upload(service, SAMPLE.read_bytes(), **JSONL)).json()
    body = {"dataset_id": dataset["id"], "models": ["sim"], "judge_model": "sim", "max_rounds": 3}
    response = await service.client.post("/v1/batches", json=body, params=DRY, headers=service.keys.auth())
    assert response.status_code == 200, response.text
    shown = response.json()
    assert shown["items"] == 12 and shown["measured_items"] == 0 and shown["basis"] == "mid"
    assert shown["total"]["calls"] == 12 * (2 * 8 + 1)  # two rounds (mid of 1..3), a revision between
    assert shown["total"]["input_tokens"] > 0 and "location" not in response.headers
    assert await listed(service) == []
    assert simulator_server.state.requests == []


async def test_dry_run_after_a_run_counts_its_measured_items(service: Service) -> None:
    batch = await start(service, use_cache=False)
    done = await settle(service, batch["id"])
    body = {"dataset_id": batch["dataset_id"], "models": ["sim"], "judge_model": "sim", "use_cache": False}
    shown = (
        await service.client.post("/v1/batches", json=body, params=DRY, headers=service.keys.auth())
    ).json()
    spent = done["progress"]
    assert shown["measured_items"] == 12
    assert shown["total"]["input_tokens"] + shown["total"]["output_tokens"] == (
        spent["input_tokens"] + spent["output_tokens"]
    )


@pytest.mark.parametrize(
    ("fields", "status"),
    [({"models": ["gpt-9"]}, 422), ({"dataset_id": "missing"}, 422), ({"max_rounds": 11}, 422)],
)
async def test_dry_run_refuses_what_a_submission_refuses(
    service: Service, fields: dict[str, Any], status: int
) -> None:
    dataset = (await upload(service, SAMPLE.read_bytes(), **JSONL)).json()
    body = {"dataset_id": dataset["id"], "models": ["sim"]}
    fine = await service.client.post("/v1/batches", json=body, params=DRY, headers=service.keys.auth())
    assert fine.status_code == 200, fine.text  # the same body, well formed: estimated
    body |= fields
    real = await service.client.post("/v1/batches", json=body, headers=service.keys.auth())
    dry = await service.client.post("/v1/batches", json=body, params=DRY, headers=service.keys.auth())
    assert assert_problem(dry, status)["detail"] == assert_problem(real, status)["detail"]
    assert await listed(service) == []
