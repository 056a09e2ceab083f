"""`thinkloop simulate-llm`: the OpenAI-compatible simulator, for trying an integration offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.support import fail

if TYPE_CHECKING:
    from agents.simulator import SimConfig


def simulate_llm(
    host: Annotated[str, typer.Option(help="Loopback address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8099,
    latency: Annotated[float, typer.Option(min=0.0, help="Seconds added to every reply")] = 0.0,
    score: Annotated[int, typer.Option(min=0, max=100, help="Default judge score")] = 90,
    script: Annotated[Path | None, typer.Option(help="JSON file with a SimConfig (rules, gate...)")] = None,
    profile: Annotated[
        str, typer.Option(help="Answer as this server does: openai, vllm, ollama, llamacpp, tgi, azure, ...")
    ] = "openai",
    prompt_cache: Annotated[
        bool,
        typer.Option(
            help="Report cached prompt tokens as OpenAI's cache does: the longest prefix seen before, "
            "from 1,024 tokens on, in steps of 128"
        ),
    ] = False,
) -> None:
    """Serve the OpenAI-compatible simulator for testing an integration offline."""
    import uvicorn

    from agents.simulator import SimulatorState, create_simulator

    try:
        config = sim_config(script, latency_s=latency, default_score=score, profile=profile)
    except (OSError, ValueError) as exc:
        fail(f"cannot use the script: {exc}")
    if prompt_cache:
        from agents.simulator.cache import with_prompt_cache

        config = with_prompt_cache(config)
    server = config.server
    where = f"http://{host}:{port}" + ("/openai/deployments/<name>" if server.azure else "/v1")
    typer.echo(f"OpenAI-compatible simulator answering as {server.server} on {where} (control: /_sim)")
    uvicorn.run(create_simulator(SimulatorState(config)), host=host, port=port, log_level="warning")


def sim_config(script: Path | None, **settings: object) -> SimConfig:
    """The simulator's configuration: ``settings``, and over them the script's (a SimConfig as JSON)."""
    from agents.simulator import SimConfig

    raw = json.loads(script.read_text("utf-8")) if script else {}
    return SimConfig.model_validate({**settings, **raw})
