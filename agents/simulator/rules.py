"""How the simulator answers: global settings and scripted per-request rules."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.simulator.profiles import PROFILES, Profile


class Rule(BaseModel):
    """Answer matching requests differently; the first matching rule with uses left wins.

    Matching: ``role`` is a regex searched in the heading that names the prompt ('Judge: Remember'
    after a judge's problem, 'Reviser' or 'Solver' atop the system message; ``replies.role_of``);
    ``contains`` is a substring of any message.
    """

    model_config = ConfigDict(extra="forbid")

    role: str | None = None
    contains: str | None = None
    times: int | None = Field(default=None, ge=1, description="uses before the rule expires")
    rate: float = Field(default=1.0, ge=0, le=1, description="share of matching requests it applies to")
    status: int | None = Field(default=None, ge=400, le=599, description="answer with this HTTP error")
    error_report: dict[str, Any] | None = Field(
        default=None,
        description="with status: fields added to the error body beside 'error', e.g. the usage or "
        "timings of a prompt the server read before it failed",
    )
    retry_after: float | None = Field(default=None, ge=0, description="Retry-After seconds with status")
    delay_s: float = Field(default=0.0, ge=0, description="extra latency (a timeout if long enough)")
    content: str | None = Field(default=None, description="raw reply text, used as is")
    json_body: dict[str, Any] | None = Field(default=None, alias="json", description="reply object")
    score: int | None = Field(default=None, description="put this into every integer 'score' field")
    answer: str | None = Field(
        default=None,
        description="the solver's final answer, e.g. '40 minutes' (its number and unit fill 'value' and "
        "'unit'; a judge's 'own_answer' takes it too)",
    )
    malformed: bool = Field(default=False, description="reply with JSON cut in half")
    truncate_stream: bool = Field(default=False, description="streaming: stop half way, no [DONE]")
    reject_json_schema: bool = Field(default=False, description="400 if response_format is sent")
    error_in_200: bool = Field(
        default=False, description="an error in an HTTP 200 (mid-stream when streaming)"
    )
    finish_length: bool = Field(
        default=False, description="cut the reply at the token limit (finish_reason length)"
    )
    ramble: bool = Field(
        default=False,
        description="write an endless reply (a small base model's way): cut at the request's max_tokens, "
        "else at the server's default_max_tokens, with finish_reason length",
    )
    prompt_s: float = Field(
        default=0.0,
        ge=0,
        description="streamed: seconds between the headers (sent at once) and the first chunk, as "
        "llama-server reading the prompt",
    )
    timings_prompt_ms: float | None = Field(
        default=None,
        ge=0,
        description="streamed: report llama.cpp's timings (prompt_n, prompt_ms) in the last chunk",
    )
    stall_s: float = Field(
        default=0.0, ge=0, description="streaming: stop this long after the first piece (a server gone quiet)"
    )

    def matches(self, role: str, text: str) -> bool:
        """Whether this rule applies to a request with ``role`` and full message ``text``."""
        if self.role is not None and not re.search(self.role, role, re.I):
            return False
        return self.contains is None or self.contains in text


class ModelFile(BaseModel):
    """The weights a simulated server reports it serves (llama.cpp's /props and /v1/models meta)."""

    model_config = ConfigDict(extra="forbid")

    path: str = "/models/sim-q4_k_m.gguf"
    size: int = Field(default=253_115_712, ge=1, description="bytes")
    n_params: int = Field(default=268_098_176, ge=1)
    n_ctx_train: int = Field(default=32_768, ge=1)


class SimConfig(BaseModel):
    """Settings for every request: latency, default scores, and the concurrency gate."""

    model_config = ConfigDict(extra="forbid")

    latency_s: float = Field(default=0.0, ge=0)
    default_score: int = Field(default=90, ge=0, le=100)
    default_confidence: int = Field(default=80, ge=0, le=100)
    chunk_chars: int = Field(default=16, ge=1, description="characters per streamed chunk")
    chunk_delay_s: float = Field(
        default=0.0, ge=0, description="generation time per chunk (a whole reply takes it for every chunk)"
    )
    slots: int = Field(
        default=0,
        ge=0,
        description="requests answered at once, the rest wait unanswered in a queue (llama.cpp's "
        "--parallel); with slots, GET /props reports them as total_slots. 0: no limit and no /props (404)",
    )
    context: int = Field(
        default=8192,
        ge=1,
        description="tokens one request may hold (a slot's n_ctx): with slots, /props and /v1/models "
        "report it and a longer prompt is refused with llama-server's HTTP 400; vLLM's max_model_len",
    )
    model_file: ModelFile | None = Field(
        default=None,
        description="the model file reported (with slots: /props model_path, /v1/models meta; the vllm "
        "profile: /v1/models root); None: none reported",
    )
    default_max_tokens: int = Field(
        default=1024, ge=1, description="where a rambling reply stops when the request sends no max_tokens"
    )
    gate: int = Field(default=0, ge=0, description="hold answers until this many requests arrived")
    gate_timeout_s: float = Field(default=5.0, gt=0)
    seed: int = Field(default=0, description="seeds the draws of rules with a rate below 1")
    profile: str = Field(default="openai", description="the server whose wire behaviour to imitate")
    profile_overrides: dict[str, Any] = Field(
        default_factory=dict, description="profile fields to change, e.g. {'role': 'none'}"
    )
    rules: list[Rule] = Field(default_factory=list)

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, name: str) -> str:
        if name not in PROFILES:
            raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}")
        return name

    @property
    def server(self) -> Profile:
        """The profile's behaviour, with any overrides."""
        base = PROFILES[self.profile]
        return (
            Profile.model_validate(base.model_dump() | self.profile_overrides)
            if self.profile_overrides
            else base
        )
