"""The seven judges: six Bloom levels and the holistic Five-Keys agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agents.fencing import fence
from agents.schemas import HOLISTIC, HolisticVerdict, JudgeName, JudgeResult, JudgeVerdict, Problem
from prompts import load_prompt

if TYPE_CHECKING:  # the LLM stack loads when a model-backed judge is built, not for the offline panel
    from agents.llm import LLMClient, ResponseCache


@dataclass(frozen=True)
class JudgeRequest:
    """One judge, one round, one problem version, and the version it is compared with."""

    judge: JudgeName
    round: int
    problem: Problem
    reference: Problem | None


class Judge(Protocol):
    """Anything that turns a request into a verdict or an abstention; never raises for bad output."""

    async def assess(self, request: JudgeRequest) -> JudgeResult:
        """Judge one problem version."""
        ...


def judge_payload(request: JudgeRequest) -> dict[str, object]:
    """The data a judge sees: the version under review and its reference (empty when none)."""
    reference = request.reference
    return {
        "question": request.problem.question,
        "solution": request.problem.solution,
        "reference": {
            "question": reference.question if reference else "",
            "solution": reference.solution if reference else "",
        },
    }


class LLMJudge:
    """A judge backed by an OpenAI-compatible chat model."""

    def __init__(self, client: LLMClient, cache: ResponseCache | None = None) -> None:
        self._client = client
        self._cache = cache

    async def assess(self, request: JudgeRequest) -> JudgeResult:
        """Ask the model for a verdict; after bounded re-asks, abstain and keep the raw output."""
        prompt = load_prompt(f"judge_{request.judge}")
        schema = HolisticVerdict if request.judge == HOLISTIC else JudgeVerdict
        from langchain_core.messages import HumanMessage, SystemMessage

        messages = [SystemMessage(prompt.text), HumanMessage(fence(judge_payload(request)))]
        result = await self._client.structured(messages, schema, cache=self._cache)
        return JudgeResult(
            judge=request.judge,
            round=request.round,
            verdict=result.value,
            abstain_reason=result.error if result.value is None else None,
            failure=result.failure if result.value is None else None,
            reasoning=result.reasoning,
            raw_outputs=result.raw_outputs,
            model=self._client.model_id,
            prompt_version=prompt.version,
            usage=result.usage,
        )
