"""The simulator's HTTP server: /v1/chat/completions (JSON and SSE) plus a small control API."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agents.simulator.fake import fake_object, reviser_hints
from agents.simulator.rules import Rule, SimConfig


@dataclass
class LoggedRequest:
    """One request as the simulator saw it, with its place in the arrival/answer order."""

    id: int
    role: str
    body: dict[str, Any]
    arrived: int
    answered: int | None = None
    status: int = 200


@dataclass
class SimulatorState:
    """Configuration, remaining rule uses and the log; shared with tests in the same process."""

    config: SimConfig = field(default_factory=SimConfig)
    requests: list[LoggedRequest] = field(default_factory=list)
    _uses: dict[int, int] = field(default_factory=dict)
    _clock: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _gate_open: asyncio.Event | None = None

    def configure(self, config: SimConfig) -> None:
        """Replace settings and rules, and clear the log."""
        with self._lock:
            self.config, self.requests, self._uses, self._clock = config, [], {}, 0
            self.in_flight = self.max_in_flight = 0
            self._gate_open = None

    def arrive(self, role: str, body: dict[str, Any]) -> LoggedRequest:
        """Log an arrival."""
        with self._lock:
            self._clock += 1
            entry = LoggedRequest(len(self.requests) + 1, role, body, self._clock)
            self.requests.append(entry)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return entry

    def answer(self, entry: LoggedRequest, status: int) -> None:
        """Log the moment an answer starts."""
        with self._lock:
            self._clock += 1
            entry.answered, entry.status = self._clock, status
            self.in_flight -= 1

    def pick_rule(self, role: str, text: str) -> Rule | None:
        """The first matching rule that still has uses, consuming one."""
        with self._lock:
            for index, rule in enumerate(self.config.rules):
                used = self._uses.get(index, 0)
                if rule.times is not None and used >= rule.times:
                    continue
                if rule.matches(role, text):
                    self._uses[index] = used + 1
                    return rule
        return None

    async def pass_gate(self) -> None:
        """Hold until ``gate`` requests have arrived (or the gate times out)."""
        gate = self.config.gate
        if gate <= 0:
            return
        if self._gate_open is None:
            self._gate_open = asyncio.Event()
        if len(self.requests) >= gate:
            self._gate_open.set()
        try:
            await asyncio.wait_for(self._gate_open.wait(), self.config.gate_timeout_s)
        except TimeoutError:
            self._gate_open.set()


def _role(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") in ("system", "developer"):
            content = message.get("content") or ""
            text = content if isinstance(content, str) else json.dumps(content)
            return text.strip().splitlines()[0].lstrip("# ").strip() if text.strip() else ""
    return ""


def _all_text(body: dict[str, Any]) -> str:
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


def _reply_text(state: SimulatorState, body: dict[str, Any], rule: Rule | None) -> str:
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
        hints |= reviser_hints(_all_text(body))
    reply = fake_object(schema[1], hints)
    if rule is not None and rule.score is not None and isinstance(reply, dict):
        reply["score"] = rule.score  # unclamped: lets tests send out-of-range scores
    return json.dumps(reply)


def _usage(body: dict[str, Any], reply: str) -> dict[str, int]:
    prompt = max(1, len(_all_text(body)) // 4)
    completion = max(1, len(reply) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _completion(body: dict[str, Any], reply: str, as_tool: bool) -> dict[str, Any]:
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


async def _stream(
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


def create_simulator(state: SimulatorState | None = None) -> Starlette:
    """The simulator as an ASGI app; pass ``state`` to script it from the same process."""
    shared = state or SimulatorState()

    async def completions(request: Request) -> Response:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSONResponse({"error": {"message": "invalid JSON", "type": "invalid_request_error"}}, 400)
        role = _role(body)
        entry = shared.arrive(role, body)
        rule = shared.pick_rule(role, _all_text(body))
        await shared.pass_gate()
        await asyncio.sleep(shared.config.latency_s + (rule.delay_s if rule else 0.0))
        return _respond(shared, entry, body, rule)

    async def control(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse([_public(r) for r in shared.requests])
        shared.configure(SimConfig.model_validate(await request.json()))
        return JSONResponse({"ok": True})

    async def models(_: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "sim", "object": "model"}]})

    routes = [
        Route("/v1/chat/completions", completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/_sim", control, methods=["GET", "PUT"]),
    ]
    app = Starlette(routes=routes)
    app.state.sim = shared
    return app


def _respond(
    state: SimulatorState, entry: LoggedRequest, body: dict[str, Any], rule: Rule | None
) -> Response:
    if rule is not None and rule.reject_json_schema and "response_format" in body:
        state.answer(entry, 400)
        error = {
            "message": "response_format json_schema is not supported",
            "type": "invalid_request_error",
            "param": "response_format",
        }
        return JSONResponse({"error": error}, 400)
    if rule is not None and rule.status is not None:
        state.answer(entry, rule.status)
        headers = {"retry-after": str(rule.retry_after)} if rule.retry_after is not None else {}
        error = {"message": f"simulated {rule.status}", "type": "server_error"}
        return JSONResponse({"error": error}, rule.status, headers=headers)
    reply = _reply_text(state, body, rule)
    if rule is not None and rule.malformed:
        reply = reply[: max(1, len(reply) // 2)]
    as_tool = bool(body.get("tools")) and "response_format" not in body
    state.answer(entry, 200)
    if body.get("stream"):
        truncate = bool(rule and rule.truncate_stream)
        return EventSourceResponse(_stream(state, body, reply, as_tool, truncate), ping=3600)
    return JSONResponse(_completion(body, reply, as_tool))


def _public(entry: LoggedRequest) -> dict[str, Any]:
    return {
        "id": entry.id,
        "role": entry.role,
        "arrived": entry.arrived,
        "answered": entry.answered,
        "status": entry.status,
        "stream": bool(entry.body.get("stream")),
    }


class SimulatorServer:
    """Serve the simulator with uvicorn on a free loopback port, in a background thread."""

    def __init__(self, config: SimConfig | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.state = SimulatorState(config or SimConfig())
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.host, self.port = self._socket.getsockname()[:2]
        uv_config = uvicorn.Config(create_simulator(self.state), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(uv_config)
        self._thread = threading.Thread(target=self._run, daemon=True, name="llm-simulator")

    @property
    def base_url(self) -> str:
        """The OpenAI base URL to configure a client with."""
        return f"http://{self.host}:{self.port}/v1"

    def _run(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._socket]))

    @contextmanager
    def running(self) -> Iterator[SimulatorServer]:
        """Start, wait until it accepts connections, and stop on exit."""
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            yield self
        finally:
            self._server.should_exit = True
            self._thread.join(timeout=10)
