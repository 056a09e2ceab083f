"""The simulator's Server-Sent Events stream, written byte for byte the way the profile's server does."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from agents.simulator.profiles import REASONING_TEXT, Profile
from agents.simulator.replies import (
    _envelope,
    _reasoning_fields,
    _tool_name,
    as_tool_call,
    error_body,
    usage_of,
)
from agents.simulator.rules import Rule


def _frame(data: Any) -> str:
    return f"data: {json.dumps(data)}\n\n"


@dataclass
class _Writer:
    """Builds one stream's chunks: the envelope, the role policy, usage as the profile places it."""

    body: dict[str, Any]
    reply: str
    profile: Profile
    cid: str
    role_sent: bool = False
    produced: int = 0

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        if self.profile.role == "every" or (self.profile.role == "first" and not self.role_sent):
            delta = {"role": "assistant", **delta}
        self.role_sent = True
        out = _envelope(self.body, self.profile, "chat.completion.chunk", self.cid)
        out["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
        if self.profile.usage == "every_chunk":
            out["usage"] = usage_of(self.body, self.reply, self.produced)
        return _frame(out | extra)

    def usage_frame(self, with_choices: bool) -> str:
        out = _envelope(self.body, self.profile, "chat.completion.chunk", self.cid)
        choices = [{"index": 0, "delta": {"content": ""}, "finish_reason": None}] if with_choices else []
        return _frame(out | {"choices": choices, "usage": usage_of(self.body, self.reply)})


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


async def stream_events(
    body: dict[str, Any],
    reply: str,
    profile: Profile,
    rule: Rule | None,
    chunk_chars: int,
    finish: str | None = None,
    chunk_delay_s: float = 0.0,
) -> AsyncIterator[str]:
    """The whole stream as SSE text: comments, frames, reasoning, the answer, finish, usage, [DONE].
    ``finish`` is the reason the server's own limit gave (``length``); ``chunk_delay_s`` is the time
    each piece takes to generate."""
    writer = _Writer(body, reply, profile, f"chatcmpl-{uuid.uuid4().hex[:12]}")
    tool = as_tool_call(body)
    pieces = _pieces(reply, chunk_chars)
    cut = bool(rule and (rule.truncate_stream or rule.finish_length))
    if cut:
        pieces = pieces[: max(1, len(pieces) // 2)]
    for comment in profile.sse_comments:
        yield f"{comment}\n\n"
    if rule is not None and rule.prompt_s:
        yield ": \n\n"  # the headers go with the first bytes; then nothing while the prompt is read
        await asyncio.sleep(rule.prompt_s)
    if profile.first_frame_empty:  # Azure: the prompt's content-filter results, before any choice
        envelope = _envelope(body, profile, "chat.completion.chunk", "")
        yield _frame(envelope | {"choices": [], "prompt_filter_results": [{"prompt_index": 0}]})
    if rule is not None and rule.error_in_200:
        yield _frame(error_body(profile, 502, "simulated upstream error after the 200"))
        return
    async for frame in _reasoning(writer, profile, tool, chunk_chars):
        yield frame
    for index, piece in enumerate(pieces):
        writer.produced += len(piece)
        frame = _tool_delta(writer, body, piece, index) if tool else writer.chunk({"content": piece})
        if frame:
            yield frame
        if profile.sse_comments and index % 3 == 2:
            yield f"{profile.sse_comments[0]}\n\n"
        stall = rule.stall_s if rule is not None and index == 0 else 0.0
        await asyncio.sleep(stall or chunk_delay_s)
    if rule is not None and rule.truncate_stream:
        return  # dropped: no finish reason, no [DONE]
    timings = rule.timings_prompt_ms if rule is not None else None
    async for frame in _ending(writer, body, tool, "length" if cut else finish, timings):
        yield frame


async def _reasoning(writer: _Writer, profile: Profile, tool: bool, size: int) -> AsyncIterator[str]:
    if profile.reasoning == "none":
        return
    if profile.reasoning == "think_tag":
        if not tool:
            for piece in _pieces(f"<think>{REASONING_TEXT}</think>\n", size):
                yield writer.chunk({"content": piece})
        return
    for piece in _pieces(REASONING_TEXT, size):
        yield writer.chunk({"content": "", **_reasoning_fields(profile, piece)})


def _tool_delta(writer: _Writer, body: dict[str, Any], piece: str, index: int) -> str:
    profile = writer.profile
    if profile.tool_fragments == "whole":
        if index:
            return ""
        arguments: Any = writer.reply
        if profile.tool_args_object:
            arguments = json.loads(writer.reply)
        function = {"name": _tool_name(body), "arguments": arguments}
        whole = {"index": 0, "id": "call_sim", "type": "function", "function": function}
        return writer.chunk({"content": "", "tool_calls": [whole]})
    call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
    if index == 0 or profile.tool_header_every_fragment:
        call |= {"id": "call_sim", "type": "function"}
        call["function"]["name"] = _tool_name(body)
    content: dict[str, Any] = {} if profile.content_null_with_tools else {"content": ""}
    return writer.chunk({**content, "tool_calls": [call]})


async def _ending(
    writer: _Writer, body: dict[str, Any], tool: bool, finish: str | None, prompt_ms: float | None
) -> AsyncIterator[str]:
    profile = writer.profile
    reason = finish or ("tool_calls" if tool else profile.stop_reason)
    extra: dict[str, Any] = {}
    if prompt_ms is not None:  # llama.cpp's own figures, beside the OpenAI-shaped usage
        prompt_n = usage_of(body, writer.reply)["prompt_tokens"]
        extra["timings"] = {"prompt_n": prompt_n, "prompt_ms": prompt_ms}
    if profile.usage == "in_last_content":
        extra["usage"] = usage_of(body, writer.reply)
    elif profile.usage == "x_groq":
        extra["x_groq"] = {"usage": usage_of(body, writer.reply)}
    yield writer.chunk({}, reason, **extra)
    wanted = bool((body.get("stream_options") or {}).get("include_usage"))
    if profile.usage == "on_request" and wanted:
        yield writer.usage_frame(with_choices=False)
    elif profile.usage == "always_with_choices":
        yield writer.usage_frame(with_choices=True)
    if profile.done:
        yield "data: [DONE]\n\n"
