"""Structured calls to an OpenAI-compatible chat model, with bounded re-asks and accounting."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Generic, Literal, Protocol, TypeVar
from urllib.parse import urlsplit

import openai
import structlog
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from agents.attempts import counting_attempts
from agents.models import ModelSpec, limit_spec
from agents.ratelimit import LimitStore, ProviderLimiter, estimate_tokens
from agents.schemas import CallFailure, Usage

T = TypeVar("T", bound=BaseModel)
log = structlog.get_logger(__name__)


def preload() -> None:
    """Import what the OpenAI SDK imports lazily on a client's first streamed call (`client.beta`:
    about 1 s, which would stall every run and stream of a server mid-flight). For long-lived
    processes, at start-up."""
    import openai.resources.beta  # noqa: F401


# JSON-schema keywords that OpenAI's strict structured outputs reject; we validate them locally.
_UNSUPPORTED_KEYWORDS = {"maxLength", "minLength", "maxItems", "minItems", "title", "default"}


class ResponseCache(Protocol):
    """Where temperature-0 replies are kept, addressed by a hash of everything that shaped them."""

    async def get(self, key: str) -> str | None:
        """The reply stored under ``key``, if any."""
        ...

    async def put(self, key: str, model: str, text: str) -> None:
        """Store a reply (first writer wins)."""
        ...


@dataclass
class StructuredResult(Generic[T]):
    """A validated object, or None with the failure; raw outputs of every attempt are kept."""

    value: T | None
    raw_outputs: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    failure: CallFailure | None = None

    @property
    def error(self) -> str | None:
        """The failure in one line (None when a value came back)."""
        return self.failure.summary() if self.failure is not None else None


@functools.cache
def llm_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to the endpoint: pydantic's, minus keywords strict mode rejects.

    Computed once per schema (it was 2 % of a batch's CPU); callers treat it as read-only.
    """
    return _strip(schema.model_json_schema())  # type: ignore[no-any-return]


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in _UNSUPPORTED_KEYWORDS}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def endpoint_host(base_url: str | None) -> str:
    """host[:port] of a base URL (the OpenAI default when None), for failure reports and logs."""
    return urlsplit(base_url).netloc if base_url else "api.openai.com"


def message_text(message: BaseMessage) -> str:
    """The structured payload of a reply: tool-call arguments if any, else the text content."""
    if isinstance(message, AIMessageChunk) and message.tool_call_chunks:
        return "".join(chunk.get("args") or "" for chunk in message.tool_call_chunks)
    if isinstance(message, AIMessage) and message.tool_calls:
        return json.dumps(message.tool_calls[0]["args"])
    if isinstance(message, AIMessage) and message.invalid_tool_calls:
        return message.invalid_tool_calls[0].get("args") or ""
    return message.text


class LLMClient:
    """One configured endpoint: a chat model behind a concurrency limit."""

    def __init__(self, spec: ModelSpec, chat: BaseChatModel, limiter: ProviderLimiter | None = None) -> None:
        self.spec = spec
        self._chat = chat
        self._limiter = limiter or LimitStore().limiter(limit_spec(spec))
        self._mode = spec.structured_output

    async def aclose(self) -> None:
        """Close the endpoint's connection pool."""
        http_client = getattr(self._chat, "http_async_client", None)
        if http_client is not None:
            await http_client.aclose()

    @property
    def model_id(self) -> str:
        """The registry name recorded with every output."""
        return self.spec.name

    async def structured(
        self,
        messages: Sequence[BaseMessage],
        schema: type[T],
        *,
        on_text: Callable[[str], None] | None = None,
        cache: ResponseCache | None = None,
    ) -> StructuredResult[T]:
        """Ask for ``schema``; re-ask up to ``parse_retries`` times when the reply does not fit.

        With a cache and temperature 0, an identical request is answered from the cache at no cost.
        """
        key = self.cache_key(messages, schema) if cache is not None and self.spec.temperature == 0 else None
        if key is not None and cache is not None:
            cached = await self._from_cache(cache, key, schema, on_text)
            if cached is not None:
                return cached
        result = await self._ask(messages, schema, on_text)
        if key is not None and cache is not None and result.value is not None:
            await cache.put(key, self.model_id, result.raw_outputs[-1])
        return result

    def cache_key(self, messages: Sequence[BaseMessage], schema: type[BaseModel]) -> str:
        """A hash of the endpoint, model, output schema and every message."""
        material = [
            self.spec.base_url,
            self.spec.model,
            self.spec.seed,
            schema.__name__,
            llm_schema(schema),
            [(m.type, m.content) for m in messages],
        ]
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()

    async def _from_cache(
        self, cache: ResponseCache, key: str, schema: type[T], on_text: Callable[[str], None] | None
    ) -> StructuredResult[T] | None:
        text = await cache.get(key)
        if text is None:
            return None
        try:
            value = schema.model_validate_json(text)
        except ValidationError:
            return None
        if on_text is not None:
            on_text("")
            on_text(text)
        log.debug("llm.cache_hit", model=self.model_id, schema=schema.__name__)
        return StructuredResult(value, [text], Usage(), None)

    async def _ask(
        self, messages: Sequence[BaseMessage], schema: type[T], on_text: Callable[[str], None] | None
    ) -> StructuredResult[T]:
        with counting_attempts() as attempts:
            result = await self._ask_counted(messages, schema, on_text)
        # Every HTTP attempt beyond one per answered call was a retry (or a call that failed for good).
        result.usage += Usage(retries=max(attempts[0] - result.usage.calls, 0))
        return result

    async def _ask_counted(
        self, messages: Sequence[BaseMessage], schema: type[T], on_text: Callable[[str], None] | None
    ) -> StructuredResult[T]:
        """Up to ``parse_retries + 1`` attempts. An endpoint error ends at once (the SDK has already
        retried it ``max_retries`` times); anything else the client stack raises (a validation
        error on an unusual stream, say) is a failed attempt like a malformed reply. Nothing raised
        here escapes as an exception: the caller gets a failure with its cause."""
        result: StructuredResult[T] = StructuredResult(None)
        conversation = list(messages)
        for _attempt in range(self.spec.parse_retries + 1):
            try:
                reply, usage = await self._call(conversation, schema, on_text)
            except openai.OpenAIError as exc:
                result.failure = self.failure("endpoint", exc)
                log.warning("llm.call_failed", model=self.model_id, error=result.error, exc_info=exc)
                return result
            except Exception as exc:
                result.failure = self.failure("client", exc)
                log.warning("llm.client_error", model=self.model_id, error=result.error, exc_info=exc)
                continue
            result.usage += usage
            text = message_text(reply)
            result.raw_outputs.append(text)
            try:
                result.value = schema.model_validate_json(text)
                result.failure = None
                return result
            except ValidationError as exc:
                result.failure = self.failure("malformed", exc)
                log.info("llm.malformed_output", model=self.model_id, schema=schema.__name__)
                conversation += [reply, HumanMessage(_correction(exc))]
        return result

    def failure(self, kind: Literal["endpoint", "malformed", "client"], exc: BaseException) -> CallFailure:
        """What went wrong with a call to this endpoint, with the cause's cause where there is one."""
        if isinstance(exc, ValidationError):
            message = f"the reply did not fit the schema ({exc.error_count()} validation error(s))"
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
            exception=_public_name(exc),
            message=message[:500],
        )

    async def _call(
        self, messages: Sequence[BaseMessage], schema: type[BaseModel], on_text: Callable[[str], None] | None
    ) -> tuple[AIMessage, Usage]:
        try:
            return await self._timed_call(messages, schema, on_text)
        except openai.BadRequestError as exc:
            if self._mode != "json_schema" or "response_format" not in str(exc):
                raise
            log.warning("llm.json_schema_unsupported", model=self.model_id)
            self._mode = "tool_calling"
            return await self._timed_call(messages, schema, on_text)

    async def _timed_call(
        self, messages: Sequence[BaseMessage], schema: type[BaseModel], on_text: Callable[[str], None] | None
    ) -> tuple[AIMessage, Usage]:
        bound = self._bind(schema)
        estimate = estimate_tokens([str(m.content) for m in messages], self.spec.expected_output_tokens)
        async with self._limiter.call(estimate):
            start = perf_counter()
            if on_text is None:
                reply = await bound.ainvoke(list(messages))
            else:
                reply = await _stream(bound, messages, on_text)
            latency = perf_counter() - start
        usage = self._usage(reply, latency)
        await self._limiter.settle(estimate, usage.input_tokens + usage.output_tokens)
        return reply, usage

    def _bind(self, schema: type[BaseModel]) -> Any:
        name, body = schema.__name__, llm_schema(schema)
        if self._mode == "tool_calling":
            tool = {"type": "function", "function": {"name": name, "parameters": body}}
            return self._chat.bind_tools([tool], tool_choice=name)
        fmt = {"type": "json_schema", "json_schema": {"name": name, "schema": body, "strict": True}}
        return self._chat.bind(response_format=fmt)

    def _usage(self, reply: AIMessage, latency: float) -> Usage:
        meta = reply.usage_metadata or {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        tokens_in, tokens_out = meta["input_tokens"], meta["output_tokens"]
        cost = self.spec.price.cost(tokens_in, tokens_out) if self.spec.price else None
        return Usage(
            input_tokens=tokens_in, output_tokens=tokens_out, latency_s=latency, cost_usd=cost, calls=1
        )


async def _stream(bound: Any, messages: Sequence[BaseMessage], on_text: Callable[[str], None]) -> AIMessage:
    merged: AIMessageChunk | None = None
    on_text("")  # a new attempt starts: listeners restart their view of the text
    async for chunk in bound.astream(list(messages)):
        merged = chunk if merged is None else merged + chunk
        on_text(message_text(merged))
    if merged is None:
        return AIMessage(content="")
    return AIMessage(
        content=merged.content,
        tool_calls=merged.tool_calls,
        invalid_tool_calls=merged.invalid_tool_calls,
        usage_metadata=merged.usage_metadata,
    )


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost exception of a chain (a connection refused under the SDK's wrapper)."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc


def _public_name(exc: BaseException) -> str:
    """The OpenAI SDK's class name where langchain re-raised it under its own subclass."""
    for cls in type(exc).__mro__:
        if cls.__module__.startswith("openai"):
            return cls.__name__
    return type(exc).__name__


def _correction(exc: ValidationError) -> str:
    # Only field locations and error kinds go back: never the model's own text, which may be hostile.
    problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['type']}" for e in exc.errors()[:5])
    return (
        f"Your reply did not match the required JSON schema ({problems}). "
        "Reply again with only the JSON object."
    )
