"""Service and CLI settings from the environment (prefix THINKLOOP_) and an optional .env file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every knob; ``THINKLOOP_MODELS__<NAME>__BASE_URL=...`` adds or overrides a model entry."""

    model_config = SettingsConfigDict(
        env_prefix="THINKLOOP_", env_nested_delimiter="__", env_file=".env", extra="ignore"
    )

    models_file: Path | None = Field(default=None, description="TOML file with [models.<name>] tables")
    models: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Model entries from env")
    model: str = Field(default="rubric", description="Default model under test")
    judge_model: str = Field(default="rubric", description="Default judge model")
    policy: str = Field(default="default", description="Default scoring policy")
    log_level: str = Field(default="WARNING")
    log_json: bool = Field(default=False)


def get_settings() -> Settings:
    """Read the settings now (never cached at import time)."""
    return Settings()
