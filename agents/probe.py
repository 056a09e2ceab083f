"""`thinkloop models check`: one tiny request per capability, and what the client will use.

The probe asks for a one-field JSON object three ways (json_schema, a tool call, streamed plain
text) and reads both the answers and what the wire layer saw (``agents/wire.py``): where the role
and the usage came, whether reasoning arrived in a field or a tag, what had to be fixed. Every
request is bounded by the model's ``max_tokens.probe`` (a base model rambles to the server's own
limit otherwise: 47–70 s per check against a small local model), and the server's slot count is
read where it tells it (``agents/slots.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from agents.llm import public_name
from agents.models import ModelSpec
from agents.reasoning import split_reasoning
from agents.schemas import Usage
from agents.slots import server_slots
from agents.structured import MODES, Mode, bind, has_tool_call, message_text
from agents.wire import Observed, capturing


class Sum(BaseModel):
    """The probe's answer."""

    answer: int


QUESTION = [
    SystemMessage("You answer arithmetic questions."),
    HumanMessage("What is 2 + 3? Give the answer."),
]


@dataclass
class Capabilities:
    """What an endpoint supports, as observed, and the mode thinkloop will use."""

    json_schema: str = "untested"
    tools: str = "untested"
    streaming: str = "untested"
    usage_in_stream: str = "untested"
    reasoning: str = "none seen"
    fixes: list[str] = field(default_factory=list)
    mode: Mode = "json_schema"
    slots: int | None = None  # requests the server serves at once (llama.cpp's /props), if it says
    usage: Usage = field(default_factory=Usage)  # what the probe's answered requests spent (for the ledgers)

    @property
    def reachable(self) -> bool:
        """Whether the endpoint answered any probe."""
        return not all(v.startswith("failed") for v in (self.json_schema, self.tools, self.streaming))

    def as_dict(self) -> dict[str, Any]:
        """A plain dict (for JSON output and the API)."""
        return {
            "json_schema": self.json_schema,
            "tools": self.tools,
            "streaming": self.streaming,
            "usage_in_stream": self.usage_in_stream,
            "reasoning": self.reasoning,
            "fixes": self.fixes,
            "mode": self.mode,
            "slots": self.slots,
        }


async def probe(spec: ModelSpec, chat: BaseChatModel) -> Capabilities:
    """Probe ``chat`` (built for ``spec``) once per capability."""
    found = Capabilities()
    found.slots = await server_slots(spec, chat)
    found.json_schema = await _structured(chat, "json_schema", spec, found)
    found.tools = await _structured(chat, "tool_calling", spec, found)
    await _streaming(chat, spec, found)
    working = {"json_schema": found.json_schema, "tool_calling": found.tools, "prompt": "supported"}
    found.mode = next(m for m in MODES if working[m] == "supported")
    return found


async def _structured(chat: BaseChatModel, mode: Mode, spec: ModelSpec, found: Capabilities) -> str:
    bound = bind(chat, Sum, mode).bind(max_tokens=spec.max_tokens.probe)
    try:
        with capturing(None) as observed:
            reply = await bound.ainvoke(QUESTION)
    except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
        return f"refused (HTTP {exc.status_code})"
    except openai.OpenAIError as exc:
        return f"failed ({public_name(exc)}: {str(exc)[:120]})"
    _note(found, observed)
    found.usage += _spent(spec, getattr(reply, "usage_metadata", None))
    reasoning, text = split_reasoning(message_text(reply), spec.reasoning_tag)
    if reasoning:
        found.reasoning = f"<{spec.reasoning_tag}> tag in the content"
    if mode == "tool_calling" and not has_tool_call(reply):
        return "ignored (answered in prose)"
    try:
        Sum.model_validate(json.loads(text))
    except ValueError:
        return "ignored (answered in prose)" if "{" not in text else "malformed JSON"
    return "supported"


async def _streaming(chat: BaseChatModel, spec: ModelSpec, found: Capabilities) -> None:
    try:
        with capturing(None) as observed:
            bounded = chat.bind(max_tokens=spec.max_tokens.probe)
            chunks = [chunk async for chunk in bounded.astream(QUESTION)]
    except openai.OpenAIError as exc:
        found.streaming = f"failed ({public_name(exc)})"
        return
    text = "".join(chunk.text for chunk in chunks)
    for chunk in chunks:
        found.usage += _spent(spec, getattr(chunk, "usage_metadata", None))
    _note(found, observed)
    role = (
        "missing"
        if observed.role_missing
        else ("in every chunk" if observed.role_repeated else "first chunk")
    )
    ended = "[DONE]" if observed.done else "no [DONE]"
    cut = "" if observed.finish_reason else ", no finish_reason (cut off)"
    found.streaming = f"ok (role: {role}, {ended}{cut})"
    found.usage_in_stream = observed.usage or "none"
    if split_reasoning(text, spec.reasoning_tag)[0]:
        found.reasoning = f"<{spec.reasoning_tag}> tag in the content"


def _spent(spec: ModelSpec, meta: Any) -> Usage:
    """One reply's (or stream chunk's) reported tokens, priced as a run's calls are."""
    if not meta:
        return Usage()
    tokens_in, tokens_out = int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))
    cost = spec.price.cost(tokens_in, tokens_out) if spec.price else None
    return Usage(input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost, calls=1)


def _note(found: Capabilities, observed: Observed) -> None:
    if observed.reasoning_field:
        found.reasoning = f"field `{observed.reasoning_field}`"
    notes = {
        "role missing from the stream: assembled as the assistant": observed.role_missing,
        "role repeated in every chunk: sent once": observed.role_repeated,
        f"{observed.empty_choice_frames} frame(s) without choices: skipped": observed.empty_choice_frames > 0,
        f"{observed.comments} SSE comment line(s): ignored": observed.comments > 0,
        "an error in an HTTP 200 body: raised as an HTTP error": observed.error_in_body,
    }
    for note, seen in notes.items():
        if seen and note not in found.fixes:
            found.fixes.append(note)
