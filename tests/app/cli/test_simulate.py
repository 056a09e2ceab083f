"""`thinkloop simulate-llm` serves the simulator as a process a user's own client can call."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langchain_openai import ChatOpenAI
from typer.testing import CliRunner

from app.cli import cli


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(*args: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start `thinkloop simulate-llm` and wait until it answers (however long a busy machine takes)."""
    port = free_port()
    cmd = [sys.executable, "-m", "app", "simulate-llm", "--port", str(port), *args]
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300  # a hang guard, not a timing check: it returns as soon as it answers
    while time.monotonic() < deadline and process.poll() is None:
        try:
            httpx.get(f"{base}/models", timeout=2)
            return process, base
        except httpx.TransportError:
            time.sleep(0.1)
    process.terminate()
    raise AssertionError("the simulator did not start")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    script = tmp_path / "script.json"
    script.write_text('{"rules": [{"role": "Judge", "score": 42}]}')
    process, base = serve("--script", str(script))
    try:
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_served_simulator_answers_chat_openai(served: str) -> None:
    chat = ChatOpenAI(model="any", base_url=served, api_key="x", max_retries=0)
    fmt = {
        "type": "json_schema",
        "json_schema": {
            "name": "V",
            "schema": {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]},
        },
    }
    reply = chat.bind(response_format=fmt).invoke([("system", "# Judge: Apply"), ("user", "hi")])
    assert reply.text == '{"score": 42}'
    log = httpx.get(served.removesuffix("/v1") + "/_sim").json()
    assert log[0]["role"] == "Judge: Apply"


def test_bad_script_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text('{"rules": [{"status": 200}]}')
    result = CliRunner().invoke(cli, ["simulate-llm", "--script", str(script)])
    assert result.exit_code == 2 and "cannot use the script" in result.output


def test_a_profile_answers_as_its_server_does() -> None:
    process, base = serve("--profile", "tgi")
    try:
        body = {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "V", "schema": {}}},
        }
        refused = httpx.post(f"{base}/chat/completions", json=body, timeout=30)
        assert refused.status_code == 422 and "missing field `value`" in refused.json()["error"]
        streamed = httpx.post(
            f"{base}/chat/completions",
            json={"model": "m", "messages": body["messages"], "stream": True},
            timeout=30,
        ).text
        assert (
            streamed.startswith(":\n\n") and streamed.count('"role": "assistant"') > 2
        )  # role in every chunk
        assert "<think>" in streamed
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_an_unknown_profile_is_refused() -> None:
    result = CliRunner().invoke(cli, ["simulate-llm", "--profile", "nope"])
    assert result.exit_code == 2 and "unknown profile 'nope'" in result.output


def test_the_prompt_cache_flag_reports_openais_cached_tokens() -> None:
    """`--prompt-cache`: the second of two prompts that share 1,200 tokens (four characters each)
    is told 1,152 of them were cached (from 1,024 on, in steps of 128); the first, none."""
    process, base = serve("--prompt-cache")
    shared = "x" * (4 * 1200)
    try:
        usages = [
            httpx.post(
                f"{base}/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": shared + tail}]},
                timeout=30,
            ).json()["usage"]
            for tail in ("first", "second")
        ]
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert [u["prompt_tokens_details"]["cached_tokens"] for u in usages] == [0, 1152]
