"""Metering model work that is no run: the judges' validity bench (``POST /v1/judges/validate``).

A run charges the usage ledgers as its rounds and revisions are stored
(``repository.record_rounds``). The bench judges hundreds or thousands of versions through the same
graph but stores no run, so nothing charged it: one request could make thousands of calls past a
project's cap of 0 and leave the ledger where it was.
``metered`` wraps a panel's judges, solver and reviser so every answered call's usage is tallied in
a ``Meter``; the caller charges the tally to the project and the key (``usage.charge_owner``) when
the work ends, however it ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agents.judges import Judge, JudgeRequest
from agents.panel import Panel
from agents.reviser import Reviser, RevisionRequest, ThinkingSink
from agents.schemas import JudgeResult, Problem, RevisionResult, SolverResult, Usage
from agents.solver import Solver


@dataclass
class Meter:
    """The usage of every call a metered panel made (a failed call's too: its tokens were billed)."""

    usages: list[Usage] = field(default_factory=list)

    def add(self, usage: Usage) -> None:
        self.usages.append(usage)

    def take(self) -> list[Usage]:
        """The usages tallied since the last take (each is charged once)."""
        taken, self.usages = self.usages, []
        return taken


@dataclass(frozen=True)
class _Judge:
    inner: Judge
    meter: Meter

    async def assess(self, request: JudgeRequest) -> JudgeResult:
        result = await self.inner.assess(request)
        self.meter.add(result.usage)
        return result


@dataclass(frozen=True)
class _Solver:
    inner: Solver
    meter: Meter

    async def solve(self, problem: Problem, round_no: int) -> SolverResult:
        result = await self.inner.solve(problem, round_no)
        self.meter.add(result.usage)
        return result


@dataclass(frozen=True)
class _Reviser:
    inner: Reviser
    meter: Meter

    async def revise(self, request: RevisionRequest, on_thinking: ThinkingSink) -> RevisionResult:
        result = await self.inner.revise(request, on_thinking)
        self.meter.add(result.usage)
        return result

    async def revise_unaided(self, problem: Problem, on_thinking: ThinkingSink) -> RevisionResult:
        result = await self.inner.revise_unaided(problem, on_thinking)
        self.meter.add(result.usage)
        return result


def metered(panel: Panel, meter: Meter) -> Panel:
    """``panel`` with every call's usage tallied in ``meter`` (its screen flag kept as it was)."""
    judges = {name: _Judge(judge, meter) for name, judge in panel.judges.items()}
    solver = _Solver(panel.solver, meter) if panel.solver is not None else None
    return replace(panel, judges=judges, solver=solver, reviser=_Reviser(panel.reviser, meter))
