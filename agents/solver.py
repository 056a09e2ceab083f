"""The solver: answers a version's question from the question alone, before any solution is seen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from agents.answers import inconsistent
from agents.fencing import fence
from agents.llm.calls import CallFailure
from agents.schemas import Problem, Solution, SolverResult
from prompts import load_prompt

if TYPE_CHECKING:  # the LLM stack loads when a solver is built, not for the offline panel
    from agents.llm.client import LLMClient, ResponseCache


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
        """Ask for a worked solution and final answer; after bounded re-asks, report the failure.

        A reply whose ``answer`` and ``value`` are different numbers is asked for once more, with
        the contradiction named; a second such reply is a failure (nothing is compared with it)."""
        prompt = load_prompt("solver")
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        messages = [SystemMessage(prompt.text), HumanMessage(fence(solver_payload(problem)))]
        result = await self._client.structured(messages, Solution, cache=self._cache, kind="solver")
        raw, usage, reasoning = list(result.raw_outputs), result.usage, result.reasoning
        reported = result.reported_model
        solution, failure = result.value, result.failure
        why = inconsistent(solution) if solution is not None else None
        if solution is not None and why is not None:
            messages += [AIMessage(result.raw_outputs[-1]), HumanMessage(AGREE)]
            again = await self._client.structured(messages, Solution, kind="solver")
            raw, usage, reasoning = raw + again.raw_outputs, usage + again.usage, reasoning + again.reasoning
            reported = again.reported_model if again.reported_model is not None else reported
            solution, failure = again.value, again.failure
            why = inconsistent(solution) if solution is not None else None
            if solution is not None and why is not None:
                failure, solution = self._contradiction(why), None
        return SolverResult(
            round=round_no,
            solution=solution,
            failure=failure if solution is None else None,
            raw_outputs=raw,
            reasoning=reasoning,
            model=self._client.model_id,
            reported_model=reported,
            prompt_version=prompt.version,
            usage=usage,
        )

    def _contradiction(self, why: str) -> CallFailure:
        from agents.llm.client import endpoint_host

        return CallFailure(
            kind="malformed",
            model=self._client.model_id,
            host=endpoint_host(self._client.spec.base_url),
            exception="InconsistentAnswer",
            message=f"the solver contradicted itself twice: {why}"[:500],
        )


# The contradiction is named in our words, never with the model's own text (which may be hostile).
AGREE = (
    "Your reply contradicts itself: the number in `answer` is not the number in `value`. Work it out "
    "again and reply with only the JSON object, giving the same final answer in `answer` and `value`."
)
