"""The three ways to ask a server for a JSON object, and how to tell that one does not work.

* ``json_schema``: ``response_format`` with a strict JSON schema (constrained decoding where the
  server has it). Sent in the request body directly (``extra_body``), so langchain-openai streams
  through the SDK's plain chunk path rather than its beta helper, which concatenates a ``role``
  repeated in every chunk and keeps only the last chunk's usage.
* ``tool_calling``: one function whose parameters are the schema, named in ``tool_choice``.
* ``prompt``: no request feature at all; the schema is written into the system prompt and the
  JSON object is read out of the reply's text.

A server that refuses a mode (HTTP 400/422 naming it) or ignores it (prose where JSON or a tool
call should be) moves its client on to the next mode, for good.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any, Literal

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from pydantic import BaseModel

Mode = Literal["json_schema", "tool_calling", "prompt"]
MODES: tuple[Mode, ...] = ("json_schema", "tool_calling", "prompt")

# JSON-schema keywords that OpenAI's strict structured outputs reject; we validate them locally.
_UNSUPPORTED_KEYWORDS = {"maxLength", "minLength", "maxItems", "minItems", "title", "default"}
_NAMES_FORMAT = re.compile(r"response[_ ]format|json[_ ]?schema|structured output|guided", re.I)
_NAMES_TOOLS = re.compile(r"tool", re.I)


@functools.cache
def llm_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to the endpoint: pydantic's, minus keywords strict mode rejects, with
    every property required (strict mode demands it; a field with a default is then always written).

    Property order is field order: a model writes its fields in that order, so a schema that puts
    reasoning before a score gets the reasoning first. Computed once per schema (it was 2 % of a
    batch's CPU); callers treat it as read-only.
    """
    return _strip(schema.model_json_schema())  # type: ignore[no-any-return]


def schema_name(schema: type[BaseModel]) -> str:
    """The name a model is told its reply schema has (the ``json_schema`` or tool name, the prompt
    mode's instructions, the response cache's key): the schema's JSON title when its class sets one
    (``model_config = ConfigDict(title=...)``), else the class name. A class can then be renamed
    without changing a byte of what models are sent or what is cached."""
    return str(schema.model_config.get("title") or schema.__name__)


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _strip(v) for k, v in node.items() if k not in _UNSUPPORTED_KEYWORDS}
        if isinstance(out.get("properties"), dict):
            out["required"] = list(out["properties"])
        return out
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def bind(chat: BaseChatModel, schema: type[BaseModel], mode: Mode) -> Any:
    """The chat model set up to answer ``schema`` in ``mode``."""
    name, body = schema_name(schema), llm_schema(schema)
    if mode == "tool_calling":
        tool = {"type": "function", "function": {"name": name, "parameters": body}}
        return chat.bind_tools([tool], tool_choice=name)
    if mode == "json_schema":
        fmt = {"type": "json_schema", "json_schema": {"name": name, "schema": body, "strict": True}}
        return chat.bind(extra_body={"response_format": fmt})
    return chat


def instructions(schema: type[BaseModel]) -> str:
    """What the prompt mode adds to the conversation's last message."""
    return (
        "\n\n## Reply format\nReply with only one JSON object, no prose and no code fence, that matches "
        f"this JSON schema (named {schema_name(schema)}):\n{json.dumps(llm_schema(schema))}"
    )


def with_instructions(
    messages: Sequence[BaseMessage], schema: type[BaseModel], mode: Mode
) -> list[BaseMessage]:
    """The conversation for ``mode``: in prompt mode, the schema joins the last message. Last, not
    the system prompt: the judges' schemas differ (the holistic judge's has the Five Keys), and
    what differs between a round's calls goes after what they share (``agents.judges.Layout``)."""
    if mode != "prompt" or not messages or not isinstance(messages[-1], HumanMessage):
        return list(messages)
    return [*messages[:-1], HumanMessage(str(messages[-1].content) + instructions(schema))]


def refused(exc: openai.APIStatusError, mode: Mode) -> bool:
    """A 400 or 422 that names the feature ``mode`` relies on: the server does not take it."""
    if exc.status_code not in (400, 422):
        return False
    text = f"{exc.message} {exc.body}"
    return bool((_NAMES_FORMAT if mode == "json_schema" else _NAMES_TOOLS).search(text))


def ignored(message: AIMessage, text: str, mode: Mode) -> bool:
    """Prose where the mode guarantees JSON (json_schema) or a tool call (tool_calling)."""
    if mode == "prompt" or "{" in text:
        return False
    return mode == "json_schema" or not has_tool_call(message)


def has_tool_call(message: BaseMessage) -> bool:
    """Whether the reply called a tool."""
    if isinstance(message, AIMessageChunk) and message.tool_call_chunks:
        return True
    return isinstance(message, AIMessage) and bool(message.tool_calls or message.invalid_tool_calls)


def message_text(message: BaseMessage) -> str:
    """The structured payload of a reply: tool-call arguments if any, else the text content."""
    if isinstance(message, AIMessageChunk) and message.tool_call_chunks:
        return "".join(chunk.get("args") or "" for chunk in message.tool_call_chunks)
    if isinstance(message, AIMessage) and message.tool_calls:
        return json.dumps(message.tool_calls[0]["args"])
    if isinstance(message, AIMessage) and message.invalid_tool_calls:
        return message.invalid_tool_calls[0].get("args") or ""
    return message.text
