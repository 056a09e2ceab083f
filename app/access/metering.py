"""Metering model work that is no run: the judges' validity bench (``POST /v1/judges/validate`` and
``POST /v1/judges/calibrate``), and reserving a run's steps against the daily caps.

A run charges the usage ledgers as its rounds and revisions are stored
(``repository.record_rounds``). The bench judges hundreds or thousands of versions through the same
graph but stores no run, so nothing charged it: one request could make thousands of calls past a
project's cap of 0 and leave the ledger where it was.
``metered`` wraps a panel's judges, solver and reviser so every answered call's usage is tallied in
a ``Meter``; the caller charges the tally to the project and the key (``usage.charge_owner``) when
the work ends, however it ends. With a budget, each call's step is reserved before the call
(``app.access.budget``): a run's panel is metered so too, untallied (its calls are charged as its
rounds are stored), and so are the judges of each stronger panel its acceptances escalate to.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agents.judges import Judge, JudgeRequest
from agents.llm.calls import Usage
from agents.llm.models import ModelRegistry
from agents.panel import Panel
from agents.reviser import Reviser, RevisionRequest, ThinkingSink
from agents.schemas import JudgeName, JudgeResult, Problem, RevisionResult, SolverResult
from agents.solver import Solver
from app.access.budget import Budget
from app.access.estimate import step_estimate
from app.access.reserve import NOTHING, Owner, release, reserve
from app.access.usage import charge_owner, find_owner
from app.db import short_session
from app.models import Run, new_id
from app.settings import Settings


@dataclass
class Meter:
    """The usage of every call a metered panel made (a failed call's too: its tokens were billed),
    and the ``budget`` each call's step is reserved in first, if any (``app.access.budget``).
    ``tally``: keep the usages for ``take`` (a run's calls are charged as its rounds are stored)."""

    usages: list[Usage] = field(default_factory=list)
    budget: Budget | None = None
    tally: bool = True
    part: str = ""  # the budget's part its steps are reserved in ("": the run's own panel)

    def add(self, usage: Usage) -> None:
        if self.tally:
            self.usages.append(usage)

    def take(self) -> list[Usage]:
        """The usages tallied since the last take (each is charged once)."""
        taken, self.usages = self.usages, []
        return taken

    @asynccontextmanager
    async def calling(self, problem: Problem, round_no: int) -> AsyncIterator[Callable[[Usage], None]]:
        """Around one call of the step (``problem``, ``round_no``): reserved first, if budgeted; the
        caller hands the call's usage to the function yielded."""
        if self.budget is None:
            yield self.add
            return
        async with self.budget.calling(problem, round_no, self.part) as billed:

            def both(usage: Usage) -> None:
                billed(usage)
                self.add(usage)

            yield both


@dataclass(frozen=True)
class _Judge:
    inner: Judge
    meter: Meter

    async def assess(self, request: JudgeRequest) -> JudgeResult:
        async with self.meter.calling(request.problem, request.round) as billed:
            result = await self.inner.assess(request)
            billed(result.usage)
        return result


@dataclass(frozen=True)
class _Solver:
    inner: Solver
    meter: Meter

    async def solve(self, problem: Problem, round_no: int) -> SolverResult:
        async with self.meter.calling(problem, round_no) as billed:
            result = await self.inner.solve(problem, round_no)
            billed(result.usage)
        return result


@dataclass(frozen=True)
class _Reviser:
    inner: Reviser
    meter: Meter

    async def revise(self, request: RevisionRequest, on_thinking: ThinkingSink) -> RevisionResult:
        async with self.meter.calling(request.current, request.round) as billed:
            result = await self.inner.revise(request, on_thinking)
            billed(result.usage)
        return result

    async def revise_unaided(self, problem: Problem, on_thinking: ThinkingSink) -> RevisionResult:
        async with self.meter.calling(problem, 0) as billed:  # the control arm's blind revision
            result = await self.inner.revise_unaided(problem, on_thinking)
            billed(result.usage)
        return result


def metered(panel: Panel, meter: Meter) -> Panel:
    """``panel`` with every call's usage tallied in ``meter``, and reserved in its budget first (its
    screen flag kept as it was)."""
    judges = {name: _Judge(judge, meter) for name, judge in panel.judges.items()}
    solver = _Solver(panel.solver, meter) if panel.solver is not None else None
    return replace(panel, judges=judges, solver=solver, reviser=_Reviser(panel.reviser, meter))


async def run_budget(
    sessions: async_sessionmaker[AsyncSession],
    settings: Settings,
    registry: ModelRegistry,
    run: Run,
    models: Sequence[str] = (),
) -> Budget | None:
    """The budget a run's steps are reserved in against its owner's daily caps (None: no owner, or
    no model behind the run's panel, its model under test nor ``models``, the stronger panels it
    may escalate to: the offline panel is free)."""
    if all(registry.get(name) is None for name in (run.judge_model, run.model, *models)):
        return None
    async with short_session(sessions) as session:
        owner = await find_owner(session, run.id)
    if owner is None:
        return None
    estimate = step_estimate(registry, run.judge_model, run.model)
    return await Budget.of(sessions, settings, run.id, owner, estimate)


def escalation_judges(
    budget: Budget | None, registry: ModelRegistry, name: str, judges: Mapping[JudgeName, Judge]
) -> Mapping[JudgeName, Judge]:
    """A stronger panel's judges (``name``: its judge model), each call reserved in the run's
    ``budget`` before it is made, in a step of its own estimated at that model's prices: seven
    judge calls, no solver, no revision. A refusal (QuotaExceeded) stops the run as a round's does."""
    if budget is None:
        return judges
    estimate = step_estimate(registry, name, name, revised=False, solved=False)
    meter = Meter(budget=budget, tally=False, part=budget.part(f"escalation:{name}", estimate))
    return {judge: _Judge(inner, meter) for judge, inner in judges.items()}


async def bench_meter(
    sessions: async_sessionmaker[AsyncSession],
    settings: Settings,
    registry: ModelRegistry,
    owner: Owner,
    judge_model: str,
    first: Problem,
) -> Meter:
    """A bench's meter, its first version reserved against the owner's daily caps (429 at a cap,
    before any call); each later version reserves its own before its calls. Settle it with
    ``settle_bench`` however the bench ends."""
    estimate = step_estimate(registry, judge_model, judge_model, revised=False)  # a bench revises nothing
    holder = f"bench:{new_id()}"
    async with short_session(sessions) as session:
        holding = await reserve(session, settings, holder, owner, estimate(first))
    granted = estimate(first) if holding else NOTHING
    return Meter(budget=Budget(sessions, settings, holder, owner, estimate, granted))


async def settle_bench(sessions: async_sessionmaker[AsyncSession], owner: Owner, meter: Meter) -> None:
    """Charge the bench's calls to the owner's ledgers and give back what it reserved, in one
    transaction of its own (the request's may be failing)."""
    async with short_session(sessions) as session:
        await charge_owner(session, owner[0], owner[1], meter.take())
        if meter.budget is not None:
            await release(session, meter.budget.holder)
