"""The loop with scripted judges: a judge that answers from a script, a reviser that does not revise, a
context of both."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.judges import JudgeRequest
from agents.reviser import RevisionRequest, ThinkingSink
from agents.schemas import (
    HOLISTIC,
    JUDGES,
    FiveKeys,
    HolisticReply,
    JudgeReply,
    JudgeResult,
    Problem,
    RevisionResult,
)
from graphs.context import RunContext
from graphs.events import RunEvent
from graphs.result import RunResult
from graphs.scoring import get_policy
from tests.helpers.driving import drive
from tests.helpers.problems import ORCHESTRA


@dataclass
class ScriptedJudge:
    """Each judge's (score, confidence, rationale) per round; the last round's script repeats."""

    script: Callable[[str, int], Verdict]

    async def assess(self, request: JudgeRequest) -> JudgeResult:
        score, confidence, rationale = self.script(request.judge, request.round)
        common: dict[str, Any] = {
            "own_answer": "",
            "rationale": rationale,
            "score": score,
            "confidence": confidence,
        }
        verdict = (
            HolisticReply(
                **common,
                five_keys=FiveKeys(
                    concepts="", prerequisites="", representations="", alternative_values="", narrative=""
                ),
                suggestions=["say what is asked"],
            )
            if request.judge == HOLISTIC
            else JudgeReply(**common)
        )
        return JudgeResult(
            judge=request.judge, round=request.round, verdict=verdict, model="scripted", prompt_version="t"
        )


@dataclass
class EchoReviser:
    """The model under test that returns the version it was given (re-spaced): no revision."""

    calls: list[int] = field(default_factory=list)

    async def revise(self, request: RevisionRequest, on_thinking: ThinkingSink) -> RevisionResult:
        self.calls.append(request.round)
        return self._same(request.current, request.round)

    async def revise_unaided(self, problem: Problem, on_thinking: ThinkingSink) -> RevisionResult:
        return self._same(problem, 0)

    def _same(self, problem: Problem, number: int) -> RevisionResult:
        spaced = Problem(question=f"  {problem.question}\n", solution=problem.solution.replace(" ", "  "))
        return RevisionResult(round=number, problem=spaced, model="echo", prompt_version="t")


def context_of(script: Callable[[str, int], Verdict], **fields: object) -> RunContext:
    judge = ScriptedJudge(script)
    reviser = fields.pop("reviser", RewordingReviser())
    policy = get_policy(str(fields.pop("policy", "default")))
    return RunContext(judges=dict.fromkeys(JUDGES, judge), reviser=reviser, policy=policy, **fields)  # type: ignore[arg-type]


def passing(judge: str, round_no: int) -> Verdict:
    return 95, 90, f"{judge}: the {judge} criteria hold"


async def run(context: RunContext, problem: Problem = ORCHESTRA) -> tuple[RunResult, list[RunEvent]]:
    events: list[RunEvent] = []
    result = await drive(problem, context, on_event=events.append)
    return result, events


Verdict = tuple[int, int, str]  # score, confidence, rationale


@dataclass
class RewordingReviser(EchoReviser):
    """A model under test that changes a given of the question each time (a revision, if not a good
    one: its first number goes up by one, 120 musicians become 121, then 122; with none, it adds one)."""

    def _same(self, problem: Problem, number: int) -> RevisionResult:
        question = re.sub(r"\d+", lambda m: str(int(m.group()) + 1), problem.question, count=1)
        question = question if question != problem.question else f"{question} (1)"
        changed = Problem(question=question, solution=problem.solution)
        return RevisionResult(round=number, problem=changed, model="reword", prompt_version="t")
