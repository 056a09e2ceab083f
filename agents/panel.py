"""Build the seven judges and the reviser from model names: an endpoint or the offline rubric."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agents.judges import Judge, Layout, LLMJudge
from agents.llm.models import ModelRegistry, limit_spec
from agents.llm.ratelimit import LimitStore
from agents.reviser import LLMReviser, Reviser
from agents.rubric.panel import RubricJudge, RubricReviser
from agents.schemas import JUDGES, JudgeName
from agents.solver import LLMSolver, Solver

if TYPE_CHECKING:  # the client stack (openai, langchain-openai) loads with the first model-backed client
    from agents.llm.client import LLMClient, ResponseCache
    from agents.probe import Capabilities


@dataclass(frozen=True)
class Panel:
    """Seven judges and a solver (from the judge model) and a reviser (the model under test).

    ``solver`` is None for the offline rubric panel: it has no model to solve the question with
    (the deterministic verifier, which gates every panel, checks the stated arithmetic there).
    ``screen`` is True for the offline rubric panel: it can refuse a version with evidence but never
    certify one, so its pass is ``screened``, never ``accepted``.
    """

    judges: Mapping[JudgeName, Judge]
    reviser: Reviser
    solver: Solver | None = None
    screen: bool = False
    # How often the model under test is asked again for a reply that is no revision: its model's
    # parse_retries (0 for the offline reviser, whose reply to the same request is the same).
    reviser_retries: int = 0


def offline_panel(judges: Mapping[JudgeName, Judge]) -> bool:
    """Whether every judge is the offline rubric: a deterministic screen, not a certifying panel."""
    return bool(judges) and all(isinstance(j, RubricJudge) for j in judges.values())


@dataclass
class PanelFactory:
    """One client per model name, shared by every run; provider limits live in ``limits``.

    ``judge_layout`` lays each judge request out (``agents.judges.Layout``): the panel's prefix, as
    thinkloop sends it; the older layouts only for a bench that compares them with it.
    """

    registry: ModelRegistry
    env: Mapping[str, str]
    limits: LimitStore = field(default_factory=LimitStore)
    judge_layout: Layout = "panel_prefix"
    _clients: dict[str, LLMClient] = field(default_factory=dict)
    capabilities: dict[str, Capabilities] = field(default_factory=dict)

    def client(self, name: str) -> LLMClient | None:
        """The client for ``name``; None for the offline panel; UnknownModelError if unknown."""
        spec = self.registry.get(name)
        if spec is None:
            return None
        if name not in self._clients:
            from agents.llm.client import LLMClient
            from agents.llm.models import build_chat_model

            limiter = self.limits.limiter(limit_spec(spec))
            self._clients[name] = LLMClient(spec, build_chat_model(spec, self.env), limiter)
        return self._clients[name]

    async def check(self, name: str) -> Capabilities:
        """Probe ``name``'s endpoint; its client then asks for JSON the way the probe found works."""
        client = self.client(name)
        if client is None:
            raise ValueError(f"{name!r} is the offline panel: it has no endpoint to check")
        from agents.probe import probe

        found = await probe(client.spec, client.chat)
        self.capabilities[name] = found
        client.adopt(found.mode, "probed by models check")
        client.adopt_server(found.server)
        return found

    async def aclose(self) -> None:
        """Close every endpoint's connection pool."""
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
        await self.limits.aclose()

    async def __aenter__(self) -> PanelFactory:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def build(self, judge_model: str, model_under_test: str, cache: ResponseCache | None = None) -> Panel:
        """Judges from ``judge_model`` and the reviser from ``model_under_test`` (chosen apart)."""
        judge_client, reviser_client = self.client(judge_model), self.client(model_under_test)
        judge: Judge = LLMJudge(judge_client, cache, self.judge_layout) if judge_client else RubricJudge()
        reviser: Reviser = LLMReviser(reviser_client, cache) if reviser_client else RubricReviser()
        solver = LLMSolver(judge_client, cache) if judge_client else None
        return Panel(
            judges=dict.fromkeys(JUDGES, judge),
            reviser=reviser,
            solver=solver,
            screen=judge_client is None,
            reviser_retries=reviser_client.spec.parse_retries if reviser_client else 0,
        )
