"""The identity of the weights (issue 53): where a server exposes the model file it serves
(llama.cpp's /props model_path and /v1/models meta, vLLM's /v1/models root), the file joins the
reported model id a panel identity holds, so another file behind the same alias has no warrant."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents.identity import panel_identity
from agents.judges import JudgeRequest, LLMJudge
from agents.llm.client import LLMClient
from agents.llm.models import ModelSpec, build_chat_model
from agents.simulator import SimConfig, SimulatorServer
from agents.simulator.rules import ModelFile
from graphs.scoring import get_policy
from tests.helpers.problems import ORCHESTRA

ALIAS = "gemma"  # what both servers answer every request with (llama-server's --alias)
Q4 = ModelFile(path="/models/gemma-3-270m-q4_k_m.gguf", size=253_115_712, n_params=268_098_176)
Q8 = ModelFile(path="/models/gemma-3-270m-q8_0.gguf", size=291_545_088, n_params=268_098_176)


def _server(model_file: ModelFile, profile: str = "llamacpp") -> SimulatorServer:
    slots = 2 if profile == "llamacpp" else 0
    overrides = {"reported_model": ALIAS}
    return SimulatorServer(
        SimConfig(slots=slots, profile=profile, profile_overrides=overrides, model_file=model_file)
    )


@pytest.fixture
def servers() -> Iterator[tuple[SimulatorServer, SimulatorServer, SimulatorServer]]:
    """Two llama-servers with one alias and different files, and a third with the first's file."""
    first, second, third = _server(Q4), _server(Q8), _server(Q4)
    with first.running(), second.running(), third.running():
        yield first, second, third


async def _reported(server: SimulatorServer) -> str | None:
    """The model id a judge's call reports against ``server`` (as a run's round records it)."""
    spec = ModelSpec(name="judge", model=ALIAS, base_url=server.base_url, max_concurrency=4)
    client = LLMClient(spec, build_chat_model(spec, {}))
    try:
        outcome = await LLMJudge(client).assess(JudgeRequest("apply", 1, ORCHESTRA, None))
    finally:
        await client.aclose()
    assert outcome.verdict is not None
    return outcome.reported_model


def _identity(server: SimulatorServer, reported: str | None) -> str:
    spec = ModelSpec(name="judge", model=ALIAS, base_url="http://127.0.0.1:8080/v1")  # one endpoint for both
    return panel_identity(
        "judge", spec, get_policy("default"), "test", decision="d", reported_model=reported
    ).id


async def test_two_files_behind_one_alias_are_two_panels(
    servers: tuple[SimulatorServer, SimulatorServer, SimulatorServer],
) -> None:
    first, second, third = servers
    q4, q8, q4_again = [await _reported(server) for server in servers]
    assert q4 == "gemma [file gemma-3-270m-q4_k_m.gguf, 253115712 bytes, 268098176 parameters]"
    assert q8 is not None and q8.startswith("gemma [file gemma-3-270m-q8_0.gguf, 291545088 bytes")
    assert _identity(first, q4) != _identity(second, q8)  # a record of one warrants nothing of the other
    assert _identity(first, q4) == _identity(third, q4_again)  # the same file: the same panel


async def test_vllm_names_its_weights_in_the_model_root() -> None:
    with _server(ModelFile(path="/models/Qwen3-8B-AWQ"), "vllm").running() as awq:
        quantised = await _reported(awq)
    with _server(ModelFile(path="Qwen/Qwen3-8B"), "vllm").running() as full:
        original = await _reported(full)
    assert (quantised, original) == ("gemma [file /models/Qwen3-8B-AWQ]", "gemma [file Qwen/Qwen3-8B]")


async def test_a_server_that_exposes_no_file_reports_its_id_alone() -> None:
    with SimulatorServer(SimConfig(profile_overrides={"reported_model": ALIAS})).running() as plain:
        assert await _reported(plain) == ALIAS
