"""The thinkloop command: the main job offline, machine output, and clear refusals of bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.simulator import Rule, SimulatorServer
from app.cli import cli

runner = CliRunner()


def test_main_job_refines_orchestra_offline() -> None:
    result = runner.invoke(cli, ["refine", "--example", "orchestra"])
    assert result.exit_code == 0, result.output
    for text in ("Round 1 verdicts", "Round 2 verdicts", "thinking aloud", "Revision proposed"):
        assert text in result.output
    # The offline panel screens: its pass is "screened", never an acceptance.
    assert "outcome screened" in result.output  # its reason wraps with the terminal's width
    assert "outcome accepted" not in result.output and "RoundsToPass (screen) 2" in result.output


def test_json_output_is_the_full_result() -> None:
    result = runner.invoke(cli, ["refine", "--example", "bakery", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["outcome"] == "screened" and len(data["rounds"]) == 2
    assert "144" in data["final"]["solution"]
    assert data["rounds"][0]["outcomes"][0]["prompt_version"].startswith("rubric@")


def test_question_flags_and_stdin() -> None:
    by_flag = runner.invoke(
        cli, ["refine", "--question", "What is 2 + 2?", "--solution", "2 + 2 = 4", "--json"]
    )
    by_stdin = runner.invoke(
        cli, ["refine", "-", "--json"], input='{"question": "What is 2 + 2?", "solution": "2 + 2 = 4"}'
    )
    assert by_flag.exit_code == by_stdin.exit_code == 0
    assert json.loads(by_flag.output)["original"] == json.loads(by_stdin.output)["original"]


def test_paper_policy_and_max_rounds_options() -> None:
    result = runner.invoke(
        cli, ["refine", "--example", "orchestra", "--policy", "think-paper", "--max-rounds", "1", "--json"]
    )
    data = json.loads(result.output)
    assert data["policy"] == "think-paper" and data["outcome"] == "exhausted" and len(data["rounds"]) == 1


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["refine", "-"], '{"question": "   "}', "the question is empty"),
        (["refine", "-"], "{not json", "invalid JSON at line 1"),
        (["refine", "-"], "[1, 2]", "expected a JSON object"),
        (["refine", "--question", "x" * 8001], None, "longer than 8000 characters"),
        (["refine", "-"], '{"question": "' + "y" * 70_000 + '"}', "larger than 64 KiB"),
        (["refine", "--example", "orchestra", "--model", "gpt-9"], None, "unknown model 'gpt-9'"),
        (["refine", "--example", "orchestra", "--judge-model", "nope"], None, "unknown model 'nope'"),
        (["refine", "--example", "orchestra", "--policy", "strict"], None, "unknown scoring policy"),
        (["refine", "--example", "nope"], None, "unknown example"),
        (["refine", "missing.json"], None, "cannot read missing.json"),
        (["refine"], None, "give exactly one of"),
    ],
)
def test_bad_input_is_refused_with_a_message(args: list[str], stdin: str | None, message: str) -> None:
    result = runner.invoke(cli, args, input=stdin)
    assert result.exit_code == 2
    assert message in result.output.replace("\n", "")


def test_bad_model_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "models.toml"
    config.write_text('[models.local]\nmodel = "m"\nmax_concurrency = 0\n')
    result = runner.invoke(cli, ["refine", "--example", "orchestra", "--models-file", str(config)])
    assert result.exit_code == 2 and "invalid model configuration" in result.output


def test_refine_with_configured_endpoints(
    tmp_path: Path, sim: Callable[..., SimulatorServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = sim([Rule(role="^Judge", score=40, times=7)])
    config = tmp_path / "models.toml"
    config.write_text(
        f'[models.judge]\nmodel = "j"\nbase_url = "{server.base_url}"\napi_key_env = "SIM_KEY"\n'
        f'[models.student]\nmodel = "s"\nbase_url = "{server.base_url}"\n'
    )
    monkeypatch.setenv("SIM_KEY", "sk-test")
    args = [
        "refine",
        "--example",
        "orchestra",
        "--models-file",
        str(config),
        "--judge-model",
        "judge",
        "--model",
        "student",
        "--json",
    ]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["outcome"] == "accepted"
    assert {o["model"] for o in data["rounds"][0]["outcomes"]} == {"judge"}
    assert data["revisions"][0]["model"] == "student"
    assert {r.body["model"] for r in server.state.requests} == {"j", "s"}


def test_missing_api_key_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ABSENT_KEY", raising=False)
    config = tmp_path / "models.toml"
    config.write_text(
        '[models.remote]\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "ABSENT_KEY"\n'
    )
    result = runner.invoke(
        cli, ["refine", "--example", "orchestra", "--models-file", str(config), "--model", "remote"]
    )
    assert result.exit_code == 2 and "$ABSENT_KEY is not set" in result.output


def test_models_lists_registry_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKLOOP_MODELS__LOCAL__MODEL", "qwen2.5:7b")
    monkeypatch.setenv("THINKLOOP_MODELS__LOCAL__BASE_URL", "http://127.0.0.1:11434/v1")
    result = runner.invoke(cli, ["models"])
    assert result.exit_code == 0
    assert "rubric\toffline rubric panel" in result.output
    assert "local\tqwen2.5:7b @ http://127.0.0.1:11434/v1" in result.output


def test_failing_judges_end_in_error_with_the_cause(
    tmp_path: Path, sim: Callable[..., SimulatorServer]
) -> None:
    server = sim([Rule(role="^Judge", status=401)])
    config = tmp_path / "models.toml"
    config.write_text(f'[models.judge]\nmodel = "j"\nbase_url = "{server.base_url}"\nmax_retries = 0\n')
    args = ["refine", "--example", "orchestra", "--models-file", str(config), "--judge-model", "judge"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1  # no verdict: scripts must not read one
    flat = " ".join(result.output.split())
    assert "failed" in flat and "HTTP 401" in flat and "judge @ 127.0.0.1" in flat
    assert "outcome error" in flat and "Not scored" in flat and "Traceback" not in result.output


def test_error_text_with_brackets_is_shown_verbatim(tmp_path: Path) -> None:
    config = tmp_path / "models.toml"
    config.write_text("models = 3\n")
    result = runner.invoke(cli, ["models", "--models-file", str(config)])
    assert result.exit_code == 2 and "[models] must be a table of tables" in result.output
