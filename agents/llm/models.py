"""The model registry: named OpenAI-compatible endpoints, and the factory that builds clients."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

if TYPE_CHECKING:  # the client stack loads only when a client is built (`thinkloop models` needs none)
    from langchain_openai.chat_models.base import BaseChatOpenAI

    from agents.llm.ratelimit import LimitSpec
    from agents.llm.timeouts import Bounds, PromptRate

OFFLINE_MODEL = "rubric"


class UnknownModelError(LookupError):
    """A model name that is neither configured nor the built-in offline panel."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"unknown model {name!r}; configured: {', '.join(known)}")
        self.name = name
        self.known = known


class ModelConfigError(ValueError):
    """A model configuration file or entry that cannot be used."""


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
    cached_input_per_mtok: float | None = Field(
        default=None,
        ge=0,
        description="Prompt tokens the server served from its prompt cache; unset: the input price",
    )

    def cost(self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0) -> float:
        """The cost of one call; ``cached_input_tokens`` (of ``input_tokens``) at the cached price."""
        cached = min(cached_input_tokens, input_tokens)
        cached_price = self.cached_input_per_mtok
        if cached_price is None:
            cached_price = self.input_per_mtok
        fresh = (input_tokens - cached) * self.input_per_mtok
        return (fresh + cached * cached_price + output_tokens * self.output_per_mtok) / 1e6


CallKind = Literal["judge", "solver", "reviser", "probe"]


class MaxTokens(BaseModel):
    """The most tokens a reply of each kind of call may have (``max_completion_tokens`` on the wire).

    A bound is what stops a model that rambles (a small base model writes until the context is
    full). The defaults fit each schema's own limits with room to spare: a Bloom verdict at its
    field limits is about 600 tokens and a holistic one with five keys and suggestions usually 400–900;
    the solver's brief working and answer fit in 500; a revision (think-aloud, question, solution)
    of a usual problem in 1,000–1,500; the probe's ``{"answer": 5}`` in a few. A reasoning model's
    hidden thinking counts against the bound on most servers: raise it for such a model.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: int = Field(default=1000, ge=16, le=65_536, description="A judge's verdict")
    solver: int = Field(default=500, ge=16, le=65_536, description="The solver's working and answer")
    reviser: int = Field(default=2000, ge=16, le=65_536, description="A revision with its think-aloud")
    probe: int = Field(default=64, ge=16, le=65_536, description="Each `models check` request")

    def of(self, kind: CallKind) -> int:
        """The bound for one kind of call."""
        return int(getattr(self, kind))


class ModelSpec(BaseModel):
    """One named endpoint: any server that speaks the OpenAI chat-completions protocol."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    model: str = Field(description="The model id the endpoint expects, e.g. gpt-4o or qwen2.5:7b")
    base_url: str | None = Field(default=None, description="None means api.openai.com")
    api_key_env: str | None = Field(default=None, description="Environment variable with the key")
    max_concurrency: int = Field(
        default=8,
        ge=1,
        le=1024,
        description="Calls in flight, all workers. Left unset, a server that tells its slots (llama.cpp's "
        "GET /props total_slots) gets at most that many; any other server 8",
    )
    requests_per_minute: int | None = Field(default=None, ge=1, description="Shared by all workers")
    tokens_per_minute: int | None = Field(default=None, ge=1, description="Shared by all workers")
    expected_output_tokens: int = Field(default=400, ge=1, description="Reply size assumed for admission")
    timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="Seconds for any request that is not a generation (/props, /v1/models), and the "
        "default of connect_timeout_s and token_gap_timeout_s",
    )
    queue_timeout_s: float = Field(
        default=600.0,
        gt=0,
        description="The least time a generation may wait for its first token (not its headers): "
        "queued behind busy slots, then reading the prompt. A long prompt gets more: its estimated "
        "tokens over the server's measured prompt rate, three times over",
    )
    connect_timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds to open a connection (None: timeout_s)"
    )
    token_gap_timeout_s: float | None = Field(
        default=None,
        gt=0,
        description="Seconds a reply that has started may go without a piece (None: timeout_s); "
        "the only bound on a started reply besides total_timeout_s",
    )
    total_timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds a whole call may take, queueing included (None: no bound)"
    )
    stream: bool = Field(
        default=True,
        description="Stream every reply, so a call is timed from its first byte; false asks for whole "
        "replies (then the whole reply is the first token, and the first-token bound covers it all)",
    )
    max_tokens: MaxTokens = Field(
        default_factory=MaxTokens, description="The most tokens a reply may have, per kind of call"
    )
    max_retries: int = Field(default=3, ge=0, le=10)
    temperature: float = Field(default=0.0, ge=0, le=2)
    seed: int | None = None
    structured_output: Literal["json_schema", "tool_calling", "prompt"] = Field(
        default="json_schema",
        description="The first way to ask for JSON; a server that refuses or ignores it moves the client "
        "on to the next (json_schema → tool_calling → prompt) for the rest of the process",
    )
    parse_retries: int = Field(default=2, ge=0, le=5)
    price: Price | None = None
    reasoning: Literal["auto", "field", "tag", "none"] = Field(
        default="auto",
        description="Where a reasoning model's thinking arrives: a field (reasoning_content, reasoning), "
        "a tag in the content, either (auto), or nowhere (none: the content is left as it is)",
    )
    reasoning_tag: str = Field(default="think", pattern=r"^[A-Za-z][\w-]{0,30}$")
    provider: Literal["openai", "azure"] = Field(
        default="openai",
        description="azure: base_url is the resource endpoint, requests go to the deployment URL with "
        "api-version and an api-key header",
    )
    deployment: str | None = Field(default=None, description="Azure deployment name (default: model)")
    api_version: str | None = Field(default=None, description="Azure api-version, e.g. 2024-10-21")

    @property
    def concurrency_set(self) -> bool:
        """Whether ``max_concurrency`` was configured (else a server's own slot count may lower it)."""
        return "max_concurrency" in self.model_fields_set


class ModelRegistry:
    """Named model specs; ``rubric`` is always available and needs no endpoint."""

    def __init__(self, specs: Mapping[str, ModelSpec] | None = None) -> None:
        self._specs = dict(specs or {})
        if OFFLINE_MODEL in self._specs:
            raise ModelConfigError(f"{OFFLINE_MODEL!r} is reserved for the offline panel")

    @classmethod
    def from_sources(
        cls, path: Path | None = None, extra: Mapping[str, Mapping[str, object]] | None = None
    ) -> ModelRegistry:
        """Specs from a TOML file (``[models.<name>]`` tables), then from ``extra`` (environment)."""
        raw: dict[str, Mapping[str, object]] = {}
        if path is not None:
            raw.update(_read_toml(path))
        raw.update(extra or {})
        try:
            specs = {name: ModelSpec(name=name, **dict(entry)) for name, entry in raw.items()}
        except (ValidationError, TypeError) as exc:
            raise ModelConfigError(f"invalid model configuration: {exc}") from exc
        return cls(specs)

    def names(self) -> list[str]:
        """Every usable model name, the offline panel first."""
        return [OFFLINE_MODEL, *sorted(self._specs)]

    def get(self, name: str) -> ModelSpec | None:
        """The spec for ``name``; None for the offline panel; UnknownModelError otherwise."""
        if name == OFFLINE_MODEL:
            return None
        try:
            return self._specs[name]
        except KeyError:
            raise UnknownModelError(name, self.names()) from None


def _read_toml(path: Path) -> dict[str, Mapping[str, object]]:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ModelConfigError(f"cannot read model file {path}: {exc}") from exc
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise ModelConfigError(f"{path}: [models] must be a table of tables")
    return models


def limit_spec(spec: ModelSpec) -> LimitSpec:
    """The provider limits of ``spec``."""
    from agents.llm.ratelimit import LimitSpec

    return LimitSpec(spec.name, spec.max_concurrency, spec.requests_per_minute, spec.tokens_per_minute)


# The prompt rate learned per endpoint and model, kept across the clients a process builds for it.
_RATES: dict[tuple[str, str], PromptRate] = {}


def prompt_rate(spec: ModelSpec) -> PromptRate:
    """The prompt-reading rate learned so far for ``spec``'s endpoint and model."""
    from agents.llm.timeouts import PromptRate

    return _RATES.setdefault((spec.base_url or "", spec.model), PromptRate())


def timeout_bounds(spec: ModelSpec) -> Bounds:
    """The generation bounds ``spec`` configures."""
    from agents.llm.timeouts import Bounds

    gap = spec.token_gap_timeout_s or spec.timeout_s
    return Bounds(floor_s=spec.queue_timeout_s, gap_s=gap, total_s=spec.total_timeout_s)


def build_chat_model(spec: ModelSpec, env: Mapping[str, str]) -> BaseChatOpenAI:
    """A chat client for ``spec``; the API key is read from ``env[spec.api_key_env]``.

    Responses pass the normalising transport (``agents/llm/wire.py``), so servers that answer in
    OpenAI's shape only approximately still parse; requests are counted per logical call.
    """
    import openai
    from langchain_openai import AzureChatOpenAI, ChatOpenAI

    from agents.llm.attempts import AttemptAccounting, count_attempt
    from agents.llm.connections import ShardedTransport
    from agents.llm.timeouts import TokenTimeouts
    from agents.llm.wire import NormalisingTransport

    key = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) accept any key
    if spec.api_key_env is not None:
        if not env.get(spec.api_key_env):
            raise ModelConfigError(f"model {spec.name!r}: ${spec.api_key_env} is not set")
        key = env[spec.api_key_env]
    # Our own connection pools: langchain-openai's default is one process-wide pool per base URL,
    # which stays bound to the first event loop that used it. A client given a transport ignores its
    # own `limits`, and httpx's defaults (100 connections, 20 kept open) would silently cap
    # `max_concurrency` above 100 and close most connections after every round of parallel
    # judges: the provider limiter bounds the calls, and every call it lets through keeps its
    # connection for the next, in shards that keep each request's bookkeeping small.
    timeout = openai.Timeout(spec.timeout_s, connect=spec.connect_timeout_s or spec.timeout_s)
    bounds = timeout_bounds(spec)
    http_client = openai.DefaultAsyncHttpxClient(
        timeout=timeout,
        event_hooks={"request": [count_attempt]},
        # Failed attempts are accounted from what the server sent, before it is normalised.
        transport=NormalisingTransport(
            AttemptAccounting(
                TokenTimeouts(ShardedTransport(spec.max_concurrency), bounds, prompt_rate(spec))
            )
        ),
    )
    common: dict[str, Any] = {
        "http_async_client": http_client,
        "api_key": key,
        "timeout": timeout,
        "max_retries": spec.max_retries,
        "temperature": spec.temperature,
        "seed": spec.seed,
        "stream_usage": True,
        # langchain-openai's own bound between two parsed chunks (120 s by default) would also time
        # the wait for the first one, which reading a long prompt may exceed: ours are the bounds.
        "stream_chunk_timeout": None,
    }
    if spec.provider == "azure":
        if not spec.base_url or not spec.api_version:
            raise ModelConfigError(
                f"model {spec.name!r}: azure needs base_url (the resource endpoint) and api_version"
            )
        return AzureChatOpenAI(
            azure_endpoint=spec.base_url,
            azure_deployment=spec.deployment or spec.model,
            api_version=spec.api_version,
            model=spec.model,
            **common,
        )
    return ChatOpenAI(model=spec.model, base_url=spec.base_url, **common)
