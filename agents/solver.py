"""The solver: answers a version's question from the question alone, before any solution is seen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from agents.fencing import fence
from agents.schemas import Problem, Solution, SolverResult
from prompts import load_prompt

if TYPE_CHECKING:  # the LLM stack loads when a solver is built, not for the offline panel
    from agents.llm import LLMClient, ResponseCache


class Solver(Protocol):
    """Anything that solves a question; a failed call comes back as data, never as an exception."""

    async def solve(self, problem: Problem, round_no: int) -> SolverResult:
        """Solve ``problem.question`` without reading ``problem.solution``."""
        ...


def solver_payload(problem: Problem) -> dict[str, object]:
    """The data the solver sees: the question and nothing else (not the stated solution)."""
    return {"question": problem.question}


class LLMSolver:
    """A solver backed by an OpenAI-compatible chat model (the judge model: the panel's own check)."""

    def __init__(self, client: LLMClient, cache: ResponseCache | None = None) -> None:
        self._client = client
        self._cache = cache

    async def solve(self, problem: Problem, round_no: int) -> SolverResult:
        """Ask for a worked solution and final answer; after bounded re-asks, report the failure."""
        prompt = load_prompt("solver")
        from langchain_core.messages import HumanMessage, SystemMessage

        messages = [SystemMessage(prompt.text), HumanMessage(fence(solver_payload(problem)))]
        result = await self._client.structured(messages, Solution, cache=self._cache)
        return SolverResult(
            round=round_no,
            solution=result.value,
            failure=result.failure if result.value is None else None,
            raw_outputs=result.raw_outputs,
            reasoning=result.reasoning,
            model=self._client.model_id,
            prompt_version=prompt.version,
            usage=result.usage,
        )
