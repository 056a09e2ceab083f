"""Presenting any OpenAI-compatible server to the OpenAI SDK the way OpenAI itself answers.

Real servers differ in small ways that break a strict client (see the README's conformance
matrix): a stream whose deltas carry no ``role``, or carry it in every chunk; frames with no
``choices`` (Azure's content-filter results); usage in a vendor field, in every chunk or in a chunk
with choices; tool-call arguments as an object, or a name repeated in every fragment; errors in an
HTTP 200 body, as a flat object, as a string, or on an SSE ``error:`` line; reasoning in fields the
SDK drops. This transport rewrites each response of ``/chat/completions`` into OpenAI's shape
before the SDK parses it, takes the reasoning out to whoever listens (a context variable set per
call), and notes what the server really sent (``thinkloop models check`` prints it).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx2

from agents.llm.reasoning import ReasoningSink

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")


@dataclass
class Observed:
    """What one call's responses looked like on the wire, before normalisation."""

    streamed: bool = False
    role_missing: bool = False
    role_repeated: bool = False
    empty_choice_frames: int = 0
    usage: str | None = None  # "final chunk", "chunk with choices", "every chunk", "x_groq", "body"
    reasoning_field: str | None = None
    comments: int = 0
    done: bool = False
    finish_reason: str | None = None
    error_in_body: bool = False
    fixes: set[str] = field(default_factory=set)
    # The ``model`` field of the reply (the first chunk that names one): the model id the endpoint
    # reports, which a panel's identity holds (``agents.identity``); None when it named none.
    model: str | None = None
    # The ``system_fingerprint`` of the reply (OpenAI's: the server's build and configuration behind
    # the model); None when the server sent none.
    system_fingerprint: str | None = None
    # Prompt tokens the server served from its prompt cache instead of evaluating them, where it says
    # (``cached_prompt_tokens``); None when the reply did not say.
    cached_tokens: int | None = None


def cached_prompt_tokens(data: dict[str, Any]) -> int | None:
    """The prompt tokens a reply (a body, or a stream's usage chunk) says came from the server's
    prompt cache; None when it says nothing of it.

    OpenAI (and vLLM, llama.cpp's newer servers, most OpenAI-compatible APIs):
    ``usage.prompt_tokens_details.cached_tokens``; DeepSeek: ``usage.prompt_cache_hit_tokens``;
    llama.cpp's own server: ``timings.cache_n`` (its ``prompt_n`` being the tokens it evaluated).
    """
    usage, timings = data.get("usage"), data.get("timings")
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("prompt_tokens_details")
    for value in (
        details.get("cached_tokens") if isinstance(details, dict) else None,
        usage.get("prompt_cache_hit_tokens"),
        timings.get("cache_n") if isinstance(timings, dict) else None,
    ):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


_sink: ContextVar[ReasoningSink | None] = ContextVar("thinkloop_reasoning_sink", default=None)
_observed: ContextVar[Observed | None] = ContextVar("thinkloop_observed", default=None)


@contextmanager
def capturing(on_reasoning: ReasoningSink | None) -> Iterator[Observed]:
    """Route reasoning fields of the calls made inside the block to ``on_reasoning``, and observe."""
    observed = Observed()
    tokens = (_sink.set(on_reasoning), _observed.set(observed))
    try:
        yield observed
    finally:
        _observed.reset(tokens[1])
        _sink.reset(tokens[0])


class NormalisingTransport(httpx2.AsyncBaseTransport):
    """Wraps the real transport; only chat-completion responses are rewritten."""

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send, then normalise the answer of a chat completion."""
        response = await self._inner.handle_async_request(request)
        if not request.url.path.endswith("/chat/completions"):
            return response
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _RECODED]
        if "text/event-stream" in response.headers.get("content-type", ""):
            stream = _SseStream(response, _StreamFixer(_sink.get(), _observed.get() or Observed()))
            return httpx2.Response(response.status_code, headers=headers, stream=stream, request=request)
        await response.aread()
        status, body = normalise_body(response.status_code, response.content, _sink.get(), _observed.get())
        return httpx2.Response(status, headers=headers, content=body, request=request)

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self._inner.aclose()


_RECODED = {"content-length", "content-encoding", "transfer-encoding"}


def normalise_body(
    status: int, raw: bytes, sink: ReasoningSink | None, observed: Observed | None
) -> tuple[int, bytes]:
    """A whole (non-streamed) answer in OpenAI's shape; an error in a 200 body becomes an HTTP error."""
    try:
        data = json.loads(raw)
    except ValueError:
        return status, raw
    if isinstance(data, list) and data and isinstance(data[0], dict) and "error" in data[0]:
        data = data[0]  # Gemini sometimes wraps its error object in an array
    if not isinstance(data, dict):
        return status, raw
    if "error" in data and not data.get("choices"):
        error = _error_object(data)
        if status < 400:
            if observed is not None:
                observed.error_in_body = True
            code = error.get("code")
            status = code if isinstance(code, int) and 400 <= code < 600 else 502
        return status, json.dumps({"error": error}).encode()
    if status >= 400:
        return status, raw
    _vendor_usage(data)
    if observed is not None and data.get("model"):
        observed.model = str(data["model"])
    if observed is not None and data.get("system_fingerprint"):
        observed.system_fingerprint = str(data["system_fingerprint"])
    for index, choice in enumerate(data.get("choices") or []):
        choice.setdefault("index", index)
        message = choice.setdefault("message", {})
        if not message.get("role"):
            message["role"] = "assistant"
        _take_reasoning(message, sink, observed)
        _fix_tool_calls(message.get("tool_calls"), None)
    if observed is not None and data.get("usage"):
        observed.usage = "body"
    if observed is not None:
        observed.cached_tokens = cached_prompt_tokens(data)
    return status, json.dumps(data).encode()


def _error_object(data: dict[str, Any]) -> dict[str, Any]:
    error = data.get("error")
    if isinstance(error, dict):
        return error
    out: dict[str, Any] = {"message": str(error if error is not None else data.get("message", "error"))}
    for key in ("type", "code"):
        if key in data:
            out[key] = data[key]
    return out


def _vendor_usage(chunk: dict[str, Any]) -> None:
    vendor = chunk.get("x_groq")
    if not chunk.get("usage") and isinstance(vendor, dict) and vendor.get("usage"):
        chunk["usage"] = vendor["usage"]


def _take_reasoning(holder: dict[str, Any], sink: ReasoningSink | None, observed: Observed | None) -> None:
    """Move reasoning fields out of a message or delta, to the sink."""
    for name in REASONING_FIELDS:
        value = holder.pop(name, None)
        text = _reasoning_text(value)
        if not text:
            continue
        if observed is not None:
            observed.reasoning_field = name
        if sink is not None:
            sink(text)


def _reasoning_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # OpenRouter's reasoning_details: [{"type", "text" | "summary"}]
        return "".join(
            str(part.get("text") or part.get("summary") or "") for part in value if isinstance(part, dict)
        )
    return ""


def _fix_tool_calls(calls: Any, seen: dict[int, set[str]] | None) -> None:
    """Arguments as a JSON string; in streams, name, id and type only in a call's first fragment."""
    if not isinstance(calls, list):
        return
    for position, call in enumerate(calls):
        if not isinstance(call, dict):
            continue
        index = call.setdefault("index", position)
        function = call.get("function") or {}
        if isinstance(function.get("arguments"), dict | list):
            function["arguments"] = json.dumps(function["arguments"])
        if seen is None:
            continue
        first = seen.setdefault(index if isinstance(index, int) else position, set())
        for key in ("id", "type"):
            if key in call and key in first:
                call.pop(key)
            elif key in call:
                first.add(key)
        if "name" in function and "name" in first:
            function.pop("name")
        elif function.get("name"):
            first.add("name")


class _StreamFixer:
    """Rewrites one stream's events; keeps the state a stream needs (role sent, usage, tool calls)."""

    def __init__(self, sink: ReasoningSink | None, observed: Observed) -> None:
        self.sink, self.observed = sink, observed
        observed.streamed = True
        self.role_sent = False
        self.usage: dict[str, Any] | None = None
        self.usage_chunks = 0
        self.tool_calls: dict[int, set[str]] = {}
        self.template: dict[str, Any] = {}
        # A text-only chunk not yet sent: those that arrive together are sent as one (see flush).
        self.pending: dict[str, Any] | None = None
        # The last event's reasoning, for the stream to hand to ``sink`` once ``before`` (the text
        # that came before it) has gone on: listeners get both in the order they came.
        self.heard: list[str] = []
        self.before = ""

    def event(self, block: str) -> str:
        """One SSE event block in, the normalised block out ('' to drop it)."""
        data, kind = [], None
        for line in block.split("\n"):
            if line.startswith(":"):
                self.observed.comments += 1
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("error:"):  # llama.cpp before Sept 2025
                kind, data = "error", [line[6:].strip()]
        if not data:
            return ""
        payload = "\n".join(data)
        if payload.strip() == "[DONE]":
            self.observed.done = True
            return ""
        return self._data(payload, kind)

    def _data(self, payload: str, kind: str | None) -> str:
        try:
            chunk = json.loads(payload)
        except ValueError:
            if kind == "error":
                return self.flush() + _frame({"error": {"message": payload}})
            return self.flush() + f"data: {payload}\n\n"
        if not isinstance(chunk, dict):
            return self.flush() + f"data: {payload}\n\n"
        if kind == "error" or "error" in chunk or chunk.get("object") == "error":
            self.observed.error_in_body = True
            error = _error_object(chunk if "error" in chunk else {"error": None, **chunk})
            return self.flush() + _frame({"error": error})
        return self._chunk(chunk)

    def _chunk(self, chunk: dict[str, Any]) -> str:
        _vendor_usage(chunk)
        cached = cached_prompt_tokens(chunk)
        if cached is not None:
            self.observed.cached_tokens = cached
        usage = chunk.pop("usage", None)
        if usage:
            self._note_usage(chunk, usage)
        choices = chunk.get("choices") or []
        if not choices:
            if not usage:  # Azure's filter frames (a usage-only chunk is the usual end of a stream)
                self.observed.empty_choice_frames += 1
            return ""  # usage is sent once, at the end
        if self.observed.model is None and chunk.get("model"):
            self.observed.model = str(chunk["model"])
        if self.observed.system_fingerprint is None and chunk.get("system_fingerprint"):
            self.observed.system_fingerprint = str(chunk["system_fingerprint"])
        for position, choice in enumerate(choices):
            self._choice(position, choice)
        if self.heard:  # the text before this chunk goes on before its reasoning; this chunk after
            self.before = self.flush()
        chunk["choices"] = choices
        for key, default in (
            ("object", "chat.completion.chunk"),
            ("id", "chatcmpl-thinkloop"),
            ("model", ""),
        ):
            chunk.setdefault(key, default)
        chunk.setdefault("created", int(time.time()))
        self.template = {key: chunk[key] for key in ("id", "object", "created", "model")}
        if not _text_only(chunk):
            return self.flush() + _frame(chunk)
        if self.pending is not None and _joins(self.pending, chunk):
            held = self.pending["choices"][0]["delta"]
            held["content"] = held.get("content", "") + chunk["choices"][0]["delta"].get("content", "")
            self.pending.pop("obfuscation", None)  # OpenAI's per-chunk padding: it pads nothing now
            return ""
        out, self.pending = self.flush(), chunk
        return out

    def flush(self) -> str:
        """The text-only chunk held back, if any, as one frame.

        A reply's pieces that arrive in one read (a fast local server, or a client busy with other
        replies) are sent on as one chunk: the SDK and LangChain build objects for every chunk
        (about half a judge call's CPU at 16 characters a chunk), and listeners see the same text
        no later than they could have. Pieces that arrive one by one are sent one by one."""
        out, self.pending = (_frame(self.pending) if self.pending is not None else ""), None
        return out

    def _note_usage(self, chunk: dict[str, Any], usage: dict[str, Any]) -> None:
        self.usage_chunks += 1
        self.usage = usage
        where = "final chunk" if not chunk.get("choices") else "chunk with choices"
        if "x_groq" in chunk:
            where = "x_groq"
        self.observed.usage = "every chunk" if self.usage_chunks > 2 else where

    def _choice(self, position: int, choice: dict[str, Any]) -> None:
        choice.setdefault("index", position)
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            delta = choice["delta"] = {}
        if self.role_sent:
            if delta.pop("role", None):
                self.observed.role_repeated = True
        else:
            if not delta.get("role"):
                self.observed.role_missing = True
            delta["role"], self.role_sent = "assistant", True
        _take_reasoning(delta, self.heard.append, self.observed)
        _fix_tool_calls(delta.get("tool_calls"), self.tool_calls)
        if choice.get("finish_reason"):
            self.observed.finish_reason = str(choice["finish_reason"])

    def finish(self) -> str:
        """The upstream stream ended: the usage (once), then [DONE]."""
        tail = self.flush()
        if self.usage is not None:
            tail += _frame(
                {**self.template, "object": "chat.completion.chunk", "choices": [], "usage": self.usage}
            )
        return tail + "data: [DONE]\n\n"


_CHOICE_KEYS = {"index", "delta", "finish_reason", "logprobs"}


def _text_only(chunk: dict[str, Any]) -> bool:
    """One choice whose delta holds only text (and the role): no finish, tool call or logprobs."""
    choices = chunk["choices"]
    if len(choices) != 1 or not isinstance(choices[0], dict) or set(choices[0]) - _CHOICE_KEYS:
        return False
    choice = choices[0]
    delta = choice.get("delta")
    if choice.get("finish_reason") is not None or choice.get("logprobs") is not None:
        return False
    return (
        isinstance(delta, dict)
        and not set(delta) - {"role", "content"}
        and isinstance(delta.get("content", ""), str)
    )


def _joins(pending: dict[str, Any], chunk: dict[str, Any]) -> bool:
    """``chunk`` continues ``pending``'s text: same reply, same choice, nothing else new."""
    ignored = ("choices", "obfuscation")
    if {k: v for k, v in pending.items() if k not in ignored} != {
        k: v for k, v in chunk.items() if k not in ignored
    }:
        return False
    choice = chunk["choices"][0]
    return choice.get("index") == pending["choices"][0].get("index") and "role" not in choice["delta"]


def _frame(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data)}\n\n"


class _SseStream(httpx2.AsyncByteStream):
    """The upstream SSE body, event by event through the fixer.

    A reader task takes the upstream's pieces as soon as they come; the events of every piece
    waiting when the consumer asks again go through the fixer together, so a reply's text that
    arrived in a burst reaches the SDK as one chunk (``_StreamFixer.flush``)."""

    def __init__(self, upstream: httpx2.Response, fixer: _StreamFixer) -> None:
        self._upstream, self._fixer = upstream, fixer
        self._reader: asyncio.Task[None] | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        last: str | BaseException | None
        pieces: asyncio.Queue[str | BaseException | None] = asyncio.Queue()
        self._reader = reader = asyncio.get_running_loop().create_task(self._read(pieces))
        buffer, last = "", ""  # last: the latest piece; None once the upstream has ended
        try:
            while last is not None:
                waiting = [await pieces.get()]
                while not pieces.empty():
                    waiting.append(pieces.get_nowait())
                out: list[str] = []
                for last in waiting:
                    if isinstance(last, BaseException):
                        break
                    # At the end, the last event may lack the blank line that closes it.
                    buffer = (buffer + ("\n\n" if last is None else last)).replace("\r\n", "\n")
                    while (end := buffer.find("\n\n")) >= 0:
                        block, buffer = buffer[:end], buffer[end + 2 :]
                        frame = self._fixer.event(block)
                        if self._fixer.heard:
                            if before := "".join(out) + self._fixer.before:
                                yield before.encode()
                            self._hand_on_reasoning()
                            out = []
                        out.append(frame)
                if joined := "".join(out) + self._fixer.flush():
                    yield joined.encode()
                if isinstance(last, BaseException):
                    raise last
        finally:
            reader.cancel()  # the consumer stopped early, or the reader is done already
        yield self._fixer.finish().encode()

    def _hand_on_reasoning(self) -> None:
        heard, self._fixer.heard, self._fixer.before = self._fixer.heard, [], ""
        if self._fixer.sink is not None:
            for text in heard:
                self._fixer.sink(text)

    async def _read(self, pieces: asyncio.Queue[str | BaseException | None]) -> None:
        try:
            async for text in self._upstream.aiter_text():
                pieces.put_nowait(text)
        except asyncio.CancelledError:  # closed: a reader still waiting is told, as httpx tells it
            pieces.put_nowait(httpx2.StreamClosed())
            raise
        except Exception as exc:  # a read timeout, a dropped connection: the consumer raises it
            pieces.put_nowait(exc)
        else:
            pieces.put_nowait(None)

    async def aclose(self) -> None:
        """Stop reading, then close the upstream response."""
        try:
            if self._reader is not None and not self._reader.done():
                self._reader.cancel()
                await asyncio.wait({self._reader})  # the caller's own cancellation still raises
        finally:
            await self._upstream.aclose()
