"""``thinkloop models check`` predicts the run against llama-server (issue 53): a server whose slots
cannot hold a judge's prompt and its max_tokens fails the check, and the server refuses that prompt."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agents.fit import request_body
from agents.realmodel import GEMMA_FILE, MODEL_ID, NAME, ServerOptions, prepared, start_server
from tests.helpers.realmodel import RealModel, Result

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(900)]


def test_models_check_fails_against_slots_too_small(thinkloop: Any, tmp_path: Path) -> None:
    small = ServerOptions(parallel=2, context=2048)  # 1,024 tokens a slot: less than a judge's prompt
    with start_server(*prepared(), tmp_path / "small-server", small) as server:
        models = tmp_path / "small.toml"
        models.write_text(RealModel(server.url).models_toml(), "utf-8")
        done: Result = thinkloop("models", "check", NAME, "--json", models=models)
        text: Result = thinkloop("models", "check", NAME, models=models)
        refused = _judge_call(server.url)
    assert done.code == 1 and text.code == 1, done.out + done.err
    found = json.loads(done.out)
    assert (found["slots"], found["context_per_slot"], found["fits"]) == (2, 1024, False), found
    assert found["reported_model"] == MODEL_ID and found["model_file"]["name"] == GEMMA_FILE
    assert found["model_file"]["size_bytes"] > 0 and found["model_file"]["parameters"] > 0
    assert {fit["counted"] for fit in found["judge_prompts"]} == {"server /apply-template and /tokenize"}
    over = [fit for fit in found["judge_prompts"] if fit["prompt_tokens"] + fit["max_tokens"] > 1024]
    assert over and len(found["problems"]) == len(over)
    for fit in over:  # each failing judge is named with its tokens, its max_tokens and the slot
        line = f"FAILS: the {fit['judge']} judge's prompt for a long problem ({fit['prompt_tokens']:,} tokens"
        assert line in text.out and f"its max_tokens ({fit['max_tokens']:,})" in text.out
    assert "a slot of the server holds 1,024" in text.out
    # The prediction is the server's: the longest judge prompt, sent as a run sends it, is refused.
    longest = max(found["judge_prompts"], key=lambda fit: fit["prompt_tokens"])
    assert longest["prompt_tokens"] >= 1024, longest
    assert refused[0] == 400 and "exceeds the available context size" in refused[1], refused


def _judge_call(url: str) -> tuple[int, str]:
    """The holistic judge's request for the long problem, straight to the server: its status and body."""
    body = request_body("holistic", "json_schema") | {"model": MODEL_ID, "max_tokens": 8}
    request = urllib.request.Request(
        f"{url}/v1/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode()
