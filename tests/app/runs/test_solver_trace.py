"""The stored trace of a run on a model-backed panel shows the solver: both answers when they
differ (and the round is refused), the cause when its call failed (and nothing is refused)."""

from __future__ import annotations

from typing import Any

from agents.simulator import Rule, SimConfig, SimulatorServer
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service

OPTIONS = {"model": "sim", "judge_model": "sim", "max_rounds": 1}


async def run_with(service: Service, simulator: SimulatorServer, rule: Rule) -> dict[str, Any]:
    simulator.state.configure(SimConfig(rules=[rule]))
    response = await service.client.post(
        "/v1/runs",
        json={"problem": PROBLEM, "options": OPTIONS},
        params={"wait": "true"},
        headers=service.keys.auth(),
    )
    assert response.status_code == 200, response.text
    trace: dict[str, Any] = response.json()
    return trace


async def test_a_disagreeing_solver_is_in_the_trace_with_both_answers(
    service: Service, simulator_server: SimulatorServer
) -> None:
    trace = await run_with(service, simulator_server, Rule(role="^Solver", answer="40 minutes"))
    assert trace["status"] == "exhausted"  # every judge passed it: the solver's answer refused it
    first = trace["rounds"][0]
    assert first["verification"] == [
        "solver: the question's answer is 40 minutes; the solution says 80 minutes"
    ]
    solver = first["solver"]
    assert solver["solution"]["answer"] == "40 minutes" and solver["prompt_version"].startswith("solver@")
    assert solver["usage"]["input_tokens"] > 0 and solver["raw_outputs"]
    judged = sum(v["input_tokens"] for v in first["verdicts"])
    assert trace["usage"]["input_tokens"] == judged + solver["usage"]["input_tokens"]  # it is paid for


async def test_a_failed_solver_shows_its_cause_and_refuses_nothing(
    service: Service, simulator_server: SimulatorServer
) -> None:
    trace = await run_with(service, simulator_server, Rule(role="^Solver", status=503))
    assert trace["status"] == "accepted" and trace["failure"] is None
    first = trace["rounds"][0]
    assert first["verification"] == [] and first["solver"]["solution"] is None
    assert first["solver"]["failure"]["status"] == 503 and first["solver"]["failure"]["kind"] == "endpoint"


async def test_a_judges_own_answer_is_kept(service: Service, simulator_server: SimulatorServer) -> None:
    trace = await run_with(service, simulator_server, Rule(role="^Judge", answer="40 minutes"))
    assert all(v["details"]["own_answer"] == "40 minutes" for v in trace["rounds"][0]["verdicts"])


async def test_a_failed_revision_shows_its_raw_outputs_and_think_aloud(
    service: Service, simulator_server: SimulatorServer
) -> None:
    simulator_server.state.configure(
        SimConfig(rules=[Rule(role="^Judge", score=40), Rule(role="^Reviser", malformed=True)])
    )
    options = OPTIONS | {"max_rounds": 2}
    posted = await service.client.post(
        "/v1/runs",
        json={"problem": PROBLEM, "options": options},
        params={"wait": "true"},
        headers=service.keys.auth(),
    )
    assert posted.status_code == 200, posted.text
    response = await service.client.get(f"/v1/runs/{posted.json()['id']}", headers=service.keys.auth())
    trace = response.json()
    assert trace["status"] == "error"
    revision = trace["rounds"][0]["revision"]
    assert revision["question"] is None and revision["failure"]["kind"] == "malformed"
    # The same malformed reply after its correction, at temperature 0: the call stops there (two
    # attempts, not parse_retries + 1), with the cause said.
    assert len(revision["raw_outputs"]) == 2 and all(
        raw.startswith('{"thinking"') for raw in revision["raw_outputs"]
    )
    assert "deterministic failure: identical reply" in revision["failure"]["message"]
    # What the stream showed while the model thought aloud: kept although no revision came of it.
    assert revision["thinking"].startswith("I read each reviewer's finding")


async def test_an_unchanged_revision_is_never_judged_and_the_trace_keeps_it(
    service: Service, simulator_server: SimulatorServer
) -> None:
    """The reviser hands the problem back as it was: no revision, so it is never judged; the run is
    exhausted with the cause (the model's failure), not sent to review, and the trace keeps the reply."""
    echo = {"thinking": "It is fine as it is.", **PROBLEM}
    rules = [Rule(role="^Judge", score=40), Rule(role="^Reviser", json=echo)]
    simulator_server.state.configure(SimConfig(rules=rules))
    response = await service.client.post(
        "/v1/runs",
        json={"problem": PROBLEM, "options": OPTIONS | {"max_rounds": 2}},
        params={"wait": "true"},
        headers=service.keys.auth(),
    )
    assert response.status_code == 200, response.text
    trace = response.json()
    assert trace["status"] == "exhausted", trace["stop_reason"]
    assert trace["stop_reason"].startswith("the model under test did not revise")
    assert "it returned the version it was asked to revise unchanged" in trace["stop_reason"]
    assert len(trace["rounds"]) == 1 and trace["rounds"][0]["revision"]["question"] == PROBLEM["question"]
    stored = await service.client.get(f"/v1/runs/{trace['id']}", headers=service.keys.auth("read"))
    assert stored.json()["stop_reason"] == trace["stop_reason"] and len(stored.json()["rounds"]) == 1
