"""Judges reason before they score: the schema's field order, the anchored prompts, their versions."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from agents.judges import JudgeRequest, LLMJudge
from agents.llm.client import LLMClient
from agents.llm.structured import bind, instructions, llm_schema, schema_name
from agents.schemas import JUDGES, HolisticReply, JudgeName, JudgeReply
from agents.simulator import Rule, SimulatorServer
from prompts import load_prompt
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]

# The versions of the judge prompts before they reasoned first (issue 13): none may come back.
PREVIOUS_VERSIONS = {
    "judge_remember@3033474189c0",
    "judge_understand@c29d98c36d16",
    "judge_apply@1e182af6d436",
    "judge_analyze@f3d5296dcd66",
    "judge_evaluate@2fffbb1a5b91",
    "judge_create@4d8502102592",
    "judge_holistic@27abcb0c87b9",
}


@pytest.mark.parametrize("judge", ["apply", "holistic"])
async def test_the_model_is_asked_for_its_answer_and_reasons_before_the_score(
    judge: JudgeName, sim: Sim, client: Callable[..., LLMClient]
) -> None:
    server = sim([Rule(role="^Judge", answer="40 minutes")])
    outcome = await LLMJudge(client()).assess(JudgeRequest(judge, 1, ORCHESTRA, ORCHESTRA))
    schema = server.state.requests[0].body["response_format"]["json_schema"]["schema"]
    fields = list(schema["properties"])
    assert fields[:4] == ["own_answer", "rationale", "score", "confidence"]
    assert schema["required"] == fields  # strict mode: a field with a default is still required
    assert outcome.verdict is not None and outcome.verdict.own_answer == "40 minutes"


def test_every_field_is_required_in_every_schema_sent() -> None:
    keys = llm_schema(HolisticReply)["$defs"]["FiveKeys"]
    assert keys["required"] == list(keys["properties"])
    assert llm_schema(JudgeReply)["required"] == ["own_answer", "rationale", "score", "confidence"]


async def test_what_models_are_told_does_not_depend_on_the_class_names(
    client: Callable[..., LLMClient],
) -> None:
    """The replies' names to models are pinned (their schemas' titles), apart from the classes' own
    names: a class renamed leaves every request, prompt and response-cache key byte-identical."""
    assert (schema_name(JudgeReply), schema_name(HolisticReply)) == ("JudgeVerdict", "HolisticVerdict")
    llm = client()
    messages = [SystemMessage("rules"), HumanMessage("data")]
    for schema in (JudgeReply, HolisticReply):
        renamed = type("Renamed", (schema,), {"__doc__": schema.__doc__, "__module__": schema.__module__})
        assert schema_name(renamed) == schema_name(schema) == schema.model_json_schema()["title"]
        assert llm_schema(renamed) == llm_schema(schema) and instructions(renamed) == instructions(schema)
        assert llm.cache_key(messages, renamed) == llm.cache_key(messages, schema)
        for mode in ("json_schema", "tool_calling"):
            assert bind(llm.chat, renamed, mode).kwargs == bind(llm.chat, schema, mode).kwargs


def test_the_offline_panel_still_builds_a_verdict_without_an_answer() -> None:
    verdict = JudgeReply(rationale="Sound.", score=90, confidence=80)
    assert verdict.own_answer == ""


@pytest.mark.parametrize("judge", JUDGES)
def test_each_prompt_anchors_its_scale_and_solves_first(judge: JudgeName) -> None:
    text = load_prompt(f"judge_{judge}").text
    for mark in ("100", "85", "50", "0"):
        assert f"\n- {mark}: " in text, mark
    assert "Solve it yourself first" in text and "`own_answer`" in text
    assert text.index("own_answer") < text.index("`score`")
    assert "## Rules for the data you receive" in text


@pytest.mark.parametrize("judge", JUDGES)
def test_each_prompt_says_wording_does_not_repair_mathematics(judge: JudgeName) -> None:
    text = " ".join(load_prompt(f"judge_{judge}").text.split())
    assert "earns nothing by itself" in text
    for padding in ('"explain why"', '"in general"', '"Let x be ..."', "alternative values", "Bloom verbs"):
        assert padding in text, padding
    assert "scores below 50 at every level, however rich or polished its wording" in text


def test_create_and_five_keys_no_longer_reward_additions() -> None:
    create = " ".join(load_prompt("judge_create").text.split())
    holistic = " ".join(load_prompt("judge_holistic").text.split())
    assert "invite a general method" not in create  # what the previous prompt rewarded
    assert "Adding such a part is not creative in itself" in create
    assert "do not reward a problem for listing values" in holistic
    assert "never propose added vocabulary, an added equation or a list of alternative values" in holistic


def test_five_keys_cover_language_complexity_for_the_grade() -> None:
    holistic = " ".join(load_prompt("judge_holistic").text.split())
    for key in ("`concepts`", "`prerequisites`", "`representations`", "`alternative_values`", "`narrative`"):
        assert key in holistic
    assert "vocabulary and sentence structure" in holistic and "grade" in holistic


def test_prompt_versions_changed_with_their_text() -> None:
    versions = {load_prompt(f"judge_{judge}").version for judge in JUDGES}
    assert len(versions) == len(JUDGES) and not versions & PREVIOUS_VERSIONS
