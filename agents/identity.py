"""A panel's identity: everything that decides whether the panel accepts a version.

A validity record measures one exact panel; a warrant is only as good as the match between the
panel that gave an acceptance and the panel that was measured. So the identity holds the judge
model (its registry name, the model id asked of the endpoint, where the endpoint is, the sampling
settings), the version of every prompt the panel sends (or, for the offline panel, a hash of its
checks' source), the solver, the deterministic verifier that gates every panel, the scoring policy
with its parameters, and the thinkloop version. Its id is a hash of all of it: change any one part
and the panel is a new, unmeasured one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from agents.models import ModelSpec
from prompts import load_prompt

# The prompts a model-backed panel sends: the seven judges and the solver. (The reviser's prompts
# belong to the model under test, which the panel judges, not to the panel.)
_LEVELS = ("remember", "understand", "apply", "analyze", "evaluate", "create", "holistic")
JUDGE_PROMPTS = tuple(f"judge_{name}" for name in _LEVELS)
SOLVER_PROMPT = "solver"
# max_rounds bounds the loop; it never decides whether one version is accepted (the bench judges
# each version once), so it is left out and a panel measured once serves any round limit.
_NOT_IDENTITY = frozenset({"max_rounds"})


@dataclasses.dataclass(frozen=True)
class PanelIdentity:
    """The parts of a panel's identity; :attr:`id` is their stable hash."""

    judge_model: str
    model: str | None  # the model id asked of the endpoint; None for the offline panel
    endpoint: str | None  # the endpoint's base URL (without credentials); None: api.openai.com or offline
    sampling: dict[str, Any]  # temperature and seed of the judge model
    prompts: dict[str, str]  # prompt name → version (name@sha256[:12]); empty for the offline panel
    checks: str | None  # the offline panel's checks: rubric@sha256[:12] of its source
    solver: str | None  # the solver's prompt version; None when the panel has no solver
    verifier: str  # the deterministic gate: verify@sha256[:12] of its source
    policy: dict[str, Any]  # the scoring policy's name and every parameter that decides acceptance
    thinkloop: str  # the thinkloop version

    def parts(self) -> dict[str, Any]:
        """Every part as plain JSON-able data (what the id hashes, and what is shown)."""
        return dataclasses.asdict(self)

    @property
    def id(self) -> str:
        """A stable hash of every part: 16 hex digits of the SHA-256 of their canonical JSON."""
        text = json.dumps(self.parts(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def panel_identity(judge_model: str, spec: ModelSpec | None, policy: Any, thinkloop: str) -> PanelIdentity:
    """The identity of the panel of ``judge_model`` (``spec`` None: the offline panel) under
    ``policy`` (a ``graphs.scoring.ScoringPolicy``; any dataclass whose fields are its parameters)."""
    return PanelIdentity(
        judge_model=judge_model,
        model=spec.model if spec else None,
        endpoint=_endpoint(spec.base_url) if spec else None,
        sampling={"temperature": spec.temperature, "seed": spec.seed} if spec else {},
        prompts={name: load_prompt(name).version for name in JUDGE_PROMPTS} if spec else {},
        checks=None if spec else source_version("rubric"),
        solver=load_prompt(SOLVER_PROMPT).version if spec else None,
        verifier=source_version("verify"),
        policy=policy_parameters(policy),
        thinkloop=thinkloop,
    )


def policy_parameters(policy: Any) -> dict[str, Any]:
    """A policy's name and every parameter that decides whether a version is accepted."""
    fields = dataclasses.asdict(policy)
    return {key: value for key, value in sorted(fields.items()) if key not in _NOT_IDENTITY}


def _endpoint(base_url: str | None) -> str | None:
    """The base URL without user, password, query or fragment (a key in a URL is never shown)."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


@cache
def source_version(package: str) -> str:
    """``<package>@<sha256[:12]>`` of every Python file of ``agents.<package>``, in name order:
    the version of code that decides acceptance without a prompt (the offline checks, the verifier)."""
    digest = hashlib.sha256()
    root = resources.files("agents").joinpath(package)
    for name in sorted(p.name for p in root.iterdir() if p.name.endswith(".py")):
        digest.update(name.encode("utf-8") + b"\0" + root.joinpath(name).read_bytes() + b"\0")
    return f"{package}@{digest.hexdigest()[:12]}"
