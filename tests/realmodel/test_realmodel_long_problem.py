"""A long problem's judges survive reading it with the default bounds, on llama-server (issue 53).

Reading a judge's prompt for a 535-word problem (about 1,400 tokens) takes Gemma 3 270M tens of
seconds on a busy 2-core machine, with the headers sent at once and nothing after them until the
prompt is read; three judges at once on two slots also queue one and stall a started reply while
the other slot reads. Under the default bounds none of that is a failure: each judge gets an answer
from the model (a verdict, or junk that does not fit, which is the model's), never a timeout.
"""

from __future__ import annotations

import asyncio

import pytest

from agents.fit import LONG_PROBLEM
from agents.judges import JudgeRequest, LLMJudge
from agents.llm.models import MaxTokens, ModelRegistry, ModelSpec
from agents.panel import PanelFactory
from agents.realmodel import MODEL_ID, TIER_MAX_TOKENS
from agents.schemas import JudgeName
from tests.helpers.realmodel import RealModel

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(900)]
# The judge that lost all its attempts to a 60 s chunk timeout in the issue, with two more: three
# calls for two slots.
JUDGED: tuple[JudgeName, ...] = ("understand", "remember", "apply")


async def test_a_long_problems_judges_survive_reading_it_with_the_default_bounds(
    realmodel: RealModel,
) -> None:
    assert len((LONG_PROBLEM.question + " " + LONG_PROBLEM.solution).split()) >= 500
    # Every bound at its default. One ask per judge (parse_retries 0) and short replies (96 tokens:
    # Gemma's often end cut, which is the model's failure, not a bound's) keep the test short: the
    # prompt reading is what it tests.
    spec = ModelSpec(
        name="gemma",
        model=MODEL_ID,
        base_url=realmodel.base_url,
        max_tokens=MaxTokens(**(TIER_MAX_TOKENS | {"judge": 96})),
        parse_retries=0,
    )
    async with PanelFactory(ModelRegistry({"gemma": spec}), {}) as factory:
        client = factory.client("gemma")
        assert client is not None
        judges = [LLMJudge(client).assess(JudgeRequest(j, 1, LONG_PROBLEM, LONG_PROBLEM)) for j in JUDGED]
        outcomes = await asyncio.gather(*judges)
    for outcome in outcomes:
        failure = outcome.failure
        assert failure is None or failure.kind == "malformed", failure  # the model's answer, not a bound's
        assert outcome.usage.calls == 1 and outcome.usage.failed_attempts == 0, outcome.usage
        assert outcome.usage.input_tokens > 1000 and outcome.raw_outputs, outcome.usage  # it read the prompt
