"""A streamed reply through the normalising transport: what arrives together is sent on together.

The upstream here is a byte stream the test drives piece by piece, so what "arrives together"
means is set by the test, never by the machine's speed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
import pytest

from agents.llm.wire import NormalisingTransport, capturing

URL = "http://127.0.0.1:9/v1/chat/completions"


def event(delta: dict[str, Any], finish: str | None = None, logprobs: Any = None, **extra: Any) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": logprobs}
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [choice],
        **extra,
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


class Upstream(httpx2.AsyncByteStream):
    """Yields ``pieces``; before each piece from ``paced_from`` on, waits until the test lets it.
    A stream stopped early takes until ``unwound`` is set to let go (None: at once)."""

    def __init__(self, pieces: Sequence[bytes | BaseException], paced_from: int | None = None) -> None:
        self.pieces, self.paced_from = pieces, paced_from
        self.turn = asyncio.Event()
        self.closed = False
        self.unwound: asyncio.Event | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            for index, piece in enumerate(self.pieces):
                if self.paced_from is not None and index >= self.paced_from:
                    await self.turn.wait()
                    self.turn.clear()
                if isinstance(piece, BaseException):
                    raise piece
                yield piece
        finally:
            if self.unwound is not None:
                await asyncio.shield(self.unwound.wait())

    async def aclose(self) -> None:
        self.closed = True


class Inner(httpx2.AsyncBaseTransport):
    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx2.Response(200, headers=headers, stream=self.upstream, request=request)


async def response(upstream: Upstream) -> httpx2.Response:
    return await NormalisingTransport(Inner(upstream)).handle_async_request(httpx2.Request("POST", URL))


def chunks(body: bytes) -> list[dict[str, Any]]:
    """The JSON chunks of an SSE body ([DONE] left out)."""
    frames = [line[6:] for line in body.decode().split("\n") if line.startswith("data: ")]
    return [json.loads(frame) for frame in frames if frame != "[DONE]"]


def texts(body: bytes) -> list[str]:
    return [c["choices"][0]["delta"].get("content") or "" for c in chunks(body) if c["choices"]]


async def test_text_that_arrives_in_a_burst_is_one_chunk() -> None:
    pieces = [event({"role": "assistant", "content": ""})] + [
        event({"content": p}) for p in ("ab", "cd", "ef")
    ]
    upstream = Upstream([*pieces, event({}, "stop")])
    body = b"".join([piece async for piece in (await response(upstream)).aiter_bytes()])
    sent = chunks(body)
    assert texts(body) == ["abcdef", ""]  # the text as one chunk, then the finish on its own
    assert sent[0]["choices"][0]["delta"]["role"] == "assistant"
    assert sent[1]["choices"][0]["finish_reason"] == "stop"


async def test_text_that_arrives_piece_by_piece_is_sent_piece_by_piece() -> None:
    words = ["one ", "two ", "three"]
    upstream = Upstream([event({"content": w}) for w in words] + [event({}, "stop")], paced_from=1)
    seen: list[str] = []
    async for piece in (await response(upstream)).aiter_bytes():
        seen += texts(piece)
        upstream.turn.set()  # the next piece comes only once this one has been passed on
    assert seen == [*words, ""]


async def test_only_plain_text_is_joined_and_order_is_kept() -> None:
    tool = {
        "tool_calls": [
            {"index": 0, "id": "t", "type": "function", "function": {"name": "f", "arguments": ""}}
        ]
    }
    pieces = [
        event({"content": "a"}),
        event({"content": "b"}),
        event(tool),
        event({"content": "c"}),
        event({"content": "d"}),
        event({"content": "e"}, system_fingerprint="other"),  # another envelope
        event({"content": "f"}, system_fingerprint="other", logprobs={"content": []}),  # with logprobs
        event({}, "stop"),
    ]
    body = b"".join([piece async for piece in (await response(Upstream(pieces))).aiter_bytes()])
    sent = chunks(body)
    assert texts(body) == ["ab", "", "cd", "e", "f", ""]
    assert "tool_calls" in sent[1]["choices"][0]["delta"]


async def test_a_failure_mid_stream_reaches_the_reader_after_the_text_before_it() -> None:
    failure = httpx2.ReadTimeout("no piece for 30 s")
    upstream = Upstream([event({"content": "ab"}), failure], paced_from=1)
    stream = (await response(upstream)).aiter_bytes()
    assert texts(await anext(stream)) == ["ab"]
    upstream.turn.set()
    with pytest.raises(httpx2.ReadTimeout):
        await anext(stream)


async def test_closing_mid_stream_stops_the_reader_and_closes_the_upstream() -> None:
    upstream = Upstream([event({"content": "ab"}), event({"content": "cd"})], paced_from=1)
    reply = await response(upstream)
    stream = reply.aiter_bytes()
    assert texts(await anext(stream)) == ["ab"]
    await reply.aclose()  # the reader waits for a piece that never comes
    assert upstream.closed


async def test_reasoning_and_text_reach_their_listeners_in_the_order_they_came() -> None:
    heard: list[tuple[str, str]] = []
    pieces = [
        event({"content": "a"}),
        event({"content": "", "reasoning_content": "r"}),
        event({"content": "b"}),
    ]
    with capturing(lambda text: heard.append(("reasoning", text))):
        reply = await response(Upstream([*pieces, event({}, "stop")]))
    async for piece in reply.aiter_bytes():
        heard += [("text", text) for text in texts(piece) if text]
    assert heard == [("text", "a"), ("reasoning", "r"), ("text", "b")]


async def test_reasoning_without_content_then_text_in_one_burst() -> None:
    # llama-server and vLLM leave content out of a reasoning delta, and a first delta may hold the role alone.
    heard: list[tuple[str, str]] = []
    pieces = [
        event({"role": "assistant"}),
        event({"reasoning_content": "think"}),
        event({"content": "Hel"}),
        event({"content": "lo"}),
        event({}, "stop"),
    ]
    with capturing(lambda text: heard.append(("reasoning", text))):
        reply = await response(Upstream(pieces))
    async for piece in reply.aiter_bytes():
        heard += [("text", text) for text in texts(piece) if text]
    assert heard == [("reasoning", "think"), ("text", "Hello")]


async def test_text_after_a_role_alone_is_joined_to_it() -> None:
    pieces = [event({"role": "assistant"}), event({"content": "ab"}), event({"content": "c"})]
    body = b"".join([piece async for piece in (await response(Upstream(pieces))).aiter_bytes()])
    assert chunks(body)[0]["choices"][0]["delta"] == {"role": "assistant", "content": "abc"}


async def test_empty_reasoning_fields_do_not_stop_text_being_joined() -> None:
    # DeepSeek sends "reasoning_content": null beside every piece of the answer.
    pieces = [event({"content": p, "reasoning_content": None}) for p in ("a", "b", "c")]
    body = b"".join([piece async for piece in (await response(Upstream(pieces))).aiter_bytes()])
    assert texts(body) == ["abc"]


async def test_an_error_frame_comes_after_the_text_before_it() -> None:
    pieces = [event({"content": "partial"}), b'data: {"error": {"message": "overloaded"}}\n\n']
    body = b"".join([piece async for piece in (await response(Upstream(pieces))).aiter_bytes()])
    frames = [line for line in body.decode().split("\n") if line.startswith("data: ")]
    assert "partial" in frames[0] and "overloaded" in frames[1]


async def test_closing_keeps_the_callers_cancellation() -> None:
    upstream = Upstream([event({"content": "ab"}), event({"content": "cd"})], paced_from=1)
    upstream.unwound = asyncio.Event()  # the reader takes a while to let go of the upstream
    reply = await response(upstream)
    stream = reply.aiter_bytes()
    await anext(stream)
    closing = asyncio.create_task(reply.aclose())
    for _ in range(5):
        await asyncio.sleep(0)  # aclose now waits for the reader
    closing.cancel()
    upstream.unwound.set()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert upstream.closed


async def test_a_stream_closed_elsewhere_ends_a_read_waiting_on_it() -> None:
    upstream = Upstream([event({"content": "ab"}), event({"content": "cd"})], paced_from=1)
    reply = await response(upstream)
    stream = reply.aiter_bytes()
    await anext(stream)
    waiting = asyncio.create_task(anext(stream))  # waits for a piece the upstream holds back
    await asyncio.sleep(0)
    await reply.aclose()
    with pytest.raises(httpx2.StreamClosed):
        await waiting


async def test_a_last_event_without_its_blank_line_is_read() -> None:
    pieces = [event({"content": "ab"}), event({}, "stop").rstrip(b"\n")]
    body = b"".join([piece async for piece in (await response(Upstream(pieces))).aiter_bytes()])
    assert texts(body) == ["ab", ""]
    assert chunks(body)[-1]["choices"][0]["finish_reason"] == "stop"
    assert body.endswith(b"data: [DONE]\n\n")
