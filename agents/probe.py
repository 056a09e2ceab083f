"""`thinkloop models check`: one tiny request per capability, and what the client will use.

The probe asks for a one-field JSON object three ways (json_schema, a tool call, streamed plain
text) and reads both the answers and what the wire layer saw (``agents/llm/wire.py``): where the role
and the usage came, whether reasoning arrived in a field or a tag, what had to be fixed. Every
request is bounded by the model's ``max_tokens.probe`` (a base model rambles to the server's own
limit otherwise: 47–70 s per check against a small local model). A probe that the server answers
with an HTTP error is sent once: only a busy server (429, 503) or a refused connection is asked
again, as a deterministic error (a 500 of a broken template) would come back the same.

The check also predicts the run: what the server says of itself (``agents/llm/serverinfo.py``: slots,
the context of one, the model file), whether each judge's prompt for a long problem fits a slot with
its ``max_tokens`` (``agents/fit.py``), and the server's prompt-reading rate, measured by reading the
longest judge prompt that fits (one token of reply) as the run's first-token bound will use it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from agents.fit import PromptFit, judge_fits, judge_prompt, judge_schema
from agents.llm.calls import Usage
from agents.llm.client import public_name
from agents.llm.models import ModelSpec, prompt_rate
from agents.llm.reasoning import split_reasoning
from agents.llm.serverinfo import ServerInfo, server_info
from agents.llm.structured import MODES, Mode, bind, has_tool_call, message_text
from agents.llm.wire import Observed, capturing

R = TypeVar("R")
# HTTP statuses a server sends while busy (429) or loading (503): a probe is sent again after them.
_TRANSIENT = (429, 503)


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
    reported_model: str | None = None  # the model id the probe's replies reported (None: none answered)
    server: ServerInfo = field(default_factory=ServerInfo)
    prompts: list[PromptFit] = field(default_factory=list)  # each judge's prompt for a long problem
    prompt_rate: float | None = None  # prompt tokens the server reads a second
    prompt_rate_from: str = "not measured"  # the server's timings, or the time to first token

    @property
    def identity(self) -> str | None:
        """The reported model as a panel's identity holds it: with the model file, where exposed."""
        return self.server.reported(self.reported_model)

    @property
    def misfits(self) -> list[str]:
        """Why judge calls will fail for want of context (empty: none will, as far as is known)."""
        return [why for fit in self.prompts if (why := fit.misfit())]

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
            "context_per_slot": self.server.context,
            "reported_model": self.reported_model,
            "listed_model": self.server.model_id,
            "model_file": self.server.model_file.as_dict() if self.server.model_file else None,
            "identity": self.identity,
            "prompt_rate_tokens_per_s": None if self.prompt_rate is None else round(self.prompt_rate, 1),
            "prompt_rate_from": self.prompt_rate_from,
            "judge_prompts": [fit.as_dict() for fit in self.prompts],
            "fits": not self.misfits,
            "problems": self.misfits,
        }


async def probe(spec: ModelSpec, chat: BaseChatModel) -> Capabilities:
    """Probe ``chat`` (built for ``spec``) once per capability, and predict whether a run fits."""
    found = Capabilities()
    chat = once(chat)
    found.server = await server_info(spec, chat)
    found.slots = found.server.slots
    found.json_schema = await _structured(chat, "json_schema", spec, found)
    found.tools = await _structured(chat, "tool_calling", spec, found)
    await _streaming(chat, spec, found)
    working = {"json_schema": found.json_schema, "tool_calling": found.tools, "prompt": "supported"}
    found.mode = next(m for m in MODES if working[m] == "supported")
    if found.reachable:
        found.prompts = await judge_fits(spec, chat, found.mode, found.server.context)
        await _read_rate(chat, spec, found)
    return found


def once(chat: BaseChatModel) -> BaseChatModel:
    """``chat`` with the SDK's own retries off: :func:`_sent` asks again only what may succeed."""
    root = getattr(chat, "root_async_client", None)
    if root is None:
        return chat
    single = root.with_options(max_retries=0)
    update = {"max_retries": 0, "root_async_client": single, "async_client": single.chat.completions}
    return chat.model_copy(update=update)


async def _sent(spec: ModelSpec, send: Callable[[], Awaitable[R]]) -> R:
    """``send()``, asked again up to ``max_retries`` times only while the server is busy or loading
    (429, 503) or refuses the connection; any other HTTP error or a timeout is the answer."""
    for attempt in range(spec.max_retries + 1):
        try:
            return await send()
        except openai.APIStatusError as exc:
            if exc.status_code not in _TRANSIENT or attempt == spec.max_retries:
                raise
        except openai.APITimeoutError:
            raise
        except openai.APIConnectionError:
            if attempt == spec.max_retries:
                raise
        await asyncio.sleep(min(0.5 * 2**attempt, 5.0))
    raise AssertionError("unreachable")


async def _read_rate(chat: BaseChatModel, spec: ModelSpec, found: Capabilities) -> None:
    """Read the longest judge prompt that fits (one token of reply): the server's timings, or the
    time to its first token, give the prompt rate the run's first-token bound uses. llama-server is
    asked not to reuse a cached prefix (``cache_prompt``), so a second check reads it all again."""
    fitting = [fit for fit in found.prompts if fit.fits is not False]
    if fitting:
        judge = max(fitting, key=lambda fit: fit.tokens).judge
        bound = bind(chat, judge_schema(judge), found.mode)
        if found.server.slots is not None:  # a llama.cpp server: its extras beside the JSON mode's own
            extra = getattr(bound, "kwargs", {}).get("extra_body") or {}
            bound = bound.bind(extra_body=extra | {"cache_prompt": False})
        bound = bound.bind(max_tokens=1)
        try:
            with capturing(None):
                chunks = await _sent(spec, lambda: _chunks(bound, judge_prompt(judge, found.mode)))
            for chunk in chunks:
                found.usage += _spent(spec, getattr(chunk, "usage_metadata", None))
        except openai.OpenAIError:
            pass  # the rate stays as known; the probes above said what failed
    rate = prompt_rate(spec)
    found.prompt_rate = rate.tokens_per_s
    if rate.tokens_per_s is not None:
        found.prompt_rate_from = "the server's timings" if rate.reported else "the time to first token"
    elif not fitting:
        found.prompt_rate_from = "not measured: no judge prompt fits a slot"


async def _structured(chat: BaseChatModel, mode: Mode, spec: ModelSpec, found: Capabilities) -> str:
    bound = bind(chat, Sum, mode).bind(max_tokens=spec.max_tokens.probe)
    try:
        with capturing(None) as observed:
            reply = await _sent(spec, lambda: bound.ainvoke(QUESTION))
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
            chunks = await _sent(spec, lambda: _chunks(bounded))
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


async def _chunks(bounded: Any, messages: Any = None) -> list[Any]:
    return [chunk async for chunk in bounded.astream(QUESTION if messages is None else messages)]


def _spent(spec: ModelSpec, meta: Any) -> Usage:
    """One reply's (or stream chunk's) reported tokens, priced as a run's calls are."""
    if not meta:
        return Usage()
    tokens_in, tokens_out = int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))
    cost = spec.price.cost(tokens_in, tokens_out) if spec.price else None
    return Usage(input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost, calls=1)


def _note(found: Capabilities, observed: Observed) -> None:
    if observed.model is not None:
        found.reported_model = observed.model
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
