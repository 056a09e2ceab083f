"""Building the simulator's replies: chat completions, stream chunks, usage and fake content."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agents.simulator.fake import fake_object, reviser_hints
from agents.simulator.rules import Rule

if TYPE_CHECKING:
    from agents.simulator.server import SimulatorState


def role_of(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") in ("system", "developer"):
            content = message.get("content") or ""
            text = content if isinstance(content, str) else json.dumps(content)
            return text.strip().splitlines()[0].lstrip("# ").strip() if text.strip() else ""
    return ""


def all_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages", []))


def _schema(body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        spec = fmt["json_schema"]
        return spec.get("name", "reply"), spec.get("schema", {})
    tools = body.get("tools") or []
    if tools:
        function = tools[0]["function"]
        return function["name"], function.get("parameters", {})
    return None


def reply_text(state: SimulatorState, body: dict[str, Any], rule: Rule | None) -> str:
    if rule is not None and rule.content is not None:
        return rule.content
    if rule is not None and rule.json_body is not None:
        return json.dumps(rule.json_body)
    schema = _schema(body)
    if schema is None:
        return "This is a simulated reply."
    hints: dict[str, Any] = {
        "score": state.config.default_score,
        "confidence": state.config.default_confidence,
    }
    if schema[0] == "Revision":
        hints |= reviser_hints(all_text(body))
    reply = fake_object(schema[1], hints)
    if rule is not None and rule.score is not None and isinstance(reply, dict):
        reply["score"] = rule.score  # unclamped: lets tests send out-of-range scores
    return json.dumps(reply)


def _usage(body: dict[str, Any], reply: str) -> dict[str, int]:
    prompt = max(1, len(all_text(body)) // 4)
    completion = max(1, len(reply) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion(body: dict[str, Any], reply: str, as_tool: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply}
    if as_tool:
        call = {
            "id": "call_sim",
            "type": "function",
            "function": {"name": _tool_name(body), "arguments": reply},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "sim"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if as_tool else "stop"}],
        "usage": _usage(body, reply),
    }


def _tool_name(body: dict[str, Any]) -> str:
    return str(body["tools"][0]["function"]["name"])


def _chunk(body: dict[str, Any], cid: str, delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    payload = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "sim"),
        "choices": [choice],
    }
    return json.dumps(payload)


async def stream_chunks(
    state: SimulatorState, body: dict[str, Any], reply: str, as_tool: bool, truncate: bool
) -> AsyncIterator[str]:
    cid, size = f"chatcmpl-{uuid.uuid4().hex[:12]}", state.config.chunk_chars
    pieces = [reply[i : i + size] for i in range(0, len(reply), size)] or [""]
    if truncate:
        pieces = pieces[: max(1, len(pieces) // 2)]
    yield _chunk(body, cid, {"role": "assistant", "content": ""})
    for index, piece in enumerate(pieces):
        if as_tool:
            call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
            if index == 0:
                call |= {"id": "call_sim", "type": "function"}
                call["function"]["name"] = _tool_name(body)
            yield _chunk(body, cid, {"tool_calls": [call]})
        else:
            yield _chunk(body, cid, {"content": piece})
        await asyncio.sleep(0)
    if truncate:
        return
    yield _chunk(body, cid, {}, "tool_calls" if as_tool else "stop")
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "sim"),
            "choices": [],
            "usage": _usage(body, reply),
        }
        yield json.dumps(usage)
    yield "[DONE]"
