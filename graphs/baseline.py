"""The zero-shot control arm: one revision from the problem alone, judged like the loop's versions."""

from __future__ import annotations

from dataclasses import replace

from agents.schemas import Problem
from graphs.context import RunContext
from graphs.events import ReviserThinking
from graphs.refinement import proposed
from graphs.result import EventSink, RunResult, run_refinement, unjudged_error


async def run_control(problem: Problem, context: RunContext, on_event: EventSink | None = None) -> RunResult:
    """Ask the model under test to improve the problem unaided, then judge that version once.

    *Unaided* means blind: the reviser sees the problem and nothing else — no findings, no
    suggestions, no analysis by the panel's checks. The result says what one unguided revision
    achieves, beside what the feedback loop achieves on the same problem. A revision that fails
    ends the control in ``error`` (it is never judged in the problem's place). A revision that
    changes nothing is flagged "no revision" (its event and its round): it is judged as the model's
    version, so it ends accepted or exhausted, never in review.
    """
    emit = on_event or (lambda _: None)
    revision = await context.reviser.revise_unaided(
        problem, lambda delta: emit(ReviserThinking(round=0, delta=delta))
    )
    emit(proposed(revision, problem))
    if revision.problem is None:
        return unjudged_error(problem, context.policy, revision)
    once = replace(context, policy=replace(context.policy, max_rounds=1))
    result = await run_refinement(revision.problem, once, on_event=on_event, original=problem)
    return result.model_copy(
        update={"revisions": [revision], "usage": result.usage + revision.usage, "original": problem}
    )
