"""Property-based fuzzing of the API from its own OpenAPI schema, against a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

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
from tests.helpers.service import LiveServer, seed_keys, service_settings

PROBLEM_JSON = "application/problem+json"
# A generated request, whichever operation of the API it calls.
Case = schemathesis.Case[Any]


class _Seen(TypedDict):
    """What the stateful test counts, and whose key makes the current call."""

    calls: int
    crossed: int
    project: str


# schemathesis's own strategies draw from `random`, which hypothesis deprecates (a library matter).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies"),
]


@schemathesis.check
def errors_are_problem_json(ctx: Any, response: schemathesis.Response, case: Case) -> bool | None:
    """Every 4xx and 5xx answer is RFC 9457 problem+json with its required members."""
    if response.status_code < 400:
        return None
    assert response.headers.get("content-type", [""])[0].startswith(PROBLEM_JSON), response.headers
    body = response.json()
    assert body["status"] == response.status_code and body["title"] and body["type"], body
    return True


@schemathesis.check
def no_server_error(ctx: Any, response: schemathesis.Response, case: Case) -> bool | None:
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
        def fuzz(case: Case) -> None:
            if (
                case.path in ("/v1/judges/validate", "/v1/judges/calibrate")
                and isinstance(case.body, dict)
                and case.body.get("builtin")
            ):
                # judging the shipped set takes seconds per request (more than the 30 s a call may
                # take here, on a busy machine); test_validity_api and cli/test_calibrate cover it
                case.body["builtin"] = False
            case.call_and_validate(headers=headers, checks=CHECKS, timeout=30)

        fuzz()


@pytest.fixture
def two_projects(
    tmp_path: Path, simulator_server: SimulatorServer
) -> Iterator[tuple[Any, dict[str, dict[str, str]], str]]:
    """The API on uvicorn with keys of two projects: A (the default project) and B."""
    import asyncio

    url = f"sqlite+aiosqlite:///{tmp_path / 'stateful.db'}"

    async def prepare() -> dict[str, dict[str, str]]:
        await migrate(url)
        keys = await seed_keys(url)
        return {"A": keys.auth("both"), "B": keys.auth("other")}

    keys = asyncio.run(prepare())
    with LiveServer(create_app(service_settings(url, simulator_server, wait_timeout_s=5))) as server:
        yield schemathesis.openapi.from_url(f"{server.url}/openapi.json"), keys, server.url


def test_two_projects_statefully_never_see_each_other(
    two_projects: tuple[Any, dict[str, dict[str, str]], str],
) -> None:
    """Sequences of calls linked through their ids (a run created, then read, streamed, cancelled,
    deleted; a dataset uploaded, then used by a batch …), each made with project A's key or B's in
    turn: no 500, problem+json errors, and nothing one project made is ever answered 2xx to the other."""
    schema, keys, base_url = two_projects
    owner: dict[str, str] = {}  # id of something made → the project that made it
    state: _Seen = {"calls": 0, "crossed": 0, "project": "A"}

    def not_across_projects(ctx: Any, response: schemathesis.Response, case: Case) -> bool | None:
        caller = state["project"]
        named = [str(value) for value in (case.path_parameters or {}).values()]
        if any(owner.get(value) not in (None, caller) for value in named):
            state["crossed"] += 1
            # a request that fails the schema is refused before any id is looked up: the same 422
            # for another project's id as for one that does not exist, so it reveals nothing
            refused_unread = response.status_code == 422 and bool(response.json().get("errors"))
            assert response.status_code == 404 or refused_unread, (
                case.method,
                case.formatted_path,
                response.status_code,
            )
        if response.status_code < 300 and response.content.startswith(b"{"):
            items = response.json().get("items")
            if isinstance(items, list):  # a list shows the caller's own things only
                ids = [i for item in items if isinstance(item, dict) and isinstance(i := item.get("id"), str)]
                assert [i for i in ids if owner.get(i) not in (None, caller)] == [], case.formatted_path
        return True

    class TwoProjects(schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            self.step_number = 0  # each scenario alternates A, B, A, … from its first call

        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            self.step_number += 1
            state["calls"] += 1
            state["project"] = "A" if self.step_number % 2 else "B"
            return {"headers": keys[str(state["project"])], "timeout": 30}

        def before_call(self, case: Case) -> None:
            if (
                case.path == "/v1/judges/validate"
                and isinstance(case.body, dict)
                and case.body.get("builtin")
            ):
                case.body["builtin"] = False  # seconds per request; test_validity_api covers it

        def after_call(self, response: schemathesis.Response, case: Case) -> None:
            if case.method == "POST" and response.status_code in (200, 201, 202):
                made = response.json().get("id")
                if isinstance(made, str) and made not in owner:
                    owner[made] = str(state["project"])

        def validate_response(self, response: schemathesis.Response, case: Case, **kwargs: Any) -> None:
            case.validate_response(response, checks=[*CHECKS, not_across_projects], transport_kwargs=kwargs)

    TwoProjects.run(
        settings=settings(
            max_examples=40,
            stateful_step_count=8,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            derandomize=True,  # the same sequences on every run, so a crossing is always tried
        )
    )
    # it made things (about 320 calls and 15 things made in a run here); which project's calls
    # make them depends on which generated bodies are valid, so one run is also made with each
    # key, and everything made is then read across.
    assert int(state["calls"]) > 40 and owner
    _make_one_run_each(base_url, keys, owner)
    assert set(owner.values()) == {"A", "B"}
    # Whether the generated sequences also carried an id across depends on the schema's shape, so
    # every run, batch, dataset and webhook endpoint made is then read with its owner's key and with
    # the other project's key (404).
    assert _read_across(base_url, keys, owner) > 0, owner


def _make_one_run_each(base_url: str, keys: dict[str, dict[str, str]], owner: dict[str, str]) -> None:
    import httpx

    problem = {"question": "Ann has 3 apples and buys 4 more. How many now?", "solution": "3 + 4 = 7."}
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for project in ("A", "B"):
            made = client.post("/v1/runs", json={"problem": problem}, headers=keys[project])
            assert made.status_code == 202, made.text
            owner[made.json()["id"]] = project


_ID_ROUTES = ("/v1/runs/{}", "/v1/batches/{}", "/v1/datasets/{}", "/v1/webhook-endpoints/{}")


def _read_across(base_url: str, keys: dict[str, dict[str, str]], owner: dict[str, str]) -> int:
    """How many things made in the run its owner can read (and the other project, it is asserted,
    cannot)."""
    import httpx

    crossings = 0
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for made, project in owner.items():
            other = "B" if project == "A" else "A"
            for route in _ID_ROUTES:
                if client.get(route.format(made), headers=keys[project]).status_code == 200:
                    assert client.get(route.format(made), headers=keys[other]).status_code == 404, route
                    crossings += 1
                    break
    return crossings
