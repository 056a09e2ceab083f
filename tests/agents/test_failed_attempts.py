"""Every attempt is accounted: failed attempts' prompt tokens, as reported or estimated, in usage and cost."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from agents.judges import JudgeRequest, LLMJudge
from agents.llm import models
from agents.llm.client import LLMClient
from agents.llm.timeouts import CHARS_PER_TOKEN
from agents.simulator import Rule, SimulatorServer
from app.metrics import ServiceMetrics
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]
Client = Callable[..., LLMClient]
REQUEST = JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA)
PRICE = {"input_per_mtok": 1_000_000.0, "output_per_mtok": 0.0, "cached_input_per_mtok": 0.0}
REPORTED = {"usage": {"prompt_tokens": 700, "prompt_tokens_details": {"cached_tokens": 512}}}


@pytest.fixture(autouse=True)
def _no_learned_rate() -> Iterator[None]:
    models._RATES.clear()
    yield
    models._RATES.clear()


async def test_failed_attempts_charge_the_prompt_tokens_their_error_bodies_report(
    sim: Sim, client: Client
) -> None:
    sim([Rule(status=503, error_report=REPORTED, times=2)])  # two 503s the SDK retries, then a reply
    outcome = await LLMJudge(client(max_retries=2, price=PRICE)).assess(REQUEST)
    usage = outcome.usage
    assert outcome.verdict is not None and usage.calls == 1
    assert usage.failed_attempts == 2 and usage.failed_input_tokens == 1400
    assert usage.failed_cached_input_tokens == 1024 and usage.estimated_input_tokens == 0
    answered = usage.input_tokens - usage.failed_input_tokens
    assert answered > 0 and usage.cached_input_tokens >= 1024
    # 1 USD per token, cached tokens free: the failed attempts cost their 2 x 188 uncached tokens
    assert usage.cost_usd is not None and usage.cost_usd >= 376


async def test_llama_cpp_timings_and_a_context_refusal_count_as_reported(sim: Sim, client: Client) -> None:
    timings = {"timings": {"prompt_n": 300, "cache_n": 200}}
    sim(
        [
            Rule(status=500, error_report=timings, times=1),
            Rule(status=502, error_report={"n_prompt_tokens": 1384}),
        ]
    )
    outcome = await LLMJudge(client(max_retries=1, parse_retries=0)).assess(REQUEST)
    usage = outcome.usage
    assert outcome.verdict is None and usage.calls == 0
    assert usage.failed_attempts == 2 and usage.input_tokens == usage.failed_input_tokens == 500 + 1384
    assert usage.failed_cached_input_tokens == usage.cached_input_tokens == 200
    assert usage.estimated_input_tokens == 0


async def test_a_timed_out_attempt_is_estimated_from_its_prompt(sim: Sim, client: Client) -> None:
    # The first token never comes within the floor; the headers came, so the SDK does not retry.
    server = sim([Rule(prompt_s=3.0)])
    bounded = client(queue_timeout_s=0.3, max_retries=1, parse_retries=0)
    outcome = await LLMJudge(bounded).assess(REQUEST)
    usage = outcome.usage
    assert outcome.verdict is None and usage.calls == 0 and len(server.state.requests) == 1
    assert usage.failed_attempts == 1 and usage.input_tokens == usage.failed_input_tokens
    assert usage.estimated_input_tokens == usage.failed_input_tokens
    # the prompt's characters over CHARS_PER_TOKEN, so at least the problem's
    assert usage.failed_input_tokens >= len(ORCHESTRA.question + ORCHESTRA.solution) / CHARS_PER_TOKEN


async def test_an_error_without_usage_is_estimated(sim: Sim, client: Client) -> None:
    sim([Rule(status=500)])
    outcome = await LLMJudge(client(max_retries=0, parse_retries=0)).assess(REQUEST)
    usage = outcome.usage
    assert usage.failed_attempts == 1 and usage.estimated_input_tokens == usage.input_tokens > 0


def test_metrics_count_failed_attempts_and_their_tokens_by_source(sim: Sim) -> None:
    from agents.llm.calls import Usage

    metrics = ServiceMetrics()
    usage = Usage(input_tokens=900, failed_attempts=3, failed_input_tokens=800, estimated_input_tokens=300)
    metrics.observe_call("m", "judge", usage)

    def value(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(name, {"model": "m", "role": "judge", **labels})

    assert value("thinkloop_llm_failed_attempts_total") == 3
    assert value("thinkloop_llm_failed_input_tokens_total", source="reported") == 500
    assert value("thinkloop_llm_failed_input_tokens_total", source="estimated") == 300
    assert value("thinkloop_llm_tokens_total", direction="input") == 900


def test_what_a_failed_response_reports_is_read_in_each_servers_shape() -> None:
    from agents.llm.attempts import last_report, reported_tokens

    assert reported_tokens({"usage": {"prompt_tokens": 700, "prompt_cache_hit_tokens": 600}}) == (700, 600)
    assert reported_tokens({"timings": {"prompt_n": 300, "cache_n": 200}}) == (500, 200)
    error = {
        "error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 1384, "n_ctx": 1024}
    }
    assert reported_tokens(error) == (1384, 0)
    assert reported_tokens({"error": {"message": "simulated 500"}}) is None
    # A stream that broke off after a frame with timings (llama.cpp sends them in its last chunks).
    tail = (
        b'data: {"choices":[{"delta":{"content":"{"}}]}\n\n'
        b'data: {"choices":[],"timings":{"prompt_n":90,"cache_n":10}}\n\n'
    )
    report = last_report(tail)
    assert report is not None and reported_tokens(report) == (100, 10)
    assert last_report(b'data: {"choices":[{"delta":{"content":"x"}}]}\n\n') is None
