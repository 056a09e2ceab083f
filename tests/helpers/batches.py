"""Batches: a runner on the test's database, the API's upload/start/settle, and item counts with the verdicts
taken together."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from agents.panel import PanelFactory
from app.batches.runner import BatchRunner
from app.models import RUN_TERMINAL, RunStatus
from app.runs.executor import open_executor
from app.settings import Settings
from tests.helpers.service import Service

# The outcomes that are verdicts (an item or run ending so was judged): every ending but error and cancelled.
VERDICTS = RUN_TERMINAL - {RunStatus.ERROR, RunStatus.CANCELLED}


def verdicts(counts: Mapping[str, int]) -> dict[str, int]:
    """Item counts by status with the verdicts (accepted, screened, exhausted, needs_review) taken
    together as "verdict": which verdict an item gets is the panel's business, not a batch's."""
    out: dict[str, int] = {}
    for status, n in counts.items():
        key = "verdict" if status in VERDICTS else status
        out[key] = out.get(key, 0) + n
    return out


@asynccontextmanager
async def batch_runner(
    sessions: Any,
    factory: PanelFactory,
    database_url: str,
    *,
    lease_s: float = 60,
    concurrency: int = 4,
    outage_s: float = 300.0,
    worker: str | None = None,
) -> AsyncIterator[BatchRunner]:
    """A batch runner whose items execute as runs on the database's checkpointer (as the process
    ``worker``, when given: another machine's worker), each held by its run's lease of ``lease_s``
    (nothing renews it here: the executor is not running)."""
    settings = Settings(_env_file=None, database_url=database_url, run_lease_s=lease_s)
    async with open_executor(settings, sessions, factory, connections=concurrency) as executor:
        if worker is not None:
            executor.worker = worker
        yield BatchRunner(executor, concurrency=concurrency, outage_s=outage_s)


SAMPLE = Path(__file__).parents[2] / "app" / "samples" / "datasets" / "flawed-problems.jsonl"


JSONL = {"Content-Type": "application/x-ndjson"}


async def upload(service: Service, body: bytes, name: str = "sample.jsonl", **headers: str) -> httpx.Response:
    return await service.client.post(
        "/v1/datasets", params={"name": name}, content=body, headers=service.keys.auth() | headers
    )


async def start(service: Service, **fields: Any) -> dict[str, Any]:
    dataset = (await upload(service, SAMPLE.read_bytes(), **JSONL)).json()
    body = {"dataset_id": dataset["id"], "models": ["sim"], "judge_model": "sim"} | fields
    response = await service.client.post("/v1/batches", json=body, headers=service.keys.auth())
    assert response.status_code == 202, response.text
    assert response.headers["location"] == f"/v1/batches/{response.json()['id']}"
    return dict(response.json())


async def settle(service: Service, batch_id: str) -> dict[str, Any]:
    """The batch once it ended and nothing is in flight."""
    for _ in range(1200):
        batch = (
            await service.client.get(f"/v1/batches/{batch_id}", headers=service.keys.auth("read"))
        ).json()
        progress = batch["progress"]
        if progress["status"] not in ("queued", "running") and not progress["items"].get("running"):
            return dict(batch)
        await asyncio.sleep(0.05)
    raise AssertionError(f"batch {batch_id} did not end: {batch}")
