"""Asking the model under test for a revision until it revises, or its retries run out.

A reply that is no revision (``agents.revision_check``) is a failed attempt of the model under test:
it is asked again, told why, up to the configured retries (``RunContext.revise_retries``: the model's
``parse_retries``). The round keeps one revision: the last attempt's problem, with the thinking, raw
outputs and usage of every attempt, and the cause of each refused one (``not_revised``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import structlog

from agents.llm.calls import Usage
from agents.reviser import Reviser, RevisionRequest, ThinkingSink, feedback_texts
from agents.revision_check import not_revised
from agents.schemas import RevisionResult

log = structlog.get_logger(__name__)

NOT_REVISED = "the model under test did not revise"


async def ask_until_revised(
    reviser: Reviser,
    request: RevisionRequest,
    refused: Sequence[str],
    retries: int,
    on_thinking: ThinkingSink,
) -> tuple[RevisionResult, bool]:
    """The round's revision, and whether every attempt was refused as no revision: asked up to
    ``retries + 1`` times while a reply is no revision of ``request.current`` (``refused``: the
    loop's evidence against that version)."""
    attempts: list[RevisionResult] = []
    causes: list[str] = []
    for attempt in range(retries + 1):
        if attempt:
            on_thinking("\n\n")
        outcome = await reviser.revise(dataclasses.replace(request, rejected=tuple(causes)), on_thinking)
        attempts.append(outcome)
        if outcome.problem is None:
            break
        cause = not_revised(request.current, outcome.problem, feedback_texts(request), refused)
        if cause is None:
            break
        causes.append(cause)
        log.info("reviser.not_revised", round=request.round, attempt=attempt + 1, cause=cause)
    return _merged(attempts, causes), len(causes) == len(attempts)


def _merged(attempts: list[RevisionResult], causes: list[str]) -> RevisionResult:
    last = attempts[-1]
    if len(attempts) == 1 and not causes:
        return last
    return last.model_copy(
        update={
            "thinking": "\n\n".join(a.thinking for a in attempts if a.thinking),
            "raw_outputs": [raw for a in attempts for raw in a.raw_outputs],
            "usage": sum((a.usage for a in attempts), Usage()),
            "not_revised": causes,
        }
    )
