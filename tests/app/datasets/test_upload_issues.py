"""A dataset keeps what its upload answered: the duplicates folded and the warnings, by line, on
reads and lists alike (both databases)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import update
from sqlmodel import col

from app.db import create_engine, session_factory, short_session
from app.models import Dataset
from tests.helpers.service import Service

JSONL = {"Content-Type": "application/x-ndjson"}
TWICE_SOLD = {"question": "A train goes 60 km/h. How far in 2 h?", "solution": "60 × 2 = 120 km"}
NO_NUMBER = {"question": "A train goes 60 km/h. How far in 2 h?", "solution": "far"}


async def _upload(service: Service, rows: list[dict[str, str]]) -> dict[str, Any]:
    body = "\n".join(json.dumps(r) for r in rows).encode()
    response = await service.client.post(
        "/v1/datasets", params={"name": "s.jsonl"}, content=body, headers=service.keys.auth() | JSONL
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_reads_answer_the_uploads_duplicates_and_warnings(service: Service) -> None:
    uploaded = await _upload(service, [TWICE_SOLD, NO_NUMBER, TWICE_SOLD])
    assert uploaded["duplicates"] == [{"line": 3, "message": "same problem as line 1"}]
    assert [w["line"] for w in uploaded["warnings"]] == [2]
    read = service.keys.auth("read")
    got = (await service.client.get(f"/v1/datasets/{uploaded['id']}", headers=read)).json()
    listed = (await service.client.get("/v1/datasets", headers=read)).json()["items"]
    keep = ("duplicates", "warnings")
    assert {k: got[k] for k in keep} == {k: listed[0][k] for k in keep} == {k: uploaded[k] for k in keep}


async def test_at_most_a_hundred_of_each_are_kept(service: Service) -> None:
    rows = [{"question": "What is 1 + 1?", "solution": "1 + 1 = 2"}] * 150
    uploaded = await _upload(service, rows)
    got = await service.client.get(f"/v1/datasets/{uploaded['id']}", headers=service.keys.auth("read"))
    duplicates = got.json()["duplicates"]
    assert len(duplicates) == 100 and duplicates == uploaded["duplicates"] and duplicates[0]["line"] == 2


async def test_a_dataset_uploaded_before_they_were_kept_reads_empty_lists(
    service: Service, database_url: str
) -> None:
    uploaded = await _upload(service, [TWICE_SOLD, TWICE_SOLD])
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            erase = update(Dataset).where(col(Dataset.id) == uploaded["id"])
            await session.execute(erase.values(duplicates=None, warnings=None))
    finally:
        await engine.dispose()
    got = await service.client.get(f"/v1/datasets/{uploaded['id']}", headers=service.keys.auth("read"))
    assert got.status_code == 200 and got.json()["duplicates"] == got.json()["warnings"] == []
