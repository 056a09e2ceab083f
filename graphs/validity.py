"""The judges' validity bench: judge every version of a labelled set once, as round 1 of the loop.

Each version — the flawed problem, its corrected version, a control, and (with twins) its
keyword-stuffed twins or a control's paraphrase — goes through the same graph as a real run, with
``max_rounds = 1``: the seven judges in parallel, the policy, the verifier's gate. What comes back
is measured against the labels by :mod:`graphs.validity_metrics`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from agents.schemas import JudgeName, Problem
from agents.validity.labels import LabelledItem
from agents.validity.twins import paraphrase, stuffed
from graphs.context import RunContext
from graphs.result import run_refinement
from graphs.scoring import PASSED_OUTCOMES

Version = Literal["flawed", "corrected", "control", "twin", "paraphrase"]


@dataclass(frozen=True)
class Vote:
    """One judge on one version: score and confidence (None: no verdict) and whether it passed."""

    judge: JudgeName
    score: int | None
    confidence: int | None
    passed: bool | None


@dataclass(frozen=True)
class Judged:
    """One version of one labelled item, judged once."""

    item: str
    split: str
    flaw_type: str
    levels: tuple[JudgeName, ...]
    version: Version
    twin: str
    accepted: bool
    decision: str
    quality: float | None
    votes: tuple[Vote, ...]
    gate: tuple[str, ...]

    @property
    def should_pass(self) -> bool:
        """Corrected versions, controls and paraphrases should pass; flawed ones and twins not."""
        return self.version in ("corrected", "control", "paraphrase")


def versions(item: LabelledItem, twins: bool) -> list[tuple[Version, str, Problem]]:
    """The versions of an item to judge."""
    if item.kind == "control":
        out: list[tuple[Version, str, Problem]] = [("control", "", item.problem)]
        if twins:
            out.append(("paraphrase", "paraphrase", paraphrase(item).problem))
        return out
    out = [("flawed", "", item.problem)]
    if item.corrected is not None:
        out.append(("corrected", "", item.corrected))
    if twins:
        out += [("twin", twin.kind, twin.problem) for twin in stuffed(item)]
    return out


async def judge_once(
    problem: Problem, context: RunContext
) -> tuple[bool, str, float | None, list[Vote], list[str]]:
    """Round 1 of the loop on ``problem``: accepted?, the decision, Q, each judge's vote, the gate."""
    once = replace(context, policy=replace(context.policy, max_rounds=1))
    record = (await run_refinement(problem, once)).rounds[0]
    policy = context.policy
    votes = [
        Vote(
            o.judge,
            o.verdict.score if o.verdict else None,
            o.verdict.confidence if o.verdict else None,
            (o.verdict.score >= policy.threshold(o.judge)) if o.verdict else None,
        )
        for o in record.outcomes
    ]
    return (
        record.decision in PASSED_OUTCOMES,  # accepted, or screened by the offline panel: let through
        record.decision,
        record.quality,
        votes,
        list(record.verification),
    )


async def bench(
    items: Sequence[LabelledItem], context: RunContext, *, twins: bool = False, concurrency: int = 8
) -> list[Judged]:
    """Judge every version of every item (``concurrency`` versions at a time)."""
    slots = asyncio.Semaphore(concurrency)

    async def one(item: LabelledItem, version: Version, twin: str, problem: Problem) -> Judged:
        async with slots:
            accepted, decision, quality, votes, gate = await judge_once(problem, context)
        levels = tuple(level for flaw in item.flaws for level in flaw.levels)
        return Judged(
            item.id,
            item.split,
            item.flaw_type,
            levels,
            version,
            twin,
            accepted,
            decision,
            quality,
            tuple(votes),
            tuple(gate),
        )

    jobs = [one(item, v, t, p) for item in items for v, t, p in versions(item, twins)]
    return list(await asyncio.gather(*jobs))
