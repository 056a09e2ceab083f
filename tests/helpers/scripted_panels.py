"""Panels of scripted judges for CLI and service tests: each judge's verdict is a function of the
version it reads, so a test knows the panel's error rates (no endpoint is called)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents.judges import JudgeRequest
from agents.llm.calls import Usage
from agents.panel import Panel, PanelFactory
from agents.rubric.panel import RubricReviser
from agents.schemas import HOLISTIC, JUDGES, FiveKeys, HolisticReply, JudgeReply, JudgeResult, Problem

Script = Callable[[Problem], tuple[int, int]]  # a version → (score, confidence) of every judge


@dataclass
class ScriptedJudge:
    """Every judge gives the version the script's score and confidence, each its own rationale."""

    script: Script
    model: str
    usage: Usage | None = None  # what each call reports spending (None: nothing)

    async def assess(self, request: JudgeRequest) -> JudgeResult:
        score, confidence = self.script(request.problem)
        common: dict[str, Any] = {
            "own_answer": "",
            "rationale": f"{request.judge}: read it",
            "score": score,
            "confidence": confidence,
        }
        verdict = (
            HolisticReply(
                **common,
                five_keys=FiveKeys(
                    concepts="", prerequisites="", representations="", alternative_values="", narrative=""
                ),
                suggestions=[],
            )
            if request.judge == HOLISTIC
            else JudgeReply(**common)
        )
        return JudgeResult(
            judge=request.judge,
            round=request.round,
            verdict=verdict,
            model=self.model,
            reported_model=f"{self.model}-1",
            prompt_version="t",
            usage=self.usage or Usage(),
        )


class ScriptedFactory(PanelFactory):
    """A factory whose panels are scripted judges (by judge model name) and the offline reviser."""

    scripts: dict[str, Script]
    usages: dict[str, Usage] | None = None  # by judge model: what each of its calls reports

    def build(self, judge_model: str, model_under_test: str, cache: object = None) -> Panel:
        judge = ScriptedJudge(self.scripts[judge_model], judge_model, (self.usages or {}).get(judge_model))
        return Panel(judges=dict.fromkeys(JUDGES, judge), reviser=RubricReviser())


def share(key: str, rate: float) -> bool:
    """A deterministic draw: whether ``key`` falls in the first ``rate`` of the unit interval."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < rate
