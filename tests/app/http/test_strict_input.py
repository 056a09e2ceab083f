"""Request bodies are strict: a boolean is not a number, a string is not an integer. The OpenAPI
schema says so (JSON Schema's types), and the server answers as it says: 422, nothing stored."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest

from tests.helpers.service import Service, assert_problem

PROBLEM = {"question": "What is 2 + 3?", "solution": "2 + 3 = 5"}
LABELLED = {
    "id": "c1",
    "split": "tune",
    "kind": "control",
    "question": "A bag holds 3 red and 4 blue marbles. How many marbles are in the bag?",
    "solution": "3 + 4 = 7 marbles.",
}

# (the schema's component, the path, the body): each coerced value the server used to take.
COERCED: list[Any] = [
    pytest.param("ProjectUpdate", "PATCH", "/v1/projects/{own}", {"daily_cost_usd": False}, id="cap-false"),
    pytest.param("ProjectUpdate", "PATCH", "/v1/projects/{own}", {"daily_cost_usd": True}, id="cap-true"),
    pytest.param("ProjectUpdate", "PATCH", "/v1/projects/{own}", {"daily_tokens": "7"}, id="tokens-str"),
    pytest.param(
        "ProjectUpdate", "PATCH", "/v1/projects/{own}", {"require_warrant": "0.1"}, id="warrant-str"
    ),
    pytest.param(
        "ProjectCreate", "POST", "/v1/projects", {"name": "x", "daily_tokens": True}, id="tokens-true"
    ),
    pytest.param(
        "KeyCreate",
        "POST",
        "/v1/projects/{own}/keys",
        {"name": "x", "expires_at": 2000000000},
        id="expiry-number",
    ),
    pytest.param(
        "RunCreate",
        "POST",
        "/v1/runs",
        {"problem": PROBLEM, "options": {"max_rounds": True}},
        id="rounds-true",
    ),
    pytest.param(
        "RunCreate", "POST", "/v1/runs", {"problem": PROBLEM, "options": {"max_rounds": "2"}}, id="rounds-str"
    ),
    pytest.param(
        "BatchCreate",
        "POST",
        "/v1/batches",
        {"dataset_id": "d", "models": ["sim"], "repeats": "2"},
        id="repeats-str",
    ),
    pytest.param(
        "BatchCreate",
        "POST",
        "/v1/batches",
        {"dataset_id": "d", "models": ["sim"], "control_arm": 1},
        id="arm-1",
    ),
    pytest.param(
        "BatchCreate",
        "POST",
        "/v1/batches",
        {"dataset_id": "d", "models": ["sim"], "budget_usd": False},
        id="budget-false",
    ),
    pytest.param(
        "ValidityRequest", "POST", "/v1/judges/validate", {"builtin": True, "twins": "yes"}, id="twins-str"
    ),
    pytest.param(
        "ValidityRequest",
        "POST",
        "/v1/judges/validate",
        {"items": [LABELLED | {"grade": "5"}]},
        id="grade-str",
    ),
]


def _schema(service: Service, component: str) -> jsonschema_rs.Draft202012Validator:
    spec = service.app.openapi()
    return jsonschema_rs.Draft202012Validator(
        {"$ref": f"#/components/schemas/{component}"} | {"components": spec["components"]}
    )


async def _own(service: Service) -> str:
    projects = await service.client.get("/v1/projects", headers=service.keys.auth("admin"))
    return str(projects.json()["items"][0]["id"])


@pytest.mark.parametrize(("component", "method", "path", "body"), COERCED)
async def test_a_coerced_value_is_a_422_as_the_schema_says(
    service: Service, component: str, method: str, path: str, body: dict[str, Any]
) -> None:
    assert not _schema(service, component).is_valid(body)  # the published schema refuses it
    headers = service.keys.auth("operator") | service.keys.auth("both")
    if path.startswith("/v1/projects"):
        headers = service.keys.auth("operator")
    url = path.format(own=await _own(service))
    before = (await service.client.get("/v1/projects", headers=service.keys.auth("operator"))).json()
    response = await service.client.request(method, url, json=body, headers=headers)
    problem = assert_problem(response, 422)
    assert "does not match the schema" in str(problem["detail"])
    after = (await service.client.get("/v1/projects", headers=service.keys.auth("operator"))).json()
    assert after == before  # no $0 cap, no project made
    runs = await service.client.get("/v1/runs", headers=service.keys.auth("read"))
    assert runs.json()["items"] == []


async def test_the_same_values_with_their_own_types_are_taken(service: Service) -> None:
    own = await _own(service)
    for component, body in (
        ("ProjectUpdate", {"daily_cost_usd": 5, "daily_tokens": 7}),  # an integer is a number
        ("KeyCreate", {"name": "x", "expires_at": "2030-01-01T00:00:00Z"}),
        (
            "RunCreate",
            {"problem": PROBLEM | {"metadata": {"n": 7, "ok": True}}, "options": {"max_rounds": 2}},
        ),
    ):
        assert _schema(service, component).is_valid(body), component
    operator = service.keys.auth("operator")
    patched = await service.client.patch(
        f"/v1/projects/{own}", json={"daily_cost_usd": 5, "daily_tokens": 7}, headers=operator
    )
    assert patched.status_code == 200 and patched.json()["daily_cost_usd"] == 5.0
    key = await service.client.post(
        f"/v1/projects/{own}/keys", json={"name": "x", "expires_at": "2030-01-01T00:00:00Z"}, headers=operator
    )
    assert key.status_code == 201, key.text
    body = {"problem": PROBLEM | {"metadata": {"n": 7, "ok": True}}, "options": {"max_rounds": 2}}
    run = await service.client.post("/v1/runs", json=body, headers=service.keys.auth())
    assert run.status_code == 202 and run.json()["max_rounds"] == 2
