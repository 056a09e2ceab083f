"""A batch's manifest: what it was run with, recorded when it is created, so a report or an export
can be reproduced (or at least explained) later.

Recorded at creation: thinkloop's version and git revision; the dataset's name and content hash;
each model's endpoint host, provider model id, temperature, seed and structured-output mode (as
the registry said then: a registry edited later does not rewrite it); the prompt versions; the
policy with every parameter; the design (rounds, repeats, arms, cache, budgets). A report or an
export completes it with start and end times and cache hits (``app/reporting/manifest.py``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from agents.llm.models import ModelRegistry, UnknownModelError
from app.models import Dataset, DatasetItem, ProblemRow, utcnow
from app.version import git_revision, version
from graphs.scoring import get_policy
from prompts import PROMPT_NAMES, load_prompt

MANIFEST_VERSION = 1


async def dataset_hash(session: AsyncSession, dataset_id: str) -> str:
    """sha256 over the dataset's rows in order: each row's id, its problem's content hash (the
    whitespace-normalised question and solution) and its metadata. The same file uploaded twice
    has the same hash; any change to a row's text, order, id or metadata changes it."""
    query = (
        select(col(DatasetItem.external_id), col(ProblemRow.content_hash), col(DatasetItem.meta))
        .join(ProblemRow, col(ProblemRow.id) == col(DatasetItem.problem_id))
        .where(col(DatasetItem.dataset_id) == dataset_id)
        .order_by(col(DatasetItem.position))
    )
    digest = hashlib.sha256()
    for external_id, content, meta in (await session.execute(query)).all():
        digest.update(json.dumps([external_id, content, meta], sort_keys=True, default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def model_entry(registry: ModelRegistry, name: str, roles: Sequence[str]) -> dict[str, Any]:
    """What one model was, as the registry describes it (the offline panel has no endpoint)."""
    try:
        spec = registry.get(name)
    except UnknownModelError:
        return {"name": name, "roles": list(roles), "known": False}
    if spec is None:
        return {"name": name, "roles": list(roles), "offline": True, "provider_model_id": name}
    return {
        "name": name,
        "roles": list(roles),
        "offline": False,
        "provider": spec.provider,
        "endpoint_host": urlsplit(spec.base_url).netloc if spec.base_url else "api.openai.com",
        "provider_model_id": spec.model,
        "temperature": spec.temperature,
        "seed": spec.seed,
        "structured_output": spec.structured_output,
    }


class Layout(Protocol):
    """What a manifest reads of a batch or of the spec it is created from."""

    @property
    def dataset_id(self) -> str: ...
    @property
    def models(self) -> list[str]: ...
    @property
    def judge_model(self) -> str: ...
    @property
    def policy(self) -> str: ...
    @property
    def max_rounds(self) -> int: ...
    @property
    def repeats(self) -> int: ...
    @property
    def control_arm(self) -> bool: ...
    @property
    def use_cache(self) -> bool: ...
    @property
    def budget_tokens(self) -> int | None: ...
    @property
    def budget_usd(self) -> float | None: ...


async def build_manifest(session: AsyncSession, registry: ModelRegistry, spec: Layout) -> dict[str, Any]:
    """The manifest of a batch about to be created (everything but its times and cache hits)."""
    dataset_id, models, judge_model, policy = spec.dataset_id, spec.models, spec.judge_model, spec.policy
    dataset = await session.get(Dataset, dataset_id)
    roles: dict[str, list[str]] = {}
    for name in models:
        roles.setdefault(name, []).append("under_test")
    roles.setdefault(judge_model, []).append("judge")
    scoring = get_policy(policy, max_rounds=spec.max_rounds)
    return {
        "manifest_version": MANIFEST_VERSION,
        "recorded_at": utcnow().isoformat(),
        "thinkloop": {"version": version(), "git_revision": git_revision()},
        "dataset": {
            "id": dataset_id,
            "name": dataset.name if dataset else None,
            "format": dataset.format if dataset else None,
            "problems": dataset.n_problems if dataset else None,
            "content_hash": await dataset_hash(session, dataset_id),
        },
        "models": [model_entry(registry, name, r) for name, r in roles.items()],
        "prompts": {name: load_prompt(name).version for name in PROMPT_NAMES},
        "policy": {"name": policy, "parameters": _jsonable(dataclasses.asdict(scoring))},
        "design": design_of(spec),
    }


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def design_of(spec: Layout) -> dict[str, Any]:
    """How a batch is laid out: rounds, repeats, arms, cache and budgets (of a spec or a batch)."""
    return {
        "max_rounds": spec.max_rounds,
        "repeats": spec.repeats,
        "control_arm": spec.control_arm,
        "use_cache": spec.use_cache,
        "budget_tokens": spec.budget_tokens,
        "budget_usd": spec.budget_usd,
    }
