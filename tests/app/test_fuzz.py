"""Property-based fuzzing of the API from its own OpenAPI schema, against a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from agents.simulator import SimulatorServer
from app.db import migrate
from app.main import create_app
from tests.app.conftest import LiveServer, seed_keys, service_settings

PROBLEM_JSON = "application/problem+json"
# schemathesis's own strategies draw from `random`, which hypothesis deprecates (a library matter).
pytestmark = pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")


@schemathesis.check
def errors_are_problem_json(
    ctx: Any, response: schemathesis.Response, case: schemathesis.Case
) -> bool | None:
    """Every 4xx and 5xx answer is RFC 9457 problem+json with its required members."""
    if response.status_code < 400:
        return None
    assert response.headers.get("content-type", [""])[0].startswith(PROBLEM_JSON), response.headers
    body = response.json()
    assert body["status"] == response.status_code and body["title"] and body["type"], body
    return True


@schemathesis.check
def no_server_error(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> bool | None:
    """No 500 (a 503 with Retry-After would be an outage, which this test does not cause)."""
    assert response.status_code < 500, response.text[:500]
    return True


@pytest.fixture
def api(tmp_path: Path, simulator_server: SimulatorServer) -> Iterator[tuple[Any, dict[str, str]]]:
    """The API on uvicorn (SQLite, offline panel) and the schema it serves, with a key."""
    import asyncio

    url = f"sqlite+aiosqlite:///{tmp_path / 'fuzz.db'}"

    async def prepare() -> str:
        await migrate(url)
        return (await seed_keys(url)).both

    key = asyncio.run(prepare())
    with LiveServer(create_app(service_settings(url, simulator_server, wait_timeout_s=5))) as server:
        yield schemathesis.openapi.from_url(f"{server.url}/openapi.json"), {"Authorization": f"Bearer {key}"}


CHECKS = [
    no_server_error,
    errors_are_problem_json,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def test_the_api_holds_to_its_schema(api: tuple[Any, dict[str, str]]) -> None:
    schema, headers = api
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def fuzz(case: schemathesis.Case) -> None:
            if (
                case.path == "/v1/judges/validate"
                and isinstance(case.body, dict)
                and case.body.get("builtin")
            ):
                # judging the shipped set takes seconds per request; test_validity_api covers it
                case.body["builtin"] = False
            case.call_and_validate(headers=headers, checks=CHECKS, timeout=30)

        fuzz()
