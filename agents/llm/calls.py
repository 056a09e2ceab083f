"""What an LLM call cost (:class:`Usage`) and why one produced nothing usable (:class:`CallFailure`).

The transport's own types: the judges' schemas (``agents.schemas``) carry them in their results.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Usage(BaseModel):
    """Token usage, latency and cost of the LLM calls behind one result."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = Field(default=0, description="Prompt tokens billed")
    cached_input_tokens: int = Field(
        default=0,
        description="Of the prompt tokens, those the server served from its prompt cache (where it says)",
    )
    output_tokens: int = Field(default=0, description="Completion tokens billed")
    latency_s: float = Field(default=0.0, description="Seconds spent in the calls, retries included")
    cost_usd: float | None = Field(
        default=None,
        description="Cost in US dollars from the configured prices; null when none are configured",
    )
    calls: int = Field(default=0, description="LLM calls made")
    retries: int = Field(default=0, description="HTTP attempts beyond one per call (429, 5xx, timeouts)")
    failed_attempts: int = Field(
        default=0,
        description="HTTP attempts that brought back no reply (an HTTP error, a timeout, a dropped "
        "connection); their prompt tokens are part of input_tokens",
        examples=[2],
    )
    failed_input_tokens: int = Field(
        default=0,
        description="Of input_tokens, those sent by failed attempts (reported in the failed response, "
        "else estimated)",
        examples=[1384],
    )
    failed_cached_input_tokens: int = Field(
        default=0,
        description="Of cached_input_tokens, those of failed attempts",
        examples=[0],
    )
    estimated_input_tokens: int = Field(
        default=0,
        description="Of input_tokens, those estimated from the prompt's length because the server "
        "reported none (a timeout, a dropped connection, an error body without usage)",
        examples=[713],
    )

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            latency_s=self.latency_s + other.latency_s,
            cost_usd=cost,
            calls=self.calls + other.calls,
            retries=self.retries + other.retries,
            failed_attempts=self.failed_attempts + other.failed_attempts,
            failed_input_tokens=self.failed_input_tokens + other.failed_input_tokens,
            failed_cached_input_tokens=self.failed_cached_input_tokens + other.failed_cached_input_tokens,
            estimated_input_tokens=self.estimated_input_tokens + other.estimated_input_tokens,
        )


class CallFailure(BaseModel):
    """Why an LLM call produced nothing usable: which endpoint, what went wrong, in a sentence.

    ``kind`` separates an endpoint that did not answer (``endpoint``), a reply that never fit the
    schema (``malformed``), anything the client stack raised (``client``), and a failure outside
    any call (``internal``: a configuration or a bug).
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["endpoint", "malformed", "client", "internal"] = Field(
        description="endpoint (no answer), malformed (replies never fit the schema), client (raised by the "
        "client stack) or internal"
    )
    model: str = Field(description="The registry name of the model that was called")
    host: str | None = Field(default=None, description="The endpoint's host[:port]; None for the default")
    status: int | None = Field(default=None, description="The HTTP status, when the endpoint answered one")
    exception: str = Field(description="The exception class (or 'ValidationError' for malformed output)")
    message: str = Field(max_length=500, description="What went wrong, in the library's words")

    @classmethod
    def internal(cls, model: str, exc: BaseException) -> CallFailure:
        """The cause of a failure before or outside any LLM call (a configuration, a bug)."""
        return cls(
            kind="internal",
            model=model,
            exception=type(exc).__name__,
            message=(str(exc) or type(exc).__name__)[:500],
        )

    def summary(self) -> str:
        """One line: ``model @ host: HTTP 503 APIStatusError: message``."""
        where = f"{self.model} @ {self.host}" if self.host else self.model
        status = f"HTTP {self.status} " if self.status else ""
        return f"{where}: {status}{self.exception}: {self.message}"
