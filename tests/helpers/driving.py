"""Driving a run in a test the one way the code drives any: the service's executor (``RunExecutor``)
on a temporary store (``app.runs.temporary``), with the test's own context (scripted judges, a
simulator panel, the offline rubric)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Protocol

from agents.schemas import Problem
from app.runs.temporary import temporary_runs
from app.settings import Settings
from graphs.benches.validity import reading_of
from graphs.context import RunContext
from graphs.result import EventSink, RunResult
from graphs.scoring import Vote


def settings() -> Settings:
    return Settings(_env_file=None, log_level="WARNING")


async def drive(
    problem: Problem, context: RunContext, *, arm: str = "loop", on_event: EventSink | None = None
) -> RunResult:
    """Run ``problem`` on ``context`` to its end through ``RunExecutor`` (``arm`` "control": the
    zero-shot control arm), its typed events to ``on_event`` as they happen."""
    async with driving() as run:
        return await run(problem, context, arm=arm, on_event=on_event)


class Drive(Protocol):
    async def __call__(
        self, problem: Problem, context: RunContext, *, arm: str = "loop", on_event: EventSink | None = None
    ) -> RunResult: ...


@asynccontextmanager
async def driving() -> AsyncIterator[Drive]:
    """``drive`` for many runs: one temporary store (and one compiled graph) for all of them, each
    still a run of its own through ``RunExecutor``. Runs on one store share no state but the rows
    each writes, so a run driven here ends as one driven by ``drive``; the store's set-up (about
    half of a round's time on the offline panel) is paid once."""
    async with temporary_runs(settings()) as runs:

        async def run(
            problem: Problem, context: RunContext, *, arm: str = "loop", on_event: EventSink | None = None
        ) -> RunResult:
            return await runs.run(
                problem, context, model="test", judge_model="test", arm=arm, on_event=on_event
            )

        yield run


Judged = tuple[bool, str, float | None, list[Vote], list[str]]


async def judge_once(problem: Problem, context: RunContext) -> Judged:
    """Round 1 of the loop on ``problem``, as the validity bench judges a version: passed
    (accepted or screened)?, the outcome, Q, each judge's vote, the gate."""
    async with judging(context) as judge:
        return await judge(problem)


@asynccontextmanager
async def judging(context: RunContext) -> AsyncIterator[Callable[[Problem], Awaitable[Judged]]]:
    """``judge_once`` for a sweep, on one store (``driving``): judged as by ``judge_once``."""
    once = replace(context, policy=replace(context.policy, max_rounds=1))
    async with driving() as run:

        async def judge(problem: Problem) -> Judged:
            result = await run(problem, once)
            verdict = reading_of(result, context.policy)
            return verdict.passed, verdict.decision, verdict.quality, list(verdict.votes), list(verdict.gate)

        yield judge
