"""HTTP schemas of the model catalog."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_EXAMPLE_CAPABILITIES: dict[str, Any] = {
    "json_schema": "refused (HTTP 422)",
    "tools": "supported",
    "streaming": "ok (role in the first chunk, [DONE] sent)",
    "usage_in_stream": "in the last chunk",
    "reasoning": "<think> tag in the content",
    "fixes": ["content null with tool calls"],
    "mode": "tool_calling",
}
_EXAMPLE_MODEL: dict[str, Any] = {
    "name": "qwen-local",
    "offline": False,
    "model": "qwen2.5-7b-instruct",
    "endpoint": "10.0.0.5:8000",
    "provider": "openai",
    "mode": "tool_calling",
    "learned": ["probed by models check: json_schema refused (HTTP 422)"],
    "reasoning": "auto",
    "capabilities": _EXAMPLE_CAPABILITIES,
}


class Capabilities(BaseModel):
    """What a probe of the endpoint found (``POST /v1/models/{name}/check``)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_CAPABILITIES]})

    json_schema: str = Field(description="supported, ignored (prose), refused (HTTP 4xx) or failed")
    tools: str = Field(description="supported, ignored (prose), refused (HTTP 4xx) or failed")
    streaming: str = Field(description="ok, with where the role came and whether [DONE] was sent")
    usage_in_stream: str = Field(description="where the stream carried token usage, or none")
    reasoning: str = Field(description="where a reasoning model's thinking arrives, or 'none seen'")
    fixes: list[str] = Field(description="what the wire layer had to rewrite into OpenAI's shape")
    mode: Literal["json_schema", "tool_calling", "prompt"] = Field(description="how JSON will be asked for")


class ModelPublic(BaseModel):
    """A usable model name: the offline panel, or a configured endpoint."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_MODEL]})

    name: str = Field(description="The name to pass as model or judge_model")
    offline: bool = Field(description="True for the built-in deterministic panel, which needs no endpoint")
    model: str | None = Field(description="The model id the endpoint expects")
    endpoint: str | None = Field(description="The endpoint's host[:port]")
    provider: Literal["openai", "azure"] | None = Field(
        default=None, description="openai or azure for an endpoint; null for the offline panel"
    )
    mode: Literal["json_schema", "tool_calling", "prompt"] | None = Field(
        description="How this process asks it for JSON now (learned from refusals, or from a check)"
    )
    learned: list[str] = Field(description="Why the mode changed, oldest first")
    reasoning: str | None = Field(description="Where reasoning is looked for: auto, field, tag or none")
    capabilities: Capabilities | None = Field(description="The last check in this process; null before one")


class ModelList(BaseModel):
    """Every usable model name."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"items": [_EXAMPLE_MODEL]}]})

    items: list[ModelPublic] = Field(description="Every usable model, the offline panel first")
