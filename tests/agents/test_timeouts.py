"""A generation's bounds against a server that sends its headers at once, then reads the prompt."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterator

import pytest

from agents.judges import JudgeRequest, LLMJudge
from agents.llm import models
from agents.llm.client import LLMClient
from agents.llm.models import ModelSpec, prompt_rate
from agents.simulator import Rule, SimulatorServer
from tests.helpers.problems import ORCHESTRA

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


async def test_the_prompt_rate_is_learned_from_the_first_token_where_no_timings_come(
    sim: Sim, client: Client, spec: Callable[..., ModelSpec]
) -> None:
    # No timings: the first call's time to first token (1 s for its prompt) gives the rate, and the
    # next call's bound is reading its prompt at that rate with slack, above a floor of 0.3 s.
    sim([Rule(prompt_s=1.0)])
    assert (await LLMJudge(client(queue_timeout_s=30, max_retries=0)).assess(REQUEST)).verdict is not None
    rate = prompt_rate(spec()).tokens_per_s
    assert rate is not None and not prompt_rate(spec()).reported
    judge = LLMJudge(client(queue_timeout_s=0.3, max_retries=0, parse_retries=0))
    assert (await judge.assess(REQUEST)).verdict is not None


async def test_a_started_reply_is_not_cut_while_another_call_reads_its_prompt(
    sim: Sim, client: Client
) -> None:
    # llama-server generates for no slot while one reads a prompt: the reply already streaming goes
    # quiet for as long. Its gap bound (0.5 s) waits for the reading call's first-token bound.
    server = sim([Rule(role="Judge: Remember", prompt_s=3.0), Rule(role="Judge: Apply", stall_s=2.0)])
    judge = LLMJudge(client(token_gap_timeout_s=0.5, queue_timeout_s=20, max_retries=0, parse_retries=0))
    reading = asyncio.create_task(judge.assess(JudgeRequest("remember", 1, ORCHESTRA, ORCHESTRA)))
    async with asyncio.timeout(20):  # a hang guard: the reading call's request reaches the server
        await _arrived(server)
    streaming = await judge.assess(REQUEST)
    assert streaming.verdict is not None, streaming.abstain_reason
    assert (await reading).verdict is not None


async def test_a_connection_not_made_within_its_bound_fails_naming_it(client: Client) -> None:
    # A listening socket whose accept queue is full: the kernel drops further SYNs, so connect hangs.
    with socket.socket() as listener, socket.socket() as filler:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        filler.connect(listener.getsockname())
        base_url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        bounded = client(base_url=base_url, connect_timeout_s=0.5, timeout_s=0.5, max_retries=0)
        message = await _failure(bounded)
    assert "no connection within 0.5 s (connect_timeout_s)" in message


async def test_a_cancelled_call_closes_its_connection_at_once(client: Client) -> None:
    """The server has sent its headers and is reading the prompt; cancelling the call closes the
    connection then, not when the server would have answered."""
    arrived, closed = asyncio.Event(), asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        await writer.drain()
        arrived.set()
        while await reader.read(65536):  # the body, then nothing until the client hangs up
            pass
        closed.set()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        judge = LLMJudge(client(base_url=f"http://127.0.0.1:{port}/v1", queue_timeout_s=600, max_retries=0))
        call = asyncio.create_task(judge.assess(REQUEST))
        async with asyncio.timeout(20):  # hang guards, not thresholds
            await arrived.wait()
            call.cancel()
            await closed.wait()
        assert call.cancelled()


async def _arrived(server: SimulatorServer) -> None:
    """Until the server (in its own thread: no event to await) has logged a request."""
    while True:
        if server.state.requests:
            return
        await asyncio.sleep(0.02)
