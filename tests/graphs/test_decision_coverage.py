"""The whole decision in a panel's identity (issue 49, item 5): versions run through the loop on a
model-backed panel and on the offline panel while a profiler lists every project module whose code
ran; each must be hashed into the identity or stated to decide nothing (with its reason). A module
added to the decision path and forgotten in both lists fails here."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import agents
import graphs
from agents import identity
from agents.llm.models import ModelRegistry, ModelSpec
from agents.panel import PanelFactory
from agents.simulator import Rule, SimulatorServer
from graphs import decision
from graphs.context import RunContext
from graphs.scoring import get_policy
from tests.helpers.driving import driving
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]
ROOTS = {"agents": Path(agents.__file__).parent, "graphs": Path(graphs.__file__).parent}
# What runs through the model-backed panel: an acceptance; a solver that disagrees with the stated
# answer (the solver comparison) and judges that fail, then pass a revision; a malformed judge
# reply asked again (the parse and its retries).
SCENARIOS: list[list[Rule]] = [
    [Rule(role="Solver", answer="80 minutes"), Rule(role="^Judge", score=95)],
    [Rule(role="Solver", answer="75 minutes", times=1), Rule(role="^Judge", score=40, times=7)],
    [Rule(role="Judge: Create", malformed=True, times=1), Rule(role="^Judge", score=95)],
]


# Subpackages whose modules are hashed or stated outside one by one ("llm/client"), not as a whole.
BY_MODULE = {"agents": {"llm"}, "graphs": set()}


def module_of(filename: str) -> tuple[str, str] | None:
    """(package, its top-level module or subpackage, or a module of a subpackage of BY_MODULE) of a
    project source file; None for others."""
    path = Path(filename)
    for package, root in ROOTS.items():
        if path.is_relative_to(root):
            parts = path.relative_to(root).parts
            depth = 2 if parts[0] in BY_MODULE[package] and len(parts) > 1 else 1
            return package, "/".join(parts[:depth]).removesuffix(".py")
    return None


@contextmanager
def ran() -> Iterator[set[tuple[str, str]]]:
    """The project modules whose functions ran inside the block (in this thread and new ones)."""
    seen: set[tuple[str, str]] = set()
    files: set[str] = set()

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event == "call":
            files.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        seen.update(m for f in files if (m := module_of(f)) is not None)


def allowed(offline: bool) -> dict[str, set[str]]:
    """Per package, the modules a run may execute: hashed into the identity, or stated outside it."""
    hashed = {*identity.DECISION_MODULES, "verify", *(["rubric"] if offline else [])}
    return {
        "agents": hashed | set(identity.OUTSIDE_THE_DECISION),
        "graphs": set(decision.DECISION_MODULES) | set(decision.OUTSIDE_THE_DECISION),
    }


def unaccounted(seen: set[tuple[str, str]], offline: bool) -> list[str]:
    """The modules that ran but are neither hashed nor stated to decide nothing."""
    return sorted(f"{package}.{name}" for package, name in seen if name not in allowed(offline)[package])


async def test_every_module_a_model_panel_runs_is_in_its_identity_or_stated_outside(
    sim: Sim, simulator_server: SimulatorServer
) -> None:
    spec = ModelSpec(name="sim", model="sim-1", base_url=simulator_server.base_url, timeout_s=5.0)
    outcomes = []
    async with PanelFactory(ModelRegistry({"sim": spec}), {}) as factory, driving() as drive:
        context = RunContext.of(factory.build("sim", "sim"), get_policy("default"))
        with ran() as seen:
            for rules in SCENARIOS:
                sim(rules)
                outcomes.append((await drive(ORCHESTRA, context)).outcome)
    assert outcomes[0] == "accepted" and "accepted" in outcomes[1:], outcomes
    # the trace saw the decision itself (else the check below would pass on nothing)
    for module in ("answers", "judges", "solver", "llm/client", "llm/structured", "verify"):
        assert ("agents", module) in seen, module
    assert {("graphs", "scoring"), ("graphs", "refinement")} <= seen
    # each must be hashed (agents.identity, graphs.decision) or stated outside with its reason
    assert unaccounted(seen, offline=False) == []
    assert ("agents", "rubric") not in seen  # the offline checks are no part of a model panel


async def test_every_module_the_offline_panel_runs_is_in_its_identity_or_stated_outside() -> None:
    async with PanelFactory(ModelRegistry({}), {}) as factory, driving() as drive:
        context = RunContext.of(factory.build("rubric", "rubric"), get_policy("default"))
        with ran() as seen:
            result = await drive(ORCHESTRA, context)
    assert result.rounds and ("agents", "rubric") in seen and ("graphs", "scoring") in seen
    assert unaccounted(seen, offline=True) == []


@pytest.mark.parametrize(
    ("package", "stated"),
    [("agents", identity.OUTSIDE_THE_DECISION), ("graphs", decision.OUTSIDE_THE_DECISION)],
    ids=["agents", "graphs"],
)
def test_every_module_stated_outside_exists(package: str, stated: dict[str, str]) -> None:
    root = ROOTS[package]
    for name in stated:
        assert (root / f"{name}.py").is_file() or (root / name).is_dir(), f"{package}.{name}"


def test_no_module_is_both_hashed_and_outside() -> None:
    assert not set(identity.DECISION_MODULES) & set(identity.OUTSIDE_THE_DECISION)
    assert not set(decision.DECISION_MODULES) & set(decision.OUTSIDE_THE_DECISION)
