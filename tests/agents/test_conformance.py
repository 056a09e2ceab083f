"""Every server profile, through the real langchain-openai client: judges, reviser, streaming and not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agents.judges import JudgeRequest, LLMJudge
from agents.llm.client import LLMClient
from agents.llm.models import build_chat_model
from agents.reviser import LLMReviser, RevisionRequest
from agents.schemas import JudgeReply, Revision
from agents.simulator import Rule, SimulatorServer
from agents.simulator.profiles import PROFILE_NAMES, PROFILES, REASONING_TEXT
from tests.helpers.problems import ORCHESTRA
from tests.helpers.profiles import AZURE_ENV, profile_spec

Sim = Callable[..., SimulatorServer]
REQUEST = JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA)


@pytest.fixture
async def profiled(sim: Sim) -> Any:
    """``profiled(name, rules=..., **spec_fields)`` → (server, client) for that profile."""
    made: list[LLMClient] = []

    def make(name: str, rules: list[Rule] | None = None, **fields: Any) -> tuple[SimulatorServer, LLMClient]:
        server = sim(rules, profile=name)
        spec = profile_spec(server, name, **fields)
        made.append(LLMClient(spec, build_chat_model(spec, AZURE_ENV)))
        return server, made[-1]

    yield make
    for client in made:
        await client.aclose()


def reasons(profile: str, client: LLMClient) -> bool:
    """Whether the reply carries reasoning: a think tag lives in the content, which a constrained
    tool call (TGI's grammar mode) leaves no room for."""
    kind = PROFILES[profile].reasoning
    return kind != "none" and not (kind == "think_tag" and client.mode == "tool_calling")


@pytest.mark.parametrize("profile", PROFILE_NAMES)
@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_structured_output_through_every_profile(profile: str, streaming: bool, profiled: Any) -> None:
    server, client = profiled(profile, stream=streaming)  # whole: the non-streamed path, kept working
    text: list[str] = []
    thought: list[str] = []
    result = await client.structured(
        [*_messages()], JudgeReply, on_text=text.append if streaming else None, on_reasoning=thought.append
    )
    assert result.value is not None and result.value.score == 90, (result.error, result.raw_outputs)
    assert result.raw_outputs[-1].startswith("{")  # the answer alone: reasoning and prose are taken out
    if reasons(profile, client):
        assert result.reasoning == REASONING_TEXT == "".join(thought)
    else:
        assert result.reasoning == ""
    if streaming:
        assert text and text[-1] == result.raw_outputs[-1]
    if PROFILES[profile].usage != "never" and result.usage.calls == 1:
        # Usage counted once, whether the server sent it once, in every chunk or in a vendor field.
        assert result.usage.output_tokens == max(1, len(result.raw_outputs[-1]) // 4)
        assert result.usage.input_tokens > 0
    assert all(r.status == 200 or r.status in (400, 422) for r in server.state.requests)


@pytest.mark.parametrize("profile", PROFILE_NAMES)
async def test_judge_and_reviser_through_every_profile(profile: str, profiled: Any) -> None:
    _, client = profiled(profile)
    outcome = await LLMJudge(client).assess(REQUEST)
    assert isinstance(outcome.verdict, JudgeReply) and outcome.failure is None
    assert outcome.reasoning == (REASONING_TEXT if reasons(profile, client) else "")
    deltas: list[str] = []
    revision = await LLMReviser(client).revise(
        RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ()), deltas.append
    )
    assert revision.problem is not None and revision.problem.question.endswith("(revised 1)")
    assert "".join(deltas) == revision.thinking  # everything streamed live was stored, nothing else
    if reasons(profile, client):  # the model's own reasoning first, then its written thinking
        assert (
            revision.thinking.startswith(REASONING_TEXT) and "\n\nI read each reviewer" in revision.thinking
        )


@pytest.mark.parametrize(
    ("profile", "learned"),
    [
        ("anthropic", "json_schema ignored"),
        ("tgi", "json_schema refused with HTTP 422"),
        ("deepseek", "HTTP 400"),
    ],
)
async def test_a_server_that_refuses_or_ignores_json_schema_is_asked_once(
    profile: str, learned: str, profiled: Any
) -> None:
    server, client = profiled(profile)
    for _ in range(3):
        assert (await LLMJudge(client).assess(REQUEST)).verdict is not None
    assert client.mode == "tool_calling" and learned in client.learned[0] and len(client.learned) == 1
    asked = [r for r in server.state.requests if "response_format" in r.body]
    assert len(asked) == 1  # discovered once; every later call goes straight to tool calling


async def test_prompt_mode_when_tools_are_ignored_too(profiled: Any) -> None:
    server, client = profiled("anthropic", structured_output="tool_calling")
    server.state.configure(
        server.state.config.model_copy(update={"profile_overrides": {"json_schema": "ignored"}})
    )
    client.mode = "prompt"
    outcome = await LLMJudge(client).assess(REQUEST)
    assert outcome.verdict is not None
    body = server.state.requests[-1].body
    assert "tools" not in body and "response_format" not in body
    assert "matches this JSON schema (named JudgeVerdict)" in body["messages"][-1]["content"]


async def test_a_stream_without_role_is_assembled_as_the_assistant(sim: Sim, client: Any) -> None:
    sim(profile_overrides={"role": "none"})
    deltas: list[str] = []
    revision = await LLMReviser(client()).revise(
        RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ()), deltas.append
    )
    assert revision.problem is not None and revision.failure is None and deltas


async def test_a_non_streamed_reply_without_role_is_the_assistant(sim: Sim, client: Any) -> None:
    sim(profile_overrides={"role": "none"})
    assert (await LLMJudge(client(stream=False)).assess(REQUEST)).verdict is not None


async def test_a_stream_whose_first_chunk_has_no_choices(sim: Sim, client: Any) -> None:
    sim(profile_overrides={"first_frame_empty": True})
    deltas: list[str] = []
    revision = await LLMReviser(client()).revise(
        RevisionRequest(1, ORCHESTRA, ORCHESTRA, (), ()), deltas.append
    )
    assert revision.problem is not None and revision.usage.input_tokens > 0


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_a_reply_wrapped_in_think_tags(sim: Sim, client: Any, streaming: bool) -> None:
    sim(profile_overrides={"reasoning": "think_tag"}, chunk_chars=3)  # tags split across chunks
    thought: list[str] = []
    result = await client(stream=streaming).structured(
        _messages(),
        Revision if streaming else JudgeReply,
        on_text=(lambda _: None) if streaming else None,
        on_reasoning=thought.append,
    )
    assert result.value is not None and "".join(thought) == REASONING_TEXT
    assert "<think>" not in result.raw_outputs[-1] and result.raw_outputs[-1].startswith("{")


async def test_a_custom_reasoning_tag(sim: Sim, client: Any) -> None:
    sim(
        rules=[
            Rule(
                content="<reflect>first, the units</reflect>"
                '{"score": 90, "confidence": 80, "rationale": "ok"}'
            )
        ]
    )
    result = await client(reasoning_tag="reflect").structured(_messages(), JudgeReply)
    assert result.value is not None and result.reasoning == "first, the units"


async def test_reasoning_none_leaves_the_content_alone(sim: Sim, client: Any) -> None:
    sim(profile_overrides={"reasoning": "think_tag"})
    result = await client(reasoning="none", parse_retries=0).structured(_messages(), JudgeReply)
    assert result.reasoning == "" and result.raw_outputs[0].startswith("<think>")


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_an_error_in_a_200_is_an_endpoint_failure(sim: Sim, client: Any, streaming: bool) -> None:
    sim(rules=[Rule(error_in_200=True)])
    result = await client(max_retries=0, stream=streaming).structured(
        _messages(), JudgeReply, on_text=(lambda _: None) if streaming else None
    )
    assert result.value is None and result.failure is not None and result.failure.kind == "endpoint"
    assert "simulated upstream error" in result.failure.message


async def test_a_reply_cut_at_the_token_limit_says_so(sim: Sim, client: Any) -> None:
    sim(rules=[Rule(finish_length=True)])
    result = await client(parse_retries=0).structured(_messages(), JudgeReply)
    assert result.failure is not None and "finish_reason: length" in result.failure.message


@pytest.mark.parametrize("style", ["seconds", "http_date", "milliseconds", "absent"])
async def test_rate_limits_are_waited_out_whatever_the_retry_after(sim: Sim, client: Any, style: str) -> None:
    server = sim(rules=[Rule(status=429, retry_after=1, times=1)], profile_overrides={"retry_after": style})
    result = await client(max_retries=2).structured(_messages(), JudgeReply)
    assert result.value is not None and result.usage.retries == 1
    assert [r.status for r in server.state.requests] == [429, 200]


def _messages() -> list[Any]:
    from langchain_core.messages import HumanMessage, SystemMessage

    return [SystemMessage("# Judge: Apply\nJudge the problem."), HumanMessage("The problem.")]
