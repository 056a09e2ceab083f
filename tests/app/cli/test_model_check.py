"""`thinkloop models check` predicts the run (issue 53): the slot context, the judges' real prompts
counted by the server, the model file, the prompt rate and every bound, in text and JSON alike."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agents.fit import LONG_PROBLEM
from agents.judges import JudgeRequest, LLMJudge
from agents.llm.client import LLMClient
from agents.llm.models import ModelSpec, build_chat_model
from agents.simulator import Rule, SimConfig, SimulatorServer
from agents.simulator.rules import ModelFile
from app.cli import cli

runner = CliRunner()
GEMMA = ModelFile(path="/models/gemma-3-270m-q4_k_m.gguf", size=253_115_712, n_params=268_098_176)


def _llama(server: SimulatorServer, context: int, rules: list[Rule] | None = None) -> None:
    """The simulator as llama-server with two slots of ``context`` tokens, serving Gemma's file."""
    overrides = {"reported_model": "gemma-3-270m"}
    config = SimConfig(
        slots=2,
        context=context,
        profile="llamacpp",
        profile_overrides=overrides,
        model_file=GEMMA,
        rules=rules or [],
    )
    server.state.configure(config)


def _check(tmp_path: Path, server: SimulatorServer, *args: str, **fields: Any) -> Any:
    entry = {"model": "gemma-3-270m", "base_url": server.base_url, "max_retries": 2} | fields
    lines = ["[models.local]"] + [f"{k} = {json.dumps(v)}" for k, v in entry.items()]
    config = tmp_path / "models.toml"
    config.write_text("\n".join(lines) + "\n[models.local.max_tokens]\njudge = 400\n")
    return runner.invoke(cli, ["models", "check", "local", "--models-file", str(config), *args])


def test_check_fails_when_a_judge_prompt_and_its_max_tokens_do_not_fit_a_slot(
    tmp_path: Path, simulator_server: SimulatorServer
) -> None:
    _llama(simulator_server, context=1024)
    result = _check(tmp_path, simulator_server)
    assert result.exit_code == 1, result.output
    failures = [line for line in result.output.splitlines() if line.startswith("FAILS: ")]
    assert len(failures) == 7  # every judge, each named with its tokens, its max_tokens and the slot
    holistic = next(line for line in failures if "the holistic judge's prompt" in line)
    assert "counted by server /apply-template and /tokenize" in holistic
    assert "its max_tokens (400)" in holistic and "a slot of the server holds 1,024" in holistic
    found = json.loads(_check(tmp_path, simulator_server, "--json").stdout)
    assert found["fits"] is False and found["context_per_slot"] == 1024
    tokens = {fit["judge"]: fit["prompt_tokens"] for fit in found["judge_prompts"]}
    assert f"({tokens['holistic']:,} tokens" in holistic
    # The prediction is the run's: the same judge call against the same server is refused.
    outcome = asyncio.run(
        _judge(ModelSpec(name="local", model="gemma-3-270m", base_url=simulator_server.base_url))
    )
    assert outcome.failure is not None and "exceeds the available context size" in outcome.failure.message


async def _judge(spec: ModelSpec) -> Any:
    """The holistic judge's verdict on the long problem, against the version it revises."""
    client = LLMClient(spec, build_chat_model(spec, {}))
    try:
        return await LLMJudge(client).assess(JudgeRequest("holistic", 2, LONG_PROBLEM, LONG_PROBLEM))
    finally:
        await client.aclose()


def test_check_passes_when_the_slots_hold_the_judges(
    tmp_path: Path, simulator_server: SimulatorServer
) -> None:
    _llama(simulator_server, context=8192)
    result = _check(tmp_path, simulator_server)
    assert result.exit_code == 0, result.output
    assert "FAILS" not in result.output and result.output.count(": fits") == 7


def test_check_reports_every_field_in_text_and_json_alike(
    tmp_path: Path, simulator_server: SimulatorServer
) -> None:
    _llama(simulator_server, context=8192, rules=[Rule(role="^Judge", timings_prompt_ms=2000)])
    bounds = {"timeout_s": 30, "queue_timeout_s": 120, "token_gap_timeout_s": 15, "total_timeout_s": 900}
    text = _check(tmp_path, simulator_server, **bounds).output
    found = json.loads(_check(tmp_path, simulator_server, "--json", **bounds).stdout)
    assert (found["slots"], found["context_per_slot"], found["max_concurrency"]) == (2, 8192, 2)
    assert "server slots     2 (GET /props); at most 2 calls at once" in text
    assert "context per slot 8,192 tokens" in text
    assert found["reported_model"] == found["listed_model"] == "gemma-3-270m"
    assert "reported model   gemma-3-270m" in text and "listed model     gemma-3-270m" in text
    assert found["model_file"] == {
        "name": "gemma-3-270m-q4_k_m.gguf",
        "size_bytes": 253_115_712,
        "parameters": 268_098_176,
        "context_train": 32_768,
    }
    assert (
        "model file       gemma-3-270m-q4_k_m.gguf, 253,115,712 bytes, 268,098,176 parameters, "
        "trained with a context of 32,768 tokens"
    ) in text
    assert found["identity"].startswith("gemma-3-270m [file gemma-3-270m-q4_k_m.gguf, 253115712 bytes")
    assert f"panel identity   {found['identity']} " in text
    # The prompt rate: the server's timings for the longest judge prompt, read once.
    assert found["prompt_rate_from"] == "the server's timings" and found["prompt_rate_tokens_per_s"] > 0
    assert (
        f"prompt rate      {found['prompt_rate_tokens_per_s']:g} prompt tokens/s (the server's timings)"
        in text
    )
    for fit in found["judge_prompts"]:
        assert f"    {fit['judge']:<11}{fit['prompt_tokens']:>6,} + max_tokens 400 = " in text
    assert found["max_tokens"] == {"judge": 400, "solver": 500, "reviser": 2000, "probe": 64}
    assert "max_tokens       judge 400, solver 500, reviser 2000, probe 64" in text
    timeouts = found["timeouts"]
    assert (timeouts["timeout_s"], timeouts["connect_timeout_s"], timeouts["queue_timeout_s"]) == (
        30,
        30,
        120,
    )
    assert (timeouts["token_gap_timeout_s"], timeouts["total_timeout_s"]) == (15, 900)
    first = timeouts["first_token_longest_judge_prompt_s"]
    assert first is not None and first >= 120
    assert (
        f"timeouts         connect 30 s, first token at least 120 s ({first:g} s for the longest judge "
        "prompt), token gap 15 s, total 900 s, other requests 30 s"
    ) in text


def test_a_server_without_a_tokenizer_gets_estimated_counts(
    tmp_path: Path, simulator_server: SimulatorServer
) -> None:
    simulator_server.state.configure(SimConfig(profile="vllm"))
    found = json.loads(_check(tmp_path, simulator_server, "--json").stdout)
    assert {fit["counted"] for fit in found["judge_prompts"]} == {"estimated"}
    assert found["context_per_slot"] == 8192  # vLLM's max_model_len (the simulator's context)
    assert found["model_file"]["name"] == "sim"  # vLLM's root


def test_a_deterministic_error_on_a_probe_is_sent_once(
    tmp_path: Path, simulator_server: SimulatorServer
) -> None:
    simulator_server.state.configure(SimConfig(rules=[Rule(contains="What is 2 + 3", status=500)]))
    result = _check(tmp_path, simulator_server)  # max_retries = 2: the SDK would have sent each 3 times
    assert result.exit_code == 1
    assert [r.status for r in simulator_server.state.requests] == [500, 500, 500]  # one per probe


def test_a_busy_server_is_asked_again(tmp_path: Path, simulator_server: SimulatorServer) -> None:
    simulator_server.state.configure(SimConfig(rules=[Rule(contains="What is 2 + 3", status=503, times=1)]))
    found = json.loads(_check(tmp_path, simulator_server, "--json").stdout)
    assert found["json_schema"] == "supported"
    assert [r.status for r in simulator_server.state.requests][:2] == [503, 200]
