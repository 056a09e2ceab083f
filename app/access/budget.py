"""A piece of model work's reservations, step by step: what a run or a bench reserves before each
of its steps makes a call, and how it stops once a cap is reached.

A step is a version of a problem in one round (its judges, its solver, and the revision that
follows them), known by the calls' (question, solution, round). Its first call reserves the step's
estimate, less what the work already holds and has not used (``Budget.enter``); a refusal
(QuotaExceeded) fails that call and every later step's, before any of them is made. Calls of a step
already reserved are never refused: a step is made whole or not at all.

A stronger panel an acceptance escalates to (``graphs.escalation``) judges the version in a step of
its own, a *part* of the budget (``Budget.part``): known by the same three and the part's name,
estimated at that panel's model's prices, reserved under the same holder and refused in the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agents.llm.calls import Usage
from agents.schemas import Problem
from app.access.estimate import StepEstimate
from app.access.reserve import NOTHING, Amount, Owner, held, reserve
from app.db import short_session
from app.errors import QuotaExceeded
from app.settings import Settings

StepKey = tuple[str, str, int, str]  # question, solution, round, part ("": the run's own panel)


@dataclass
class _Step:
    """A reserved step: its estimate, what its calls used, and how many are in flight."""

    estimate: Amount
    tokens: int = 0
    cost: float = 0.0
    in_flight: int = 0

    def committed(self) -> tuple[int, float]:
        """What the step takes of the work's reservations: its estimate while a call of it is in
        flight (or what it used, if more), what it used once none is."""
        if self.in_flight:
            return max(self.estimate.tokens, self.tokens), max(self.estimate.cost_usd, self.cost)
        return self.tokens, self.cost


class Budget:
    """The reservations of one holder (a run's id, or a bench's): see the module."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        holder: str,
        owner: Owner,
        estimate: StepEstimate,
        granted: Amount = NOTHING,
    ) -> None:
        self.sessions, self.settings, self.holder, self.owner = sessions, settings, holder, owner
        self.estimate = estimate
        self.granted_tokens, self.granted_cost = granted.tokens, granted.cost_usd
        self.steps: dict[StepKey, _Step] = {}
        self.parts: dict[str, StepEstimate] = {}
        self.refused: QuotaExceeded | None = None
        self._lock = asyncio.Lock()

    @classmethod
    async def of(
        cls,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        holder: str,
        owner: Owner,
        estimate: StepEstimate,
    ) -> Budget:
        """The holder's budget, with what it holds already (reserved at admission, or by an earlier
        attempt of the same run)."""
        async with short_session(sessions) as session:
            granted = await held(session, holder)
        return cls(sessions, settings, holder, owner, estimate, granted)

    def part(self, name: str, estimate: StepEstimate) -> str:
        """Another panel's steps in this budget (a stronger panel escalated to), estimated by
        ``estimate``: pass the name returned to ``calling``."""
        self.parts[name] = estimate
        return name

    def free(self) -> tuple[int, float]:
        """What the holder holds that no step has taken."""
        tokens, cost = self.granted_tokens, self.granted_cost
        for step in self.steps.values():
            taken = step.committed()
            tokens, cost = tokens - taken[0], cost - taken[1]
        return tokens, cost

    async def enter(self, problem: Problem, round_no: int, part: str = "") -> _Step:
        """A call of this step (of ``part``) is about to be made: the step is reserved first if it is new."""
        key = (problem.question, problem.solution, round_no, part)
        step = self.steps.get(key)
        if step is None:
            async with self._lock:  # one reservation at a time: each sees the others' steps
                step = self.steps.get(key)
                if step is None:
                    step = await self._reserve(key, problem)
        step.in_flight += 1
        return step

    def leave(self, step: _Step, usage: Usage | None) -> None:
        """A call of the step returned (``usage``: what it billed; None: it raised)."""
        step.in_flight -= 1
        if usage is not None:
            step.tokens += usage.input_tokens + usage.output_tokens
            step.cost += usage.cost_usd or 0.0

    @asynccontextmanager
    async def calling(
        self, problem: Problem, round_no: int, part: str = ""
    ) -> AsyncIterator[Callable[[Usage], None]]:
        """Around one call: ``enter`` before it, ``leave`` after; the caller hands the usage to the
        function yielded."""
        step = await self.enter(problem, round_no, part)
        billed: list[Usage] = []
        try:
            yield billed.append
        finally:
            self.leave(step, billed[0] if billed else None)

    async def _reserve(self, key: StepKey, problem: Problem) -> _Step:
        if self.refused is not None:
            raise self.refused
        estimate = self.parts.get(key[3], self.estimate)(problem)
        free_tokens, free_cost = self.free()
        need = Amount(max(0, estimate.tokens - free_tokens), max(0.0, estimate.cost_usd - free_cost))
        if need:  # else what the holder holds covers the step (a free step, the offline panel's, too)
            try:
                async with short_session(self.sessions) as session:
                    holding = await reserve(session, self.settings, self.holder, self.owner, need)
            except QuotaExceeded as exc:
                self.refused = exc
                raise
            if holding:
                self.granted_tokens += need.tokens
                self.granted_cost += need.cost_usd
        step = self.steps[key] = _Step(estimate)
        return step
