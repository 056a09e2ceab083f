"""How real OpenAI-compatible servers answer, as simulator profiles (``--profile vllm``).

Each profile reproduces the wire behaviour of one server family as its own documentation and
source code describe it (the README's conformance matrix lists the sources). The reasoning text is
what a reasoning model of that family would put in its reasoning channel.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Profile(BaseModel):
    """One server family's behaviour on /v1/chat/completions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    server: str = Field(description="The server it imitates")
    role: Literal["first", "every", "none"] = Field(default="first", description="role in stream deltas")
    first_frame_empty: bool = Field(default=False, description="a first chunk with choices [] (Azure)")
    usage: Literal[
        "on_request", "always_with_choices", "x_groq", "every_chunk", "in_last_content", "never"
    ] = "on_request"
    json_schema: Literal["supported", "ignored", "reject_400", "reject_422"] = "supported"
    reject_message: str = "response_format json_schema is not supported"
    tool_fragments: Literal["fragments", "whole"] = "fragments"
    tool_header_every_fragment: bool = Field(default=False, description="id, type and name in every fragment")
    tool_args_object: bool = Field(default=False, description="tool-call arguments as a JSON object")
    content_null_with_tools: bool = True
    sse_comments: tuple[str, ...] = Field(default=(), description="comment lines between events")
    done: bool = Field(default=True, description="data: [DONE] at the end")
    stop_reason: str = "stop"
    retry_after: Literal["seconds", "http_date", "milliseconds", "absent"] = "seconds"
    reasoning: Literal["none", "reasoning_content", "reasoning", "reasoning_details", "think_tag"] = "none"
    error_shape: Literal["openai", "string", "flat", "array"] = Field(
        default="openai",
        description="HTTP error bodies: OpenAI's object, a string, vLLM's old flat object, an array",
    )
    azure: bool = Field(default=False, description="deployment URLs with api-version and an api-key header")
    bare_chunks: bool = Field(default=False, description="chunks without id, object, created and model")
    prompt_cache_min_tokens: int | None = Field(
        default=None,
        ge=0,
        description="report `usage.prompt_tokens_details.cached_tokens` as OpenAI does: the longest "
        "prefix (four characters a token) shared with a request answered before, counted in blocks of "
        "128 tokens from this minimum (OpenAI's: 1024), 0 below it; None: the field is never sent",
    )
    reported_model: str | None = Field(
        default=None,
        description="the model id every reply reports in `model` (None: the id the request asked for); "
        "a server that serves another model behind the same name",
    )
    system_fingerprint: str | None = Field(
        default=None,
        description="the `system_fingerprint` every reply (and every stream chunk) carries, as OpenAI "
        "sends its server build; None: the field is never sent",
    )


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(name="openai", server="OpenAI"),
        Profile(name="vllm", server="vLLM", reasoning="reasoning"),
        Profile(
            name="ollama",
            server="Ollama",
            tool_fragments="whole",
            reasoning="reasoning",
            retry_after="absent",
        ),
        Profile(
            name="llamacpp", server="llama.cpp server", reasoning="reasoning_content", retry_after="absent"
        ),
        Profile(
            name="lmstudio",
            server="LM Studio",
            role="every",
            reasoning="reasoning_content",
            error_shape="string",
        ),
        Profile(name="sglang", server="SGLang", reasoning="reasoning_content"),
        Profile(
            name="tgi",
            server="Hugging Face TGI",
            role="every",
            json_schema="reject_422",
            reject_message="Failed to deserialize the JSON body into the target type: "
            "response_format: missing field `value`",
            tool_header_every_fragment=True,
            sse_comments=(":",),
            retry_after="absent",
            reasoning="think_tag",
            error_shape="string",
        ),
        Profile(
            name="litellm", server="LiteLLM proxy", usage="always_with_choices", reasoning="reasoning_content"
        ),
        Profile(
            name="openrouter",
            server="OpenRouter",
            role="every",
            usage="always_with_choices",
            sse_comments=(": OPENROUTER PROCESSING",),
            reasoning="reasoning_details",
        ),
        Profile(
            name="azure",
            server="Azure OpenAI",
            azure=True,
            first_frame_empty=True,
            retry_after="milliseconds",
        ),
        Profile(
            name="deepseek",
            server="DeepSeek API",
            json_schema="reject_400",
            reject_message="This response_format type is unavailable now",
            sse_comments=(": keep-alive",),
            reasoning="reasoning_content",
        ),
        Profile(name="groq", server="Groq", usage="x_groq", reasoning="reasoning", role="every"),
        Profile(
            name="together",
            server="Together AI",
            usage="in_last_content",
            stop_reason="eos",
            reasoning="reasoning",
        ),
        Profile(
            name="gemini", server="Gemini (OpenAI-compatible)", error_shape="array", retry_after="absent"
        ),
        Profile(name="anthropic", server="Anthropic (OpenAI SDK compatibility)", json_schema="ignored"),
        # Not a product: the shapes a home-made gateway sends that no product above does.
        Profile(
            name="gateway",
            server="a minimal gateway",
            role="none",
            done=False,
            bare_chunks=True,
            usage="every_chunk",
            tool_args_object=True,
            error_shape="flat",
        ),
    )
}
PROFILE_NAMES = tuple(PROFILES)
REASONING_TEXT = (
    "Let me work through the problem myself before I answer: check each quantity, redo the "
    "computation, and decide whether the question can be answered as it stands."
)
