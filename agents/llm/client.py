"""Structured calls to an OpenAI-compatible chat model, with bounded re-asks and accounting."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from time import perf_counter
from typing import Any, Generic, Literal, Protocol, TypeVar
from urllib.parse import urlsplit

import openai
import structlog
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from agents.llm.attempts import FailedAttempt, counting_attempts
from agents.llm.calls import CallFailure, Usage
from agents.llm.lanes import calling
from agents.llm.models import CallKind, ModelSpec, limit_spec
from agents.llm.ratelimit import LimitStore, ProviderLimiter, estimate_tokens
from agents.llm.reasoning import ReasoningSink, TagSplitter, json_candidates, split_reasoning
from agents.llm.serverinfo import ServerInfo, server_info
from agents.llm.structured import (
    MODES,
    Mode,
    bind,
    ignored,
    llm_schema,
    message_text,
    refused,
    schema_name,
    with_instructions,
)
from agents.llm.wire import capturing

T = TypeVar("T", bound=BaseModel)
# A raw reply is kept for audit up to this many characters: a runaway 1 MB reply must not swell
# every checkpoint, result and row that carries it. The kept text says what was cut.
RAW_OUTPUT_CAP = 16_384


def keep_raw(text: str, cap: int = RAW_OUTPUT_CAP) -> str:
    """``text`` as stored: whole up to ``cap`` characters, else its head with a marker and the full length."""
    if len(text) <= cap:
        return text
    return f"{text[:cap]}\n[… truncated by thinkloop: {len(text)} characters in all, {cap} kept]"


TextSink = Callable[[str], None]
log = structlog.get_logger(__name__)

__all__ = [
    "CachedReply",
    "LLMClient",
    "ResponseCache",
    "StructuredResult",
    "endpoint_host",
    "llm_schema",
    "message_text",
]


def preload() -> None:
    """Import what the OpenAI SDK imports lazily on a client's first streamed call (`client.beta`:
    about 1 s, which would stall every run and stream of a server mid-flight). For long-lived
    processes, at start-up."""
    import openai.resources.beta  # noqa: F401


@dataclass(frozen=True)
class CachedReply:
    """A stored reply: its text, and the model id the endpoint reported when it answered (None:
    not known, for a reply stored before thinkloop kept it)."""

    text: str
    reported_model: str | None = None


class ResponseCache(Protocol):
    """Where temperature-0 replies are kept, addressed by a hash of everything that shaped them."""

    async def get(self, key: str) -> CachedReply | None:
        """The reply stored under ``key``, if any."""
        ...

    async def put(self, key: str, model: str, text: str, reported_model: str | None = None) -> None:
        """Store a reply of the registry's ``model`` and the id its endpoint reported (first writer wins)."""
        ...


@dataclass
class StructuredResult(Generic[T]):
    """A validated object, or None with the failure; raw outputs of every attempt are kept, and a
    reasoning model's own thinking (``reasoning``) apart from them. ``reported_model``: the model id
    the endpoint reported in its last reply ("" when it answered without naming one; None when it
    never answered)."""

    value: T | None
    raw_outputs: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    failure: CallFailure | None = None
    reasoning: str = ""
    reported_model: str | None = None
    # The server's ``system_fingerprint`` in its last reply (None: it sent none, or the reply came
    # from the response cache)
    system_fingerprint: str | None = None

    @property
    def error(self) -> str | None:
        """The failure in one line (None when a value came back)."""
        return self.failure.summary() if self.failure is not None else None


@dataclass
class Reply:
    """One answered request: the message, its answer text (reasoning taken out), usage, how it
    ended, and the model id the endpoint reported ("" when the reply named none)."""

    message: AIMessage
    text: str
    usage: Usage
    finish_reason: str | None
    cut_off: bool
    reported_model: str = ""
    system_fingerprint: str | None = None


class CutOff(RuntimeError):
    """A streamed reply ended without a finish reason: the server dropped it part way."""


class Deterministic(RuntimeError):
    """At temperature 0, a reply that did not fit came back identical after a correction."""


class TokenLimit(RuntimeError):
    """A reply that was cut at ``max_tokens`` (finish_reason ``length``) and did not fit the schema."""


def kind_of(schema: type[BaseModel]) -> CallKind:
    """The kind of call that asks for ``schema``: its ``max_tokens`` bound is that kind's."""
    return {"Revision": "reviser", "Solution": "solver"}.get(schema.__name__, "judge")  # type: ignore[return-value]


def endpoint_host(base_url: str | None) -> str:
    """host[:port] of a base URL (the OpenAI default when None), for failure reports and logs."""
    return urlsplit(base_url).netloc if base_url else "api.openai.com"


class LLMClient:
    """One configured endpoint: a chat model behind a concurrency limit.

    ``mode`` is how it asks for JSON; what a server is seen to refuse or ignore moves it on for
    good (``learned`` keeps why), so later calls do not pay for the same discovery again.
    """

    def __init__(self, spec: ModelSpec, chat: BaseChatModel, limiter: ProviderLimiter | None = None) -> None:
        self.spec = spec
        self._chat = chat
        self._limiter = limiter or LimitStore().limiter(limit_spec(spec))
        self.mode: Mode = spec.structured_output
        self.learned: list[str] = []
        self.slots: int | None = None  # the server's own count of requests it serves at once, if told
        self.server: ServerInfo | None = None  # what the server said about itself (None: not asked yet)
        self._slots_asked = False
        self._server_lock: asyncio.Lock | None = None

    async def aclose(self) -> None:
        """Close the endpoint's connection pool."""
        http_client = getattr(self._chat, "http_async_client", None)
        if http_client is not None:
            await http_client.aclose()

    @property
    def model_id(self) -> str:
        """The registry name recorded with every output."""
        return self.spec.name

    @property
    def chat(self) -> BaseChatModel:
        """The underlying chat model (the probe talks to it directly)."""
        return self._chat

    def adopt(self, mode: Mode, why: str) -> None:
        """Use ``mode`` from now on (what a probe found to work)."""
        if mode != self.mode:
            self.learned.append(f"{why}; now {mode}")
            self.mode = mode

    async def structured(
        self,
        messages: Sequence[BaseMessage],
        schema: type[T],
        *,
        on_text: TextSink | None = None,
        on_reasoning: ReasoningSink | None = None,
        cache: ResponseCache | None = None,
        kind: CallKind | None = None,
    ) -> StructuredResult[T]:
        """Ask for ``schema``; re-ask up to ``parse_retries`` times when the reply does not fit.

        ``on_text`` streams the answer as it grows; ``on_reasoning`` gets a reasoning model's own
        thinking, from a field or a tag, as it arrives. With a cache and temperature 0, an
        identical request is answered from the cache at no cost. ``kind`` (judge, solver, reviser;
        by default read from the schema) chooses the reply's ``max_tokens``.
        """
        key = self.cache_key(messages, schema) if cache is not None and self.spec.temperature == 0 else None
        if key is not None and cache is not None:
            cached = await self._from_cache(cache, key, schema, on_text)
            if cached is not None:
                return cached
        await self.learn_server()
        limit = self.spec.max_tokens.of(kind or kind_of(schema))
        async with calling():  # the run's lane, from its first call of a step to its last reply
            result = await self._ask(messages, schema, on_text, on_reasoning, limit)
        if key is not None and cache is not None and result.value is not None:
            await cache.put(key, self.model_id, result.raw_outputs[-1], result.reported_model)
        return result

    async def learn_server(self) -> None:
        """At first use, ask the server about itself (``agents/llm/serverinfo.py``): the model file it
        serves joins every reported model id, and unless ``max_concurrency`` is configured, no more
        calls are sent at once than it has slots, so the rest wait here rather than in its queue."""
        if self.server is not None:
            return
        self._server_lock = self._server_lock or asyncio.Lock()
        async with self._server_lock:
            if self.server is None:
                self.adopt_server(await server_info(self.spec, self._chat))

    def adopt_server(self, info: ServerInfo) -> None:
        """Use what the server said about itself (what ``models check`` found, or asked at first use)."""
        self.server = info
        if not self._slots_asked and not self.spec.concurrency_set:
            self.adopt_slots(info.slots)

    def adopt_slots(self, slots: int | None) -> None:
        """Use the server's slot count (None: it gave none) as the concurrency, where it is lower."""
        self._slots_asked = True
        self.slots = slots
        if slots is None or self.spec.concurrency_set or slots >= self._limiter.spec.max_concurrency:
            return
        self._limiter = self._limiter.store.limiter(replace(self._limiter.spec, max_concurrency=slots))
        self.learned.append(f"the server serves {slots} requests at once (GET /props); at most {slots} sent")
        log.info("llm.server_slots", model=self.model_id, slots=slots)

    def cache_key(self, messages: Sequence[BaseMessage], schema: type[BaseModel]) -> str:
        """A hash of the endpoint, model, output schema and every message."""
        material = [
            self.spec.base_url,
            self.spec.model,
            self.spec.seed,
            schema_name(schema),
            llm_schema(schema),
            [(m.type, m.content) for m in messages],
        ]
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()

    async def _from_cache(
        self, cache: ResponseCache, key: str, schema: type[T], on_text: TextSink | None
    ) -> StructuredResult[T] | None:
        cached = await cache.get(key)
        if cached is None:
            return None
        text = cached.text
        try:
            value = schema.model_validate_json(text)
        except ValidationError:
            return None
        if on_text is not None:
            on_text("")
            on_text(text)
        log.debug("llm.cache_hit", model=self.model_id, schema=schema_name(schema))
        return StructuredResult(value, [text], Usage(), None, reported_model=cached.reported_model)

    async def _ask(
        self,
        messages: Sequence[BaseMessage],
        schema: type[T],
        on_text: TextSink | None,
        on_reasoning: ReasoningSink | None,
        limit: int,
    ) -> StructuredResult[T]:
        result: StructuredResult[T] = StructuredResult(None)

        def think(piece: str) -> None:
            result.reasoning += piece
            if on_reasoning is not None:
                on_reasoning(piece)

        with counting_attempts() as attempts:
            await self._attempts(result, messages, schema, on_text, think, limit)
        # Every HTTP attempt beyond one per answered call was a retry (or a call that failed for good).
        result.usage += Usage(retries=max(attempts.count - result.usage.calls, 0))
        result.usage += self.failed_usage(attempts.failed)
        return result

    def failed_usage(self, failed: Sequence[FailedAttempt]) -> Usage:
        """What attempts that brought back no reply cost: their prompts, as reported or estimated."""
        usage = Usage()
        for attempt in failed:
            tokens, cached = attempt.input_tokens, attempt.cached_input_tokens
            cost = self.spec.price.cost(tokens, 0, cached) if self.spec.price else None
            usage += Usage(
                input_tokens=tokens,
                cached_input_tokens=cached,
                cost_usd=cost,
                failed_attempts=1,
                failed_input_tokens=tokens,
                failed_cached_input_tokens=cached,
                estimated_input_tokens=tokens if attempt.estimated else 0,
            )
        return usage

    async def _attempts(
        self,
        result: StructuredResult[T],
        messages: Sequence[BaseMessage],
        schema: type[T],
        on_text: TextSink | None,
        think: ReasoningSink,
        limit: int,
    ) -> None:
        """Up to ``parse_retries + 1`` attempts. An endpoint error ends at once (the SDK has already
        retried it ``max_retries`` times); anything else the client stack raises (a validation
        error on an unusual stream, a stream cut off) is a failed attempt like a malformed reply.
        A reply cut at ``limit`` tokens is asked for once more, shorter, and never again: at
        temperature 0 the same request would bring back the same ramble.
        At temperature 0 a reply that did not fit comes back with a correction naming its errors; the
        same text again means the correction changed nothing, so the call stops there.
        Nothing raised here escapes as an exception: the caller gets a failure with its cause."""
        conversation = list(messages)
        cut_before = False
        malformed: list[str] = []  # the text of each reply that did not fit, in order
        for _attempt in range(self.spec.parse_retries + 1):
            try:
                reply = await self._call(conversation, schema, on_text, think, result, limit)
            except openai.OpenAIError as exc:
                result.failure = self.failure("endpoint", exc)
                log.warning("llm.call_failed", model=self.model_id, error=result.error, exc_info=exc)
                return
            except Exception as exc:
                result.failure = self.failure("client", exc)
                log.warning("llm.client_error", model=self.model_id, error=result.error, exc_info=exc)
                continue
            result.raw_outputs.append(keep_raw(reply.text))
            if reply.cut_off:  # a transient drop, not the model's answer: ask again, unchanged
                result.failure = self.failure("client", CutOff("the stream ended without a finish reason"))
                log.info("llm.stream_cut_off", model=self.model_id)
                continue
            try:
                result.value = _parse(reply.text, schema)
                result.failure = None
                return
            except ValidationError as exc:
                result.failure = self.failure("malformed", exc, reply.finish_reason)
                log.info("llm.malformed_output", model=self.model_id, schema=schema_name(schema))
                if reply.finish_reason == "length":
                    if cut_before:
                        result.failure = self.failure("malformed", TokenLimit(_twice(limit)))
                        return
                    cut_before = True
                    # The cut reply stays out of the conversation: it may be a ramble as long as the limit.
                    conversation = [*messages, HumanMessage(_shorter(limit))]
                    continue
                if self.spec.temperature == 0 and reply.text in malformed:
                    result.failure = self.failure("malformed", Deterministic(_identical(exc)))
                    log.info("llm.deterministic_failure", model=self.model_id, schema=schema_name(schema))
                    return
                malformed.append(reply.text)
                conversation += [reply.message, HumanMessage(_correction(exc))]

    async def _call(
        self,
        conversation: Sequence[BaseMessage],
        schema: type[BaseModel],
        on_text: TextSink | None,
        think: ReasoningSink,
        result: StructuredResult[Any],
        limit: int,
    ) -> Reply:
        """One answer, in the first mode the server honours; what it refuses or ignores is learned."""
        while True:
            mode = self.mode
            try:
                reply = await self._timed_call(conversation, schema, mode, on_text, think, limit)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if mode == MODES[-1] or not refused(exc, mode):
                    raise
                self._learn(mode, f"{mode} refused with HTTP {exc.status_code}")
                continue
            result.usage += reply.usage
            server = self.server or ServerInfo()
            result.reported_model = server.reported(reply.reported_model)
            result.system_fingerprint = reply.system_fingerprint
            if mode != MODES[-1] and ignored(reply.message, reply.text, mode):
                self._learn(mode, f"{mode} ignored: the reply held neither JSON nor a tool call")
                continue
            return reply

    def _learn(self, failed: Mode, reason: str) -> None:
        following = MODES[MODES.index(failed) + 1]
        if MODES.index(following) > MODES.index(self.mode):
            self.mode = following
            self.learned.append(f"{reason}; now {following}")
            log.warning("llm.mode_changed", model=self.model_id, mode=following, reason=reason)

    async def _timed_call(
        self,
        messages: Sequence[BaseMessage],
        schema: type[BaseModel],
        mode: Mode,
        on_text: TextSink | None,
        think: ReasoningSink,
        limit: int,
    ) -> Reply:
        bound = bind(self._chat, schema, mode).bind(max_tokens=limit)
        prompt = with_instructions(messages, schema, mode)
        expected = min(self.spec.expected_output_tokens, limit)
        estimate = estimate_tokens([str(m.content) for m in prompt], expected)
        splitter = TagSplitter(self.spec.reasoning_tag, think) if self._tags else None
        # Streamed, a call is timed from its first token (``agents/llm/timeouts.py``): a request waiting in
        # a busy server's queue or reading a long prompt is not a failure while the server works.
        streamed = on_text is not None or self.spec.stream
        async with self._limiter.call(estimate):
            with capturing(think) as observed:
                start = perf_counter()
                if not streamed:
                    message = await bound.ainvoke(prompt)
                else:
                    message = await _stream(bound, prompt, on_text or _ignore, splitter)
                latency = perf_counter() - start
        usage = self._usage(message, latency, observed.cached_tokens)
        await self._limiter.settle(estimate, usage.input_tokens + usage.output_tokens)
        text = message_text(message)
        if not streamed and self._tags:
            reasoning, text = split_reasoning(text, self.spec.reasoning_tag)
            if reasoning:
                think(reasoning)
        finish = observed.finish_reason or message.response_metadata.get("finish_reason")
        cut_off = observed.streamed and observed.finish_reason is None
        return Reply(message, text, usage, finish, cut_off, observed.model or "", observed.system_fingerprint)

    @property
    def _tags(self) -> bool:
        return self.spec.reasoning in ("auto", "tag")

    def _usage(self, reply: AIMessage, latency: float, cached: int | None) -> Usage:
        meta = reply.usage_metadata or {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        tokens_in, tokens_out = meta["input_tokens"], meta["output_tokens"]
        # Read off the wire (``agents.llm.wire.cached_prompt_tokens``): langchain keeps OpenAI's field
        # only, not llama.cpp's or DeepSeek's. Never more than the prompt it is part of.
        tokens_cached = min(cached or 0, tokens_in)
        cost = self.spec.price.cost(tokens_in, tokens_out, tokens_cached) if self.spec.price else None
        return Usage(
            input_tokens=tokens_in,
            cached_input_tokens=tokens_cached,
            output_tokens=tokens_out,
            latency_s=latency,
            cost_usd=cost,
            calls=1,
        )

    def failure(
        self, kind: Literal["endpoint", "malformed", "client"], exc: BaseException, finish: str | None = None
    ) -> CallFailure:
        """What went wrong with a call to this endpoint, with the cause's cause where there is one."""
        if isinstance(exc, ValidationError):
            message = f"the reply did not fit the schema ({exc.error_count()} validation error(s))"
            if finish == "length":
                message += "; it was cut at the token limit (finish_reason: length)"
        else:
            message = str(exc) or type(exc).__name__
            root = _root_cause(exc)
            # A status says what happened; without one (connection, timeout) the root cause does.
            if getattr(exc, "status_code", None) is None and root is not exc and str(root) not in message:
                message += f" ({type(root).__name__}: {root})"
        return CallFailure(
            kind=kind,
            model=self.model_id,
            host=endpoint_host(self.spec.base_url),
            status=getattr(exc, "status_code", None),
            exception=public_name(exc),
            message=message[:500],
        )


def _parse(text: str, schema: type[T]) -> T:
    """The first JSON candidate of the reply that fits the schema; else the whole text's error."""
    error: ValidationError | None = None
    for candidate in json_candidates(text):
        try:
            return schema.model_validate_json(candidate)
        except ValidationError as exc:
            error = error or exc
    assert error is not None  # json_candidates always yields the text itself first
    raise error


async def _stream(
    bound: Any, messages: Sequence[BaseMessage], on_text: TextSink, splitter: TagSplitter | None
) -> AIMessage:
    # The chunks are merged once, at the end: merging each into the message so far builds a new
    # message per chunk (300 chunks: 4.9 ms merged one by one, 0.3 ms at once). A reply that streams
    # a tool call is merged as it goes, for its arguments so far are what listeners see.
    chunks: list[AIMessageChunk] = []
    merged: AIMessageChunk | None = None
    answer = ""
    on_text("")  # a new attempt starts: listeners restart their view of the text
    async for chunk in bound.astream(list(messages)):
        chunks.append(chunk)
        if merged is not None or chunk.tool_call_chunks:
            merged = _merge(chunks) if merged is None else merged + chunk
            on_text(message_text(merged))
            continue
        piece = chunk.text
        answer += splitter.feed(piece) if splitter is not None else piece
        on_text(answer)
    tail = splitter.finish() if splitter is not None else ""
    if tail:  # held back in case it was a tag; it was not
        answer += tail
        on_text(answer)
    if not chunks:
        return AIMessage(content="")
    if merged is None:
        merged = _merge(chunks)
    return AIMessage(
        content=answer if not merged.tool_call_chunks else merged.content,
        tool_calls=merged.tool_calls,
        invalid_tool_calls=merged.invalid_tool_calls,
        usage_metadata=merged.usage_metadata,
        response_metadata=merged.response_metadata,
    )


def _merge(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    """One message from a reply's chunks, merged in one pass."""
    return chunks[0] if len(chunks) == 1 else chunks[0] + chunks[1:]


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost exception of a chain (a connection refused under the SDK's wrapper); a context
    raised ``from None`` is not part of it (a bound's TimeoutError under the ReadTimeout naming it)."""
    seen = {id(exc)}
    while (inner := _inner(exc)) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc


def _inner(exc: BaseException) -> BaseException | None:
    """The exception ``exc`` was raised from or while handling, unless suppressed."""
    return exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)


def public_name(exc: BaseException) -> str:
    """The OpenAI SDK's class name where langchain re-raised it under its own subclass."""
    for cls in type(exc).__mro__:
        if cls.__module__.startswith("openai"):
            return cls.__name__
    return type(exc).__name__


def _ignore(_: str) -> None:
    """A text sink for a streamed call nobody watches."""


def _shorter(limit: int) -> str:
    return (
        f"Your previous reply was cut off at the limit of {limit} tokens before it was complete. "
        "Reply again, much more briefly: one or two short sentences in each text field, and only "
        "the JSON object."
    )


def _twice(limit: int) -> str:
    return f"the reply hit max_tokens ({limit}) twice (finish_reason: length): no complete reply came back"


def _identical(exc: ValidationError) -> str:
    return (
        "deterministic failure: identical reply at temperature 0 (after a correction naming its "
        f"errors, {_problems(exc)}, the model sent the same text again); not asked again"
    )


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['type']}" for e in exc.errors()[:5])


def _correction(exc: ValidationError) -> str:
    # Only field locations and error kinds go back: never the model's own text, which may be hostile.
    return (
        f"Your reply did not match the required JSON schema ({_problems(exc)}). "
        "Reply again with only the JSON object."
    )
