"""Provider profiles: the simulator as a model entry answering as each provider."""

from __future__ import annotations

from typing import Any

from agents.llm.models import ModelSpec
from agents.simulator import SimulatorServer
from agents.simulator.profiles import PROFILES

AZURE_ENV = {"AZURE_KEY": "az-test-key"}


def profile_spec(server: SimulatorServer, profile: str, **fields: Any) -> ModelSpec:
    """A model entry for the simulator answering as ``profile`` (Azure: the deployment URL form)."""
    values: dict[str, Any] = {"name": "sim", "model": "sim-1", "timeout_s": 5.0, "max_retries": 1}
    if PROFILES[profile].azure:
        root = server.base_url.removesuffix("/v1")
        values |= {"provider": "azure", "base_url": root, "deployment": "dep", "api_version": "2024-10-21"}
        values |= {"api_key_env": "AZURE_KEY"}
    else:
        values["base_url"] = server.base_url
    return ModelSpec(**(values | fields))
