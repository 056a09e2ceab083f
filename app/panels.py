"""How every entry point gets its model panels: the API, `batch run`, workers and the one-shot
commands (`refine`, `models check`, `judges validate`) build them here, and nowhere else."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from agents.llm.models import ModelRegistry
from app.settings import Settings

if TYPE_CHECKING:  # the client stack loads only when panels are built (`thinkloop models` builds none)
    from agents.identity import Warrants
    from agents.llm.client import ResponseCache
    from agents.panel import Panel, PanelFactory
    from app.access.metering import Meter
    from graphs.context import RunContext
    from graphs.escalation import Guarantee
    from graphs.scoring import ScoringPolicy


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


def build_context(
    factory: PanelFactory,
    judge_model: str,
    model: str,
    policy: ScoringPolicy,
    *,
    cache: ResponseCache | None = None,
    meter: Meter | None = None,
    warrants: Warrants | None = None,
    guarantee: Guarantee | None = None,
    panel: Panel | None = None,
) -> RunContext:
    """What a run depends on: ``judge_model``'s panel with ``model`` under test (its calls tallied
    or reserved by ``meter``), its policy, the warrants its panel may cite and its guarantee. The
    service's runs, `refine` and the validity bench each build their context here. ``panel``: the
    panel built already (by a caller that checks its models before any lookup)."""
    from app.access.metering import metered
    from graphs.context import RunContext

    panel = panel or factory.build(judge_model, model, cache)
    if meter is not None:
        panel = metered(panel, meter)
    return RunContext.of(panel, policy, warrants=warrants, guarantee=guarantee)
