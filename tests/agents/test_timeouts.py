"""A generation's bounds against a server that sends its headers at once, then reads the prompt."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from agents import models
from agents.judges import JudgeRequest, LLMJudge
from agents.llm import LLMClient
from agents.models import ModelSpec, prompt_rate
from agents.simulator import Rule, SimulatorServer
from tests.conftest import ORCHESTRA

Sim = Callable[..., SimulatorServer]
Client = Callable[..., LLMClient]
REQUEST = JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA)


@pytest.fixture(autouse=True)
def _no_learned_rate() -> Iterator[None]:
    """Each test learns the simulator's prompt rate afresh."""
    models._RATES.clear()
    yield
    models._RATES.clear()


async def _failure(client: LLMClient) -> str:
    outcome = await LLMJudge(client).assess(REQUEST)
    assert outcome.verdict is None and outcome.failure is not None
    return outcome.failure.message


async def test_reading_the_prompt_longer_than_timeout_s_is_not_a_failure(sim: Sim, client: Client) -> None:
    server = sim([Rule(prompt_s=2.0)])  # headers at once, then 2 s of silence, then the reply
    outcome = await LLMJudge(client(timeout_s=0.3, queue_timeout_s=60, max_retries=0)).assess(REQUEST)
    assert outcome.verdict is not None and len(server.state.requests) == 1


async def test_a_first_token_after_its_bound_fails_naming_it(sim: Sim, client: Client) -> None:
    sim([Rule(prompt_s=6.0)])
    message = await _failure(client(timeout_s=60, queue_timeout_s=1.0, max_retries=0, parse_retries=0))
    assert "no first token within 1 s" in message and "queue_timeout_s" in message


async def test_a_gap_between_tokens_over_its_bound_fails_naming_it(sim: Sim, client: Client) -> None:
    sim([Rule(stall_s=6.0)])  # the first piece, then silence
    bounded = client(timeout_s=60, token_gap_timeout_s=1.0, max_retries=0, parse_retries=0)
    message = await _failure(bounded)
    assert "no token for 1 s after it had started (token_gap_timeout_s)" in message


async def test_a_call_over_its_total_bound_fails_naming_it(sim: Sim, client: Client) -> None:
    sim([Rule(stall_s=6.0)])  # each bound but the total is far off
    bounded = client(timeout_s=60, total_timeout_s=1.0, max_retries=0, parse_retries=0)
    message = await _failure(bounded)
    assert "more than 1 s in all (total_timeout_s)" in message


async def test_the_prompt_rate_is_learned_from_timings_and_scales_the_bound(
    sim: Sim, client: Client, spec: Callable[..., ModelSpec]
) -> None:
    # The server says it read the first prompt slowly; the next prompt's bound is scaled by that rate.
    sim([Rule(timings_prompt_ms=100_000.0, times=1), Rule(prompt_s=2.0)])
    judge = LLMJudge(client(timeout_s=0.3, queue_timeout_s=0.5, max_retries=0))
    assert (await judge.assess(REQUEST)).verdict is not None
    rate = prompt_rate(spec()).tokens_per_s
    assert rate is not None and rate < 100  # tokens per second: the reported prompt_n over 100 s
    assert (await judge.assess(REQUEST)).verdict is not None  # 2 s of reading within the scaled bound
