"""An echoing reviser ends ``exhausted`` with its cause, with Gemma 3 270M on llama.cpp's server in
the panel (issue 53).

Gemma cannot be the echoing reviser: asked to revise, the 270M base model rambles to its token
bound (no usable revision, an ``error`` run), never a deterministic echo. So the model under test is
the simulator, scripted to echo ("takes" becomes "take", the solution kept), and the panel is real
where it can be without making the outcome depend on what Gemma writes: three Bloom judges and the
solver are Gemma; four judges are the simulator, refusing (score 40). Under ``think-paper`` (a
failed or abstaining judge counts 0, no quorum) round 1 is ``revise`` whatever Gemma writes: four
refusals keep Q below τ. The echo is then refused, asked again once, and the run ends ``exhausted``
with "the model under test did not revise", never ``needs_review``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agents.judges import Judge, LLMJudge
from agents.llm.models import MaxTokens, ModelRegistry, ModelSpec
from agents.panel import PanelFactory
from agents.realmodel import MODEL_ID, TIER_MAX_TOKENS
from agents.reviser import LLMReviser
from agents.schemas import JUDGES, JudgeName
from agents.simulator import Rule, SimulatorServer
from agents.solver import LLMSolver
from graphs.context import RunContext
from graphs.revising import NOT_REVISED
from graphs.scoring import get_policy
from tests.helpers.driving import drive
from tests.helpers.problems import ORCHESTRA
from tests.helpers.realmodel import RealModel

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(900)]
ON_GEMMA: tuple[JudgeName, ...] = ("remember", "understand", "apply")
ECHO = {
    "thinking": "I keep the problem.",
    "question": ORCHESTRA.question.replace("takes 40", "take 40"),
    "solution": ORCHESTRA.solution,
}


async def test_an_echoing_reviser_ends_exhausted_with_its_cause(
    realmodel: RealModel, sim: Callable[..., SimulatorServer], simulator_server: SimulatorServer
) -> None:
    sim([Rule(role="Reviser", json=ECHO), Rule(role="^Judge", score=40)])
    # The outcome does not depend on what Gemma writes (see above): short replies, one ask each
    # (Gemma's verdicts and answer, whole or cut, count alike here), so the server is not kept busy
    # for replies nothing reads.
    specs = {
        "gemma": ModelSpec(
            name="gemma",
            model=MODEL_ID,
            base_url=realmodel.base_url,
            timeout_s=600,
            max_tokens=MaxTokens(**(TIER_MAX_TOKENS | {"judge": 96, "solver": 64})),
            parse_retries=0,
        ),
        "sim": ModelSpec(name="sim", model="sim-1", base_url=simulator_server.base_url, timeout_s=30),
    }
    async with PanelFactory(ModelRegistry(specs), {}) as factory:
        gemma, simulated = factory.client("gemma"), factory.client("sim")
        assert gemma is not None and simulated is not None
        judges: dict[JudgeName, Judge] = {j: LLMJudge(gemma if j in ON_GEMMA else simulated) for j in JUDGES}
        context = RunContext(
            judges=judges,
            reviser=LLMReviser(simulated),
            policy=get_policy("think-paper", max_rounds=2),
            solver=LLMSolver(gemma),
            revise_retries=1,
        )
        result = await drive(ORCHESTRA, context)
    assert result.outcome == "exhausted", result.stop_reason
    assert result.stop_reason.startswith(f"{NOT_REVISED} (2 attempt(s)): it "), result.stop_reason
    assert len(result.rounds) == 1 and result.final == ORCHESTRA  # the echo was never judged
    assert {o.model for o in result.rounds[0].outcomes} == {"gemma", "sim"}  # a real model judged
    assert result.revisions[0].not_revised and result.metrics is not None
