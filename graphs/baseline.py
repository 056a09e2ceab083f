"""The zero-shot control arm: one revision without any feedback, judged like the loop's versions."""

from __future__ import annotations

from dataclasses import replace

from agents.reviser import RevisionRequest
from agents.schemas import Problem
from graphs.context import RunContext
from graphs.result import RunResult, run_refinement


async def run_control(problem: Problem, context: RunContext) -> RunResult:
    """Ask the model under test to improve the problem unaided, then judge that version once.

    The result says what one unguided revision achieves, to set beside what the feedback loop
    achieves on the same problem (the reference's baseline files showed the two can be close).
    """
    revision = await context.reviser.revise(
        RevisionRequest(round=0, current=problem, original=problem, findings=(), suggestions=()),
        lambda _: None,
    )
    candidate = revision.problem or problem  # a failed revision is judged as the unchanged problem
    once = replace(context, policy=replace(context.policy, max_rounds=1))
    result = await run_refinement(candidate, once, original=problem)
    return result.model_copy(
        update={"revisions": [revision], "usage": result.usage + revision.usage, "original": problem}
    )
