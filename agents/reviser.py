"""The model under test: reads the panel's feedback, thinks aloud, returns a revised problem."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agents.fencing import fence
from agents.schemas import CallRecord, JudgeName, Problem, Revision, RevisionResult
from prompts import load_prompt

if TYPE_CHECKING:  # the LLM stack loads when a model-backed reviser is built, not for the offline one
    from agents.llm.client import LLMClient, ResponseCache

ThinkingSink = Callable[[str], None]


@dataclass(frozen=True)
class Finding:
    """One valid verdict as the reviser sees it (abstentions never become findings)."""

    judge: JudgeName
    score: int
    passed: bool
    rationale: str


@dataclass(frozen=True)
class RevisionRequest:
    """Revise ``current`` (judged in ``round``) using the findings and suggestions."""

    round: int
    current: Problem
    original: Problem
    findings: tuple[Finding, ...]
    suggestions: tuple[str, ...]
    rejected: tuple[str, ...] = ()  # why each earlier attempt of this round was no revision


def feedback_texts(request: RevisionRequest) -> list[str]:
    """What the reviser was told: every finding's text, then the suggestions."""
    return [f.rationale for f in request.findings] + list(request.suggestions)


class Reviser(Protocol):
    """Produces the next version; streams its think-aloud to ``on_thinking`` as it goes."""

    async def revise(self, request: RevisionRequest, on_thinking: ThinkingSink) -> RevisionResult:
        """Revise one problem version."""
        ...

    async def revise_unaided(self, problem: Problem, on_thinking: ThinkingSink) -> RevisionResult:
        """Improve a problem seen alone, with no feedback of any kind (the zero-shot control)."""
        ...


def revision_payload(request: RevisionRequest) -> dict[str, object]:
    """The data the reviser sees (with why each earlier attempt of the round was refused, if any)."""
    payload: dict[str, object] = {
        "question": request.current.question,
        "solution": request.current.solution,
        "original": {"question": request.original.question, "solution": request.original.solution},
        "feedback": [
            {"reviewer": f.judge, "score": f.score, "passed": f.passed, "finding": f.rationale}
            for f in request.findings
        ],
        "suggestions": list(request.suggestions),
    }
    if request.rejected:
        payload["rejected_attempts"] = [f"not a revision: {why}" for why in request.rejected]
    return payload


class ThinkingStreamer:
    """The think-aloud as it is produced: a reasoning model's own channel first (``reasoning``),
    then what is new in the ``thinking`` field of the growing JSON reply."""

    def __init__(self, sink: ThinkingSink) -> None:
        self._sink = sink
        self._sent = 0
        self._gap = False

    def reasoning(self, piece: str) -> None:
        """A piece of the model's native reasoning (a reasoning field, or a think tag)."""
        if piece:
            self._sink(piece)
            self._gap = True

    def __call__(self, text_so_far: str) -> None:
        """Parse the partial JSON and forward what is new in ``thinking``."""
        if not text_so_far:  # a re-asked attempt streams its thinking from the start
            if self._sent:
                self._sink("\n\n")
            self._sent = 0
            return
        from langchain_core.utils.json import parse_partial_json  # loaded once, by the first chunk

        try:
            partial = parse_partial_json(text_so_far)
        except ValueError:
            return
        thinking = partial.get("thinking") if isinstance(partial, dict) else None
        if isinstance(thinking, str) and len(thinking) > self._sent:
            if self._gap:  # native reasoning came first: set the written thinking apart
                self._sink("\n\n")
                self._gap = False
            self._sink(thinking[self._sent :])
            self._sent = len(thinking)


def think_aloud(reasoning: str, written: str) -> str:
    """The stored think-aloud: the model's own reasoning, then its written ``thinking``."""
    return "\n\n".join(part for part in (reasoning.strip(), written) if part)


class LLMReviser:
    """The model under test, reached through an OpenAI-compatible endpoint."""

    def __init__(self, client: LLMClient, cache: ResponseCache | None = None) -> None:
        self._client = client
        self._cache = cache

    async def revise(self, request: RevisionRequest, on_thinking: ThinkingSink) -> RevisionResult:
        """Stream the think-aloud, then validate the revised question and solution."""
        return await self._ask("reviser", revision_payload(request), request.round, on_thinking)

    async def revise_unaided(self, problem: Problem, on_thinking: ThinkingSink) -> RevisionResult:
        """The same, from the problem alone (its own prompt: there is no feedback to read)."""
        payload: dict[str, object] = {"question": problem.question, "solution": problem.solution}
        return await self._ask("reviser_unaided", payload, 0, on_thinking)

    async def _ask(
        self, prompt_name: str, payload: dict[str, object], round_no: int, on_thinking: ThinkingSink
    ) -> RevisionResult:
        prompt = load_prompt(prompt_name)
        from langchain_core.messages import HumanMessage, SystemMessage

        messages = [SystemMessage(prompt.text), HumanMessage(fence(payload))]
        sent: list[str] = []  # what the stream showed: a failed revision's think-aloud is kept too

        def forward(delta: str) -> None:
            sent.append(delta)
            on_thinking(delta)

        streamer = ThinkingStreamer(forward)
        result = await self._client.structured(
            messages, Revision, on_text=streamer, on_reasoning=streamer.reasoning, cache=self._cache
        )
        revision = result.value
        return RevisionResult(
            round=round_no,
            problem=Problem(question=revision.question, solution=revision.solution) if revision else None,
            thinking=think_aloud(result.reasoning, revision.thinking) if revision else "".join(sent),
            error=result.error if revision is None else None,
            failure=result.failure if revision is None else None,
            **CallRecord.fields(result, self._client.model_id, prompt.version),
        )
