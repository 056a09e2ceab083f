"""The simulator's HTTP server: /v1/chat/completions (JSON and SSE) plus a small control API."""

from __future__ import annotations

import asyncio
import json
import random
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agents.simulator import llamacpp
from agents.simulator.profiles import Profile
from agents.simulator.replies import (
    CACHED_KEY,
    all_text,
    bounded,
    completion,
    error_body,
    reply_text,
    retry_headers,
    role_of,
    wants_schema,
)
from agents.simulator.rules import Rule, SimConfig
from agents.simulator.streaming import stream_events


@dataclass
class LoggedRequest:
    """One request as the simulator saw it, with its place in the arrival/answer order."""

    id: int
    role: str
    body: dict[str, Any]
    arrived: int
    answered: int | None = None
    status: int = 200
    connection: str = ""  # the client's address and port: which of its connections carried the call
    epoch: int = 0  # the configuration it arrived under (``SimulatorState.configure`` starts a new one)


# OpenAI counts cached prompt tokens in blocks of 128 beyond the first 1,024 (its prompt-caching guide).
CACHE_BLOCK = 128


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of two strings."""
    size = min(len(a), len(b))
    if a[:size] == b[:size]:
        return size
    low, high = 0, size  # a[:low] == b[:low] and a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return low


@dataclass
class SimulatorState:
    """Configuration, remaining rule uses and the log; shared with tests in the same process."""

    config: SimConfig = field(default_factory=SimConfig)
    requests: list[LoggedRequest] = field(default_factory=list)
    _uses: dict[int, int] = field(default_factory=dict)
    _clock: int = 0
    _epoch: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _gate_open: asyncio.Event | None = None
    _random: random.Random = field(default_factory=random.Random)
    # While set, every request waits unanswered (tests freeze runs mid-step, e.g. to kill a process).
    held: bool = False
    _slots: asyncio.Semaphore | None = None
    # The prompts of answered requests, newest last: what a prompt cache may hold (``cached_tokens``).
    _cached: list[str] = field(default_factory=list)

    def configure(self, config: SimConfig) -> None:
        """Replace settings and rules, clear the log, and answer again if answers were held."""
        with self._lock:
            self.held = False
            self.config, self.requests, self._uses, self._clock = config, [], {}, 0
            # A request of an earlier configuration still being answered (a stalled reply whose
            # client gave up) is no longer counted: its answer must not take one off this count.
            self.in_flight = self.max_in_flight = 0
            self._epoch += 1
            self._gate_open = None
            self._slots = None
            self._random = random.Random(config.seed)
            self._cached = []

    def cached_tokens(self, body: dict[str, Any]) -> int | None:
        """The prompt tokens a server with OpenAI's prompt cache serves from it for ``body``: the
        longest prefix shared with a prompt answered before, in 128-token blocks from the profile's
        minimum. None when the profile reports no cache."""
        least = self.config.server.prompt_cache_min_tokens
        if least is None:
            return None
        text = all_text(body)
        with self._lock:
            shared = max((_common_prefix(text, seen) for seen in self._cached), default=0) // 4
        if shared < max(least, 1):
            return 0
        return least + (shared - least) // CACHE_BLOCK * CACHE_BLOCK

    def remember_prompt(self, body: dict[str, Any]) -> None:
        """A request was answered: its prompt is in the cache from now on (the newest 256)."""
        if self.config.server.prompt_cache_min_tokens is not None:
            with self._lock:
                self._cached = [*self._cached[-255:], all_text(body)]

    def slot_gate(self) -> asyncio.Semaphore | None:
        """The server's slots (made in the server's own event loop at first use); None: no limit."""
        if self.config.slots <= 0:
            return None
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.config.slots)
        return self._slots

    def arrive(self, role: str, body: dict[str, Any], connection: str) -> LoggedRequest:
        """Log an arrival, with the client connection (address and port) that carried it."""
        with self._lock:
            self._clock += 1
            entry = LoggedRequest(
                len(self.requests) + 1, role, body, self._clock, connection=connection, epoch=self._epoch
            )
            self.requests.append(entry)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return entry

    def answer(self, entry: LoggedRequest, status: int) -> None:
        """Log the moment an answer starts."""
        with self._lock:
            self._clock += 1
            entry.answered, entry.status = self._clock, status
            if entry.epoch == self._epoch:
                self.in_flight -= 1

    def pick_rule(self, role: str, text: str) -> Rule | None:
        """The first matching rule that still has uses, consuming one."""
        with self._lock:
            for index, rule in enumerate(self.config.rules):
                used = self._uses.get(index, 0)
                if rule.times is not None and used >= rule.times:
                    continue
                if rule.matches(role, text) and (rule.rate >= 1 or self._random.random() < rule.rate):
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


def create_simulator(state: SimulatorState | None = None) -> Starlette:
    """The simulator as an ASGI app; pass ``state`` to script it from the same process."""
    shared = state or SimulatorState()

    async def completions(request: Request) -> Response:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSONResponse({"error": {"message": "invalid JSON", "type": "invalid_request_error"}}, 400)
        role = role_of(body)
        peer = request.client
        entry = shared.arrive(role, body, f"{peer.host}:{peer.port}" if peer else "")
        cached = shared.cached_tokens(body)
        if cached is not None:  # read by ``usage_of``; the logged body stays as it came
            body = {**body, CACHED_KEY: cached}
        # A request the profile's server refuses or ignores uses no rule: rules script the model.
        unscripted = wants_schema(body) and shared.config.server.json_schema != "supported"
        rule = None if unscripted else shared.pick_rule(role, all_text(body))
        slots = shared.slot_gate()
        if slots is not None:  # queued: nothing at all is sent until a slot takes the request
            await slots.acquire()
        try:
            while shared.held:  # noqa: ASYNC110 - set from the test's thread; an asyncio.Event is not thread-safe
                await asyncio.sleep(0.02)
            await shared.pass_gate()
            await asyncio.sleep(shared.config.latency_s + (rule.delay_s if rule else 0.0))
            response = await _respond(shared, entry, body, rule, slots)
        except BaseException:
            if slots is not None:
                slots.release()
            raise
        return response

    async def azure(request: Request) -> Response:
        # Azure's deployment URL: the api-version query and an api-key header are required.
        if not request.headers.get("api-key"):
            return JSONResponse(
                {"error": {"code": "401", "message": "Access denied: no api-key header"}}, 401
            )
        if not request.query_params.get("api-version"):
            return JSONResponse({"error": {"code": "404", "message": "Resource not found"}}, 404)
        return await completions(request)

    async def control(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse([_public(r) for r in shared.requests])
        shared.configure(SimConfig.model_validate(await request.json()))
        return JSONResponse({"ok": True})

    async def models(_: Request) -> Response:
        return JSONResponse(llamacpp.models(shared.config))

    async def llama(request: Request) -> Response:
        # llama.cpp's own routes; a server without slots is one without them (OpenAI, vLLM).
        if shared.config.slots <= 0:
            return JSONResponse({"error": {"message": "Not Found", "type": "not_found_error"}}, 404)
        if request.method == "GET":
            return JSONResponse(llamacpp.props(shared.config))
        body = await request.json()
        answer = llamacpp.tokenized if request.url.path == "/tokenize" else llamacpp.applied
        return JSONResponse(answer(body))

    routes = [
        Route("/v1/chat/completions", completions, methods=["POST"]),
        Route("/openai/deployments/{deployment}/chat/completions", azure, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/props", llama, methods=["GET"]),
        Route("/tokenize", llama, methods=["POST"]),
        Route("/apply-template", llama, methods=["POST"]),
        Route("/_sim", control, methods=["GET", "PUT"]),
    ]
    app = Starlette(routes=routes)
    app.state.sim = shared
    return app


async def _respond(
    state: SimulatorState,
    entry: LoggedRequest,
    body: dict[str, Any],
    rule: Rule | None,
    slots: asyncio.Semaphore | None,
) -> Response:
    """The answer; the slot (if any) is freed once its whole body is sent."""
    profile = state.config.server
    too_long = llamacpp.over_context(state.config, body)
    if too_long is not None:  # llama-server's answer whatever the model would say: no rule applies
        state.answer(entry, 400)
        _free(slots)
        return JSONResponse(too_long, 400)
    refused = _refusal(profile, body, rule)
    if refused is not None:
        state.answer(entry, refused.status_code)
        _free(slots)
        return refused
    if rule is not None and rule.status is not None:
        state.answer(entry, rule.status)
        _free(slots)
        headers = retry_headers(profile, rule.retry_after) if rule.retry_after is not None else {}
        return JSONResponse(
            _reported(error_body(profile, rule.status, f"simulated {rule.status}"), rule),
            rule.status,
            headers=headers,
        )
    reply = reply_text(state, body, rule)
    if rule is not None and rule.malformed:
        reply = reply[: max(1, len(reply) // 2)]
    reply, cut = bounded(body, reply, rule, state.config.default_max_tokens)
    state.answer(entry, 200)
    state.remember_prompt(body)
    config = state.config
    if body.get("stream"):
        events = stream_events(body, reply, profile, rule, config.chunk_chars, cut, config.chunk_delay_s)
        return StreamingResponse(_encoded(events, slots), media_type="text/event-stream")
    # A whole reply is sent once it is all generated, and holds its slot meanwhile.
    await asyncio.sleep(config.chunk_delay_s * -(-len(reply) // config.chunk_chars))
    _free(slots)
    if rule is not None and rule.error_in_200:
        return JSONResponse(error_body(profile, 502, "simulated upstream error in a 200"), 200)
    finish = cut
    if rule is not None and rule.finish_length:
        reply, finish = reply[: max(1, len(reply) // 2)], "length"
    return JSONResponse(completion(body, reply, profile, finish))


def _reported(body: Any, rule: Rule) -> Any:
    """An error body with the rule's ``error_report`` fields beside its error (a dict body only)."""
    return body | rule.error_report if isinstance(body, dict) and rule.error_report else body


def _free(slots: asyncio.Semaphore | None) -> None:
    if slots is not None:
        slots.release()


def _refusal(profile: Profile, body: dict[str, Any], rule: Rule | None) -> Response | None:
    """A 400 or 422 for a response_format the server does not take."""
    if not wants_schema(body):
        return None
    if rule is not None and rule.reject_json_schema:
        error = {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}
        return JSONResponse({"error": error | {"param": "response_format"}}, 400)
    if profile.json_schema in ("reject_400", "reject_422"):
        status = 400 if profile.json_schema == "reject_400" else 422
        return JSONResponse(
            error_body(profile, status, profile.reject_message, "invalid_request_error"), status
        )
    return None


async def _encoded(events: AsyncIterator[str], slots: asyncio.Semaphore | None) -> AsyncIterator[bytes]:
    try:
        async for event in events:
            yield event.encode()
    finally:  # sent, or the client went away: the slot serves the next request
        _free(slots)


def _public(entry: LoggedRequest) -> dict[str, Any]:
    return {
        "id": entry.id,
        "role": entry.role,
        "arrived": entry.arrived,
        "answered": entry.answered,
        "status": entry.status,
        "stream": bool(entry.body.get("stream")),
        "connection": entry.connection,
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
