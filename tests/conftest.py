"""Shared fixtures: the OpenAI-compatible simulator on loopback and panels wired to it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from agents.llm.client import LLMClient
from agents.llm.models import ModelRegistry, ModelSpec, build_chat_model
from agents.panel import PanelFactory
from agents.rubric.panel import RubricJudge, RubricReviser
from agents.schemas import JUDGES
from agents.simulator import Rule, SimConfig, SimulatorServer
from graphs.context import RunContext
from graphs.scoring import get_policy

# No property test fails on time: an example that first imports SciPy, or runs on a busy machine,
# may take seconds, and the default 200 ms deadline would make that a flaky failure.
settings.register_profile("thinkloop", deadline=None)
settings.load_profile("thinkloop")


@pytest.fixture(scope="session")
def simulator_server() -> Iterator[SimulatorServer]:
    """One simulator for the session; each test configures it afresh."""
    with SimulatorServer().running() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_simulator(simulator_server: SimulatorServer) -> None:
    """Every test starts with the simulator answering as OpenAI, with no rules: a profile or a
    rule that one test set never leaks into the next."""
    simulator_server.state.configure(SimConfig())


@pytest.fixture
def sim(simulator_server: SimulatorServer) -> Callable[..., SimulatorServer]:
    """Configure the simulator: ``sim(rules=[...], latency_s=..., gate=...)``."""

    def configure(rules: list[Rule] | None = None, **settings: Any) -> SimulatorServer:
        simulator_server.state.configure(SimConfig(rules=rules or [], **settings))
        return simulator_server

    configure()
    return configure


@pytest.fixture
def spec(simulator_server: SimulatorServer) -> Callable[..., ModelSpec]:
    """A model spec pointing at the simulator; override any field."""

    def make(**fields: Any) -> ModelSpec:
        values: dict[str, Any] = {
            "name": "sim",
            "model": "sim-1",
            "base_url": simulator_server.base_url,
            "timeout_s": 5.0,
            "max_retries": 2,
        }
        return ModelSpec(**(values | fields))

    return make


@pytest.fixture
async def client(spec: Callable[..., ModelSpec]) -> AsyncIterator[Callable[..., LLMClient]]:
    """A real ChatOpenAI-backed client against the simulator (closed after the test)."""
    made: list[LLMClient] = []

    def make(**fields: Any) -> LLMClient:
        model_spec = spec(**fields)
        made.append(LLMClient(model_spec, build_chat_model(model_spec, {})))
        return made[-1]

    yield make
    for item in made:
        await item.aclose()


@pytest.fixture
async def llm_context(spec: Callable[..., ModelSpec]) -> AsyncIterator[Callable[..., RunContext]]:
    """A run context whose judges, solver and reviser all talk to the simulator."""
    factory = PanelFactory(ModelRegistry({"sim": spec()}), {})

    def make(policy: str = "default", **overrides: Any) -> RunContext:
        return RunContext.of(factory.build("sim", "sim"), get_policy(policy, **overrides))

    yield make
    await factory.aclose()


@pytest.fixture
def rubric_context() -> Callable[..., RunContext]:
    """A run context on the offline panel."""

    def make(policy: str = "default", **overrides: Any) -> RunContext:
        judges = {name: RubricJudge() for name in JUDGES}
        return RunContext(judges=judges, reviser=RubricReviser(), policy=get_policy(policy, **overrides))

    return make


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/realmodel/ is in the real-model tier, marked or not: the inner loop
    (``-m "not slow and not realmodel"``) never starts a real model by accident.

    Then the longest tests go first (the real-model tier, then the slow tier, each in file order): on
    two xdist workers with work stealing, a long test that starts last would leave one core idle
    while it runs alone at the end."""
    tier = Path(__file__).parent / "realmodel"
    for item in items:
        if tier in item.path.parents and item.get_closest_marker("realmodel") is None:
            item.add_marker(pytest.mark.realmodel)

    def length(item: pytest.Item) -> int:
        return 0 if item.get_closest_marker("realmodel") else 1 if item.get_closest_marker("slow") else 2

    items.sort(key=length)  # stable: file order within each tier
