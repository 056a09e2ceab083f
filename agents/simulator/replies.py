"""Building the simulator's replies the way the configured server profile answers."""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from email.utils import formatdate
from typing import TYPE_CHECKING, Any

from agents.simulator.fake import fake_object, reviser_hints, solver_hints
from agents.simulator.profiles import REASONING_TEXT, Profile
from agents.simulator.rules import Rule

if TYPE_CHECKING:
    from agents.simulator.server import SimulatorState

PROSE = "I read the problem carefully. It is mostly clear, though the numbers could be checked once more."
_PROMPTED = re.compile(r"matches this JSON schema \(named (\w+)\):\n(\{.*\})\s*$", re.S)


def role_of(body: dict[str, Any]) -> str:
    """Who is asked: the heading that names the prompt ('Judge: Apply', 'Reviser', 'Solver', ...).

    A judge's request names its level in a heading after the problem (the rules before it are every
    judge's); other requests, and a judge's in the level-first layout, name it in the system
    prompt's first line. Data never holds a heading: it is fenced JSON, one escaped string a value.
    """
    messages = body.get("messages", [])
    for message in messages:
        if message.get("role") == "user":
            for line in _text(message).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    for message in messages:
        if message.get("role") in ("system", "developer"):
            text = _text(message).strip()
            return text.splitlines()[0].lstrip("# ").strip() if text else ""
    return ""


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    return content if isinstance(content, str) else json.dumps(content)


def all_text(body: dict[str, Any]) -> str:
    """Every message's content, joined."""
    return "\n".join(str(m.get("content") or "") for m in body.get("messages", []))


def wants_schema(body: dict[str, Any]) -> bool:
    """The request sends ``response_format`` with a JSON schema."""
    return (body.get("response_format") or {}).get("type") == "json_schema"


def _schema(body: dict[str, Any], profile: Profile) -> tuple[str, dict[str, Any]] | None:
    if wants_schema(body) and profile.json_schema == "supported":
        spec = body["response_format"]["json_schema"]
        return spec.get("name", "reply"), spec.get("schema", {})
    tools = body.get("tools") or []
    if tools:
        function = tools[0]["function"]
        return function["name"], function.get("parameters", {})
    prompted = _PROMPTED.search(str((body.get("messages") or [{}])[-1].get("content") or ""))
    if prompted:  # thinkloop's prompt mode writes the schema at the end of the last message
        return prompted.group(1), json.loads(prompted.group(2))
    return None


# What a small base model writes inside a JSON string when nothing stops it: the input, again and again.
_RAMBLE = "the solution says the answer is the solution and the question says the answer is "


def requested_max_tokens(body: dict[str, Any]) -> int | None:
    """The request's bound on the reply (``max_completion_tokens``, or the older ``max_tokens``)."""
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def bounded(
    body: dict[str, Any], reply: str, rule: Rule | None, default_limit: int
) -> tuple[str, str | None]:
    """The reply as a server with a token limit sends it, and ``length`` when the limit cut it.

    A rambling rule writes without end; a generated reply is cut only where it exceeds the request's
    bound (four characters a token, as ``usage_of`` counts). Scripted ``content`` is sent as it is.
    """
    limit = requested_max_tokens(body)
    if rule is not None and rule.ramble:
        chars = 4 * (limit or default_limit)
        text = '{"own_answer": "' + _RAMBLE * (chars // len(_RAMBLE) + 1)
        return text[:chars], "length"
    if limit is not None and (rule is None or rule.content is None) and len(reply) > 4 * limit:
        return reply[: 4 * limit], "length"
    return reply, None


def reply_text(state: SimulatorState, body: dict[str, Any], rule: Rule | None) -> str:
    """The answer's text: a rule's content, else a valid object for the requested schema, else prose."""
    if rule is not None and rule.content is not None:
        return rule.content
    if rule is not None and rule.json_body is not None:
        return json.dumps(rule.json_body)
    schema = _schema(body, state.config.server)
    if schema is None:
        return PROSE
    hints: dict[str, Any] = {
        "score": state.config.default_score,
        "confidence": state.config.default_confidence,
        # Each judge writes its own rationale: seven identical ones are a degenerate panel.
        "rationale": f"simulated rationale of {role_of(body) or 'a judge'}",
    }
    if schema[0] == "Revision":
        hints |= reviser_hints(all_text(body))
    if schema[0] == "Solution":
        hints |= solver_hints(rule.answer if rule is not None else None)
    elif rule is not None and rule.answer is not None:
        hints["own_answer"] = rule.answer
    reply = fake_object(schema[1], hints)
    if rule is not None and rule.score is not None and isinstance(reply, dict):
        reply["score"] = rule.score  # unclamped: lets tests send out-of-range scores
    return json.dumps(reply)


def as_tool_call(body: dict[str, Any]) -> bool:
    """Answer with a tool call: tools were offered and no honoured response_format asks for content."""
    return bool(body.get("tools")) and not wants_schema(body)


# The body key under which the server hands a request's cached prompt tokens to ``usage_of``.
CACHED_KEY = "_sim_cached_tokens"


def usage_of(body: dict[str, Any], reply: str, produced: int | None = None) -> dict[str, Any]:
    """Token usage as a length estimate (``produced`` characters of the reply so far, for streams),
    with OpenAI's ``prompt_tokens_details.cached_tokens`` when the profile reports a prompt cache."""
    prompt = max(1, len(all_text(body)) // 4)
    completion = max(1, (len(reply) if produced is None else produced) // 4)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    cached = body.get(CACHED_KEY)
    if isinstance(cached, int):
        usage["prompt_tokens_details"] = {"cached_tokens": min(cached, prompt)}
    return usage


def _envelope(body: dict[str, Any], profile: Profile, kind: str, cid: str) -> dict[str, Any]:
    if profile.bare_chunks:
        return {}
    model = profile.reported_model or body.get("model", "sim")
    envelope: dict[str, Any] = {"id": cid, "object": kind, "created": int(time.time()), "model": model}
    if profile.system_fingerprint is not None:
        envelope["system_fingerprint"] = profile.system_fingerprint
    return envelope


def _tool_name(body: dict[str, Any]) -> str:
    return str(body["tools"][0]["function"]["name"])


def _reasoning_fields(profile: Profile, text: str) -> dict[str, Any]:
    if profile.reasoning in ("reasoning_content", "reasoning"):
        return {profile.reasoning: text}
    if profile.reasoning == "reasoning_details":
        return {"reasoning_details": [{"type": "reasoning.text", "text": text}]}
    return {}


def completion(
    body: dict[str, Any], reply: str, profile: Profile, finish: str | None = None
) -> dict[str, Any]:
    """A whole (non-streamed) chat completion."""
    tool = as_tool_call(body)
    content = reply
    if profile.reasoning == "think_tag":
        content = f"<think>{REASONING_TEXT}</think>\n{reply}"
    message: dict[str, Any] = (
        {"role": "assistant", "content": content} if profile.role != "none" else {"content": content}
    )
    if tool:
        arguments: Any = json.loads(reply) if profile.tool_args_object and _is_json(reply) else reply
        call = {
            "id": "call_sim",
            "type": "function",
            "function": {"name": _tool_name(body), "arguments": arguments},
        }
        message |= {"content": None if profile.content_null_with_tools else "", "tool_calls": [call]}
    message |= _reasoning_fields(profile, REASONING_TEXT)
    out = _envelope(body, profile, "chat.completion", f"chatcmpl-{uuid.uuid4().hex[:12]}")
    reason = finish or ("tool_calls" if tool else profile.stop_reason)
    out["choices"] = [{"index": 0, "message": message, "finish_reason": reason}]
    usage = usage_of(body, reply)
    if profile.usage == "x_groq":
        out["x_groq"] = {"usage": usage}
    elif profile.usage != "never":
        out["usage"] = usage
    return out


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def error_body(profile: Profile, status: int, message: str, kind: str = "server_error") -> Any:
    """An HTTP error's body in the profile's shape."""
    error = {"message": message, "type": kind, "code": status}
    if profile.error_shape == "string":
        return {"error": message, "error_type": kind}
    if profile.error_shape == "flat":
        return {"object": "error", "message": message, "type": kind, "code": status}
    if profile.error_shape == "array":
        return [{"error": error}]
    return {"error": error}


def retry_headers(profile: Profile, seconds: float) -> dict[str, str]:
    """Retry-After as the profile sends it: seconds, an HTTP date, milliseconds (Azure), or not at all."""
    if profile.retry_after == "absent":
        return {}
    if profile.retry_after == "http_date":
        return {"retry-after": formatdate(time.time() + seconds, usegmt=True)}
    if profile.retry_after == "milliseconds":
        return {"retry-after-ms": str(int(seconds * 1000)), "retry-after": str(math.ceil(seconds))}
    return {"retry-after": f"{seconds:g}"}
