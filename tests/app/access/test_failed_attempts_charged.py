"""A failed attempt's prompt tokens are charged: to the verdict, the run, the day's ledger and /metrics."""

from __future__ import annotations

import re

from sqlalchemy import func, select

from agents.simulator import Rule, SimulatorServer
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Service

REPORTED = {"usage": {"prompt_tokens": 700}}


async def test_a_failed_attempt_is_charged_to_the_verdict_the_run_the_ledger_and_metrics(
    service: Service, simulator_server: SimulatorServer
) -> None:
    from app.db import create_engine, session_factory, short_session
    from app.models import DailyUsage

    # The apply judge's first attempt fails with a 503 that says the server read 700 prompt tokens;
    # the SDK retries it (max_retries 1) and the retry answers.
    rule = Rule(role="Judge: Apply", status=503, error_report=REPORTED, times=1)
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [rule]}))
    body = {"problem": PROBLEM, "options": {"judge_model": "sim", "max_rounds": 1}}
    response = await service.client.post(
        "/v1/runs", json=body, params={"wait": "true"}, headers=service.keys.auth()
    )
    trace = response.json()
    verdicts = {v["judge"]: v for v in trace["rounds"][0]["verdicts"]}
    others = [v["input_tokens"] for judge, v in verdicts.items() if judge not in ("apply", "holistic")]
    # The apply judge's prompt is about as long as the other level judges': the 700 come on top.
    assert verdicts["apply"]["input_tokens"] >= 700 + min(others) - 50, verdicts["apply"]
    assert trace["usage"]["input_tokens"] >= sum(v["input_tokens"] for v in verdicts.values())
    engine = create_engine(service.app.state.settings.database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            ledger = (await session.execute(select(func.sum(DailyUsage.input_tokens)))).scalar_one()
    finally:
        await engine.dispose()
    assert ledger == trace["usage"]["input_tokens"]
    text = (await service.client.get("/metrics", headers=service.keys.auth("read"))).text
    failed = re.search(r'^thinkloop_llm_failed_attempts_total\{model="sim",role="judge"\} (\S+)$', text, re.M)
    tokens = re.search(
        r'^thinkloop_llm_failed_input_tokens_total\{model="sim",role="judge",source="reported"\} (\S+)$',
        text,
        re.M,
    )
    assert failed is not None and float(failed.group(1)) == 1, text
    assert tokens is not None and float(tokens.group(1)) == 700, text
