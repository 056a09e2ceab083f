"""The seven judges: six Bloom levels and the holistic Five-Keys agent."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from agents.fencing import fence
from agents.schemas import (
    HOLISTIC,
    CallRecord,
    HolisticReply,
    JudgeName,
    JudgeReply,
    JudgeResult,
    Problem,
)
from prompts import Prompt, load_prompt, version_of

if TYPE_CHECKING:  # the LLM stack loads when a model-backed judge is built, not for the offline panel
    from langchain_core.messages import BaseMessage

    from agents.llm.client import LLMClient, ResponseCache

# How a judge's request is laid out. ``panel_prefix`` (the default, issue 54): the panel's prefix
# (the rules and all seven levels), then the problem, then one line naming the judge's level — the
# calls of every round and problem begin with the same 1,000-odd tokens, and a round's seven share
# all but their last line. The layouts before it, kept for the benches that compare them:
# ``shared_prefix`` (issue 42: the rules, the problem, then the judge's own level) and
# ``level_first`` (the judge's own level, the rules, then the problem).
Layout = Literal["panel_prefix", "shared_prefix", "level_first"]


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


def judge_messages(
    request: JudgeRequest, prompt: Prompt, layout: Layout = "panel_prefix"
) -> list[BaseMessage]:
    """The conversation a judge is sent: a system message and one user message with the data."""
    from langchain_core.messages import HumanMessage, SystemMessage

    data = fence(judge_payload(request))
    if layout == "level_first":
        return [SystemMessage(f"{prompt.level}\n{prompt.rules}"), HumanMessage(data)]
    if layout == "shared_prefix":
        return [SystemMessage(prompt.rules), HumanMessage(f"{data}\n\n{prompt.level}")]
    return [SystemMessage(prompt.shared), HumanMessage(f"{data}\n\n{prompt.own}")]


def prompt_version(prompt: Prompt, layout: Layout) -> str:
    """The version of what a judge is told in ``layout`` (the older layouts: its rules and level)."""
    if layout == "panel_prefix":
        return prompt.version
    return version_of(prompt.name, f"{prompt.rules}\n{prompt.level}")


class LLMJudge:
    """A judge backed by an OpenAI-compatible chat model."""

    def __init__(
        self, client: LLMClient, cache: ResponseCache | None = None, layout: Layout = "panel_prefix"
    ) -> None:
        self._client = client
        self._cache = cache
        self._layout: Layout = layout

    async def assess(self, request: JudgeRequest) -> JudgeResult:
        """Ask the model for a verdict; after bounded re-asks, abstain and keep the raw output."""
        prompt = load_prompt(f"judge_{request.judge}")
        schema = HolisticReply if request.judge == HOLISTIC else JudgeReply
        messages = judge_messages(request, prompt, self._layout)
        result = await self._client.structured(messages, schema, cache=self._cache, kind="judge")
        verdict, failure = result.value, result.failure
        why = degenerate(verdict, request) if verdict is not None else None
        if why is not None:  # schema-valid, yet no judgement: an abstention (the call worked), never a score
            verdict = None
        return JudgeResult(
            judge=request.judge,
            round=request.round,
            verdict=verdict,
            abstain_reason=(why or result.error) if verdict is None else None,
            failure=failure if verdict is None else None,
            reasoning=result.reasoning,
            **CallRecord.fields(result, self._client.model_id, prompt_version(prompt, self._layout)),
        )


# A copy shorter than this many words is a quoted figure ("80 minutes"), which a sound verdict may
# well share with the solution; a longer one is the input handed back.
_COPY_WORDS = 6
_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> str:
    """Lower-case words and numbers only, one space apart: what a copy keeps of its source."""
    return " ".join(_WORD.findall(text.lower()))


def _junk(text: str) -> bool:
    """Text with no letter or digit at all (empty, or punctuation such as ``":{"``)."""
    return not _WORD.search(text)


# A sound verdict may restate a clause of the solution it agrees with ("the film ends at 9:00 pm"),
# so a field copies a solution only when it is most of it; a verdict has no reason to hand back six
# words of the question.
_COPY_SHARE = 0.8


def _copied(field: str, questions: list[str], solutions: list[str]) -> bool:
    words = _words(field)
    size = len(words.split())
    if size < _COPY_WORDS:
        return False
    return any(words in q for q in questions) or any(
        words in s and size >= _COPY_SHARE * len(s.split()) for s in solutions
    )


def degenerate(verdict: JudgeReply, request: JudgeRequest) -> str | None:
    """Why a schema-valid verdict holds no judgement (``degenerate: …``), or None for a real one.

    What a model too small for the task writes (Gemma 3 270M, issue 36): the given question or
    solution copied into its answer and rationale, score 0 with confidence 0, or the holistic
    judge's fields filled with punctuation. Each is an abstention with this reason and the raw
    output kept, never a score.
    """
    versions = [request.problem] + ([request.reference] if request.reference else [])
    questions = [_words(v.question) for v in versions if v.question.strip()]
    solutions = [_words(v.solution) for v in versions if v.solution.strip()]
    for name, text in (("rationale", verdict.rationale), ("own_answer", verdict.own_answer)):
        if _copied(text, questions, solutions):
            return f"degenerate: the {name} copies the problem it was given"
    if verdict.score == 0 and verdict.confidence == 0:
        return "degenerate: score 0 with confidence 0"
    junk = [name for name, text in _text_fields(verdict) if _junk(text)]
    if junk:
        return f"degenerate: no words in {', '.join(junk)}"
    return None


def _text_fields(verdict: JudgeReply) -> list[tuple[str, str]]:
    """The fields a verdict must write words in (an empty own_answer is allowed: 'none')."""
    fields = [("rationale", verdict.rationale)]
    if verdict.own_answer.strip():
        fields.append(("own_answer", verdict.own_answer))
    if isinstance(verdict, HolisticReply):
        fields += [(f"five_keys.{k}", v) for k, v in verdict.five_keys.model_dump().items()]
        fields += [(f"suggestions[{i}]", s) for i, s in enumerate(verdict.suggestions)]
    return fields
