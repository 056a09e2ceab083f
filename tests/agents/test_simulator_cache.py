"""The simulator's OpenAI-style prompt cache, and what the judges' prompt layout gets from it.

OpenAI reports as cached the longest prefix a prompt shares with one it has seen before, counted
only from 1,024 tokens on and in steps of 128. The judges' prompts begin with the panel's prefix
(issue 54), so from a batch's second problem on most of every judge prompt is cached.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agents.judges import JudgeRequest, LLMJudge
from agents.llm.calls import Usage
from agents.llm.client import LLMClient
from agents.schemas import JUDGES, Problem
from agents.simulator import SimConfig, SimulatorServer, SimulatorState
from agents.simulator.cache import OPENAI_MIN_TOKENS, with_prompt_cache

Sim = Callable[..., SimulatorServer]

# Three problems, none a prefix of another: what a batch's items are.
PROBLEMS = [
    Problem(question="Ann has 3 bags of 4 apples. How many apples?", solution="3 x 4 = 12 apples."),
    Problem(question="A bus seats 40 pupils. How many buses for 130 pupils?", solution="4 buses."),
    Problem(question="Tom reads 12 pages a day. How many days for 84 pages?", solution="7 days."),
]


def _body(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


@pytest.mark.parametrize(
    ("shared_tokens", "cached"),
    [(1023, 0), (1024, 1024), (1151, 1024), (1152, 1152), (1300, 1280), (500, 0)],
)
def test_cached_tokens_count_from_1024_in_steps_of_128(shared_tokens: int, cached: int) -> None:
    state = SimulatorState(with_prompt_cache(SimConfig()))
    state.remember_prompt(_body("a" * 4 * shared_tokens + "b" * 800))
    state.remember_prompt(_body("a" * 100 + "c" * 8000))  # a shorter match seen later counts less
    assert state.cached_tokens(_body("a" * 4 * shared_tokens + "d" * 800)) == cached


def test_without_the_option_no_cached_tokens_are_reported() -> None:
    state = SimulatorState(SimConfig())
    state.remember_prompt(_body("a" * 8000))
    assert state.cached_tokens(_body("a" * 8000)) is None
    assert with_prompt_cache(SimConfig()).server.prompt_cache_min_tokens == OPENAI_MIN_TOKENS


async def _judged_round(judge: LLMJudge, problem: Problem) -> Usage:
    outcomes = await asyncio.gather(*(judge.assess(JudgeRequest(n, 1, problem, problem)) for n in JUDGES))
    return sum((o.usage for o in outcomes), Usage())


async def test_from_a_batchs_second_problem_on_most_of_every_judge_prompt_is_cached(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    """The seven judges of each problem's round at once, problem after problem, on a server with
    OpenAI's cache: the panel's prefix (over 1,024 tokens) is cached for every judge call of every
    later problem, ≥ 0.6 of the judge prompt tokens (issue 54's target)."""
    server = sim()
    server.state.configure(with_prompt_cache(SimConfig()))
    judge = LLMJudge(client())
    rounds = [await _judged_round(judge, problem) for problem in PROBLEMS]
    for usage in rounds[1:]:
        assert usage.calls == len(JUDGES)
        assert usage.cached_input_tokens >= 0.6 * usage.input_tokens
        assert usage.cached_input_tokens >= len(JUDGES) * OPENAI_MIN_TOKENS
