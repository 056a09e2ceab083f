"""Schemas shared by every agent: the problem, LLM output formats and judged outcomes."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from agents.llm.calls import CallFailure, Usage

MAX_QUESTION_CHARS = 8_000
MAX_SOLUTION_CHARS = 8_000


class BloomLevel(StrEnum):
    """The six levels of the revised Bloom's taxonomy, lowest first."""

    REMEMBER = "remember"
    UNDERSTAND = "understand"
    APPLY = "apply"
    ANALYZE = "analyze"
    EVALUATE = "evaluate"
    CREATE = "create"


HOLISTIC = "holistic"
JudgeName = Literal["remember", "understand", "apply", "analyze", "evaluate", "create", "holistic"]
JUDGES: tuple[JudgeName, ...] = (
    "remember",
    "understand",
    "apply",
    "analyze",
    "evaluate",
    "create",
    "holistic",
)


def _no_nul(text: str) -> str:
    # U+0000 cannot be stored in PostgreSQL text and has no place in a word problem.
    if "\x00" in text:
        raise ValueError("the text contains a NUL (U+0000) character")
    return text


QuestionText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUESTION_CHARS),
    AfterValidator(_no_nul),
]
SolutionText = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=MAX_SOLUTION_CHARS), AfterValidator(_no_nul)
]


class Problem(BaseModel):
    """One version of a math word problem: the question and (optionally) its stated solution."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: QuestionText = Field(description="The word problem's text, as pupils would read it")
    solution: SolutionText = Field(default="", description="Its stated solution (may be empty)")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


Score = Annotated[int, Field(ge=0, le=100)]


class JudgeReply(_Strict):
    """What one Bloom-level judge returns, in the order the model writes it.

    A model writes the fields of a strict JSON schema in their declared order, so the judge first
    answers the question itself (``own_answer``), then reasons (``rationale``), and only then puts
    a number on it: the score follows from the reasoning instead of being justified after the fact.
    ``own_answer`` has a default only for the offline rubric panel, which solves nothing; the
    schema sent to a model requires every field (:func:`agents.llm.structured.llm_schema`).
    """

    # The name models are told (the schema's title: agents.llm.structured.schema_name), in every
    # request and response-cache key: fixed here, apart from the class's name.
    model_config = ConfigDict(title="JudgeVerdict")

    own_answer: str = Field(
        default="",
        max_length=300,
        description="Your own final answer to the question, worked out from the question alone "
        "before reading the given solution; 'unanswerable: <why>' when the question has none",
    )
    rationale: str = Field(
        max_length=2_000,
        description="Two or three sentences: how the given solution compares with your answer and "
        "the concrete defect at this level, if any",
    )
    score: Score = Field(description="0-100 on this level's anchored scale, following from the rationale")
    confidence: Score = Field(description="0-100: how sure the judge is of its score")


class FiveKeys(_Strict):
    """The holistic judge's short finding for each of the Five Keys (language complexity for the
    grade — vocabulary and sentence structure — is part of ``representations``)."""

    concepts: str = Field(max_length=500, description="The concepts and domains it exercises")
    prerequisites: str = Field(max_length=500, description="The skills a solver needs, for the grade")
    representations: str = Field(
        max_length=500,
        description="Whether its representations fit the mathematics, and its vocabulary and sentence "
        "structure the grade",
    )
    alternative_values: str = Field(
        max_length=500, description="Whether the structure holds for other reasonable values"
    )
    narrative: str = Field(max_length=500, description="Whether the story is realistic and consistent")


class HolisticReply(JudgeReply):
    """What the holistic language-and-pedagogy judge returns: a verdict plus advice."""

    model_config = ConfigDict(title="HolisticVerdict")  # its name to models, as the judges' reply

    five_keys: FiveKeys
    suggestions: list[Annotated[str, Field(max_length=500)]] = Field(max_length=8)


# The old names of the replies, which checkpoints written before the rename carry (graphs/checkpoint.py).
JudgeVerdict = JudgeReply
HolisticVerdict = HolisticReply


class Solution(_Strict):
    """What the solver returns: its working first, then its final answer (as words and as a number)."""

    working: str = Field(max_length=4_000, description="The solution worked out step by step, briefly")
    answer: str = Field(max_length=200, description="The final answer in a few words, with its unit")
    value: float | None = Field(
        description="The final answer as one plain number in `unit`; null when it is not one number "
        "(a time of day, a yes/no, several values, or no answer exists)"
    )
    unit: str = Field(max_length=40, description="The unit of `value` ('minutes', 'dollars'); '' for none")


class Revision(_Strict):
    """What the model under test returns: its reasoning first, then the revised problem."""

    thinking: str = Field(max_length=20_000, description="Think-aloud reasoning about the feedback")
    question: QuestionText
    solution: SolutionText


class CallRecord(BaseModel):
    """Where an output of one model call comes from, declared once: the model asked and the one the
    endpoint reported, the server's build, the prompt's version, what the call cost, and the raw
    replies. A judge's and the reviser's results are call records; the tables ``judgements`` and
    ``revisions`` keep these fields as ``app.models.CallRecordColumns``, filled from them by one
    function (``app.runs.repository.call_record``)."""

    model_config = ConfigDict(frozen=True)

    raw_outputs: list[str] = Field(default_factory=list)
    model: str
    reported_model: str | None = Field(
        default=None,
        description="The model id the endpoint reported in its reply (the chat completion's `model`; "
        '"" when it named none; null when it never answered): what a panel\'s identity holds',
    )
    system_fingerprint: str | None = Field(
        default=None,
        description="The `system_fingerprint` the endpoint sent with its reply (the server's build and "
        "configuration, OpenAI's field); null when it sent none or the reply came from the cache",
    )
    prompt_version: str
    usage: Usage = Field(default_factory=Usage)

    @staticmethod
    def fields(reply: Reply, model: str, prompt_version: str) -> dict[str, Any]:
        """A call record's fields, from the reply of the call made to ``model`` with the prompt of
        ``prompt_version`` (the one place they are filled)."""
        return {
            "raw_outputs": reply.raw_outputs,
            "model": model,
            "reported_model": reply.reported_model,
            "system_fingerprint": reply.system_fingerprint,
            "prompt_version": prompt_version,
            "usage": reply.usage,
        }


class Reply(Protocol):
    """What a call record reads of a model call's reply (``agents.llm.client.StructuredResult``)."""

    @property
    def raw_outputs(self) -> list[str]: ...
    @property
    def reported_model(self) -> str | None: ...
    @property
    def system_fingerprint(self) -> str | None: ...
    @property
    def usage(self) -> Usage: ...


class JudgeResult(CallRecord):
    """A judge's result for one round: a verdict, or an abstention with the raw output kept.

    An abstention with a ``failure`` is a call that failed (the endpoint or the reply); one
    without is a judge that declined to score (none of its criteria applies).
    """

    model_config = ConfigDict(frozen=True)

    judge: JudgeName
    round: int
    verdict: JudgeReply | HolisticReply | None = None
    abstain_reason: str | None = None
    failure: CallFailure | None = None
    reasoning: str = Field(default="", description="A reasoning model's own thinking, apart from its verdict")

    @property
    def abstained(self) -> bool:
        """True when the judge gave no usable verdict."""
        return self.verdict is None


class RevisionResult(CallRecord):
    """The reviser's result: the revised problem and its think-aloud, or a failure."""

    model_config = ConfigDict(frozen=True)

    round: int
    problem: Problem | None
    thinking: str = ""
    error: str | None = None
    failure: CallFailure | None = None
    not_revised: list[str] = Field(
        default_factory=list,
        description="Why each attempt that did not revise was refused, in order (agents.revision_check); "
        "its problem, thinking, raw outputs and usage are those of every attempt of the round",
    )


class SolverResult(BaseModel):
    """The solver's result for one round: its solution of the question alone, or the failed call.

    A failed call (``failure``) is neither a pass nor a fail of the version: nothing is compared.
    """

    model_config = ConfigDict(frozen=True)

    round: int = Field(description="The round whose question it solved")
    solution: Solution | None = Field(
        default=None, description="Its own worked solution and final answer; null when its call failed"
    )
    failure: CallFailure | None = Field(
        default=None,
        description="For a failed call: model, endpoint host, HTTP status, exception (nothing was compared)",
    )
    raw_outputs: list[str] = Field(
        default_factory=list, description="The model's raw replies, kept for audit"
    )
    reasoning: str = Field(default="", description="A reasoning model's own thinking, apart from its answer")
    model: str = Field(description="The model that solved it")
    reported_model: str | None = Field(
        default=None,
        description="The model id the endpoint reported in its reply (the chat completion's `model`; "
        '"" when it named none; null when it never answered): what a panel\'s identity holds',
    )
    prompt_version: str = Field(description="Version of the solver's prompt")
    usage: Usage = Field(default_factory=Usage, description="Tokens, latency and cost of its calls")
