"""How every entry point gets its model panels: the API, `batch run`, workers and the one-shot
commands (`refine`, `models check`, `judges validate`) build them here, and nowhere else."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from agents.llm.models import ModelRegistry
from app.settings import Settings

if TYPE_CHECKING:  # the client stack loads only when panels are built (`thinkloop models` builds none)
    from agents.panel import PanelFactory


def load_registry(settings: Settings, models_file: Path | None = None) -> ModelRegistry:
    """The model registry: the TOML file (``models_file`` over the setting) and THINKLOOP_MODELS__*.
    Raises ModelConfigError for a registry that cannot be used."""
    return ModelRegistry.from_sources(models_file or settings.models_file, settings.models)


def panel_factory(settings: Settings, registry: ModelRegistry) -> PanelFactory:
    """Clients for the registry's models. Provider limits live where the settings say (Redis when
    configured), so a one-shot command on a deployment's machine stays inside the same limits as
    its API and workers."""
    from agents.llm.ratelimit import LimitStore
    from agents.panel import PanelFactory

    return PanelFactory(registry, os.environ, LimitStore(settings.shared_limits_url()))
