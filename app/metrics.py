"""Prometheus metrics, one registry per app instance."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from agents.llm.calls import Usage


class ServiceMetrics:
    """Runs by outcome, rounds to pass, quality, LLM latency and tokens, runs in flight."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.runs = Counter("thinkloop_runs", "Finished runs by outcome", ["outcome"], registry=self.registry)
        self.rounds_to_pass = Histogram(
            "thinkloop_rounds_to_pass",
            "Rounds a passing run needed",
            buckets=(1, 2, 3, 4, 5, 7, 10),
            registry=self.registry,
        )
        self.quality = Histogram(
            "thinkloop_quality_score",
            "Final AvgQualityScore (0-1)",
            buckets=(0.1, 0.25, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0),
            registry=self.registry,
        )
        self.llm_latency = Histogram(
            "thinkloop_llm_latency_seconds", "LLM call latency", ["model", "role"], registry=self.registry
        )
        self.llm_tokens = Counter(
            "thinkloop_llm_tokens", "LLM tokens", ["model", "role", "direction"], registry=self.registry
        )
        # A part of the input tokens above, not more of them: those the server reported serving from
        # its prompt cache (``Usage.cached_input_tokens``); 0 for a server that reports none.
        self.llm_cached_input_tokens = Counter(
            "thinkloop_llm_cached_input_tokens",
            "Of the LLM input tokens, those the server served from its prompt cache",
            ["model", "role"],
            registry=self.registry,
        )
        # Attempts that brought back no reply (an HTTP error, a timeout, a dropped connection), and
        # of the input tokens above, those they sent: ``source`` says whether the server reported
        # them in its failed response or they were estimated from the prompt's length.
        self.llm_failed_attempts = Counter(
            "thinkloop_llm_failed_attempts",
            "LLM HTTP attempts that brought back no reply",
            ["model", "role"],
            registry=self.registry,
        )
        self.llm_failed_input_tokens = Counter(
            "thinkloop_llm_failed_input_tokens",
            "Of the LLM input tokens, those of failed attempts, reported by the server or estimated",
            ["model", "role", "source"],
            registry=self.registry,
        )
        self.in_flight = Gauge("thinkloop_runs_in_flight", "Runs executing now", registry=self.registry)

    def observe_call(self, model: str, role: str, usage: Usage) -> None:
        """Record one judgement's or revision's LLM usage."""
        if usage.calls:
            self.llm_latency.labels(model, role).observe(usage.latency_s)
        self.llm_tokens.labels(model, role, "input").inc(usage.input_tokens)
        self.llm_tokens.labels(model, role, "output").inc(usage.output_tokens)
        self.llm_cached_input_tokens.labels(model, role).inc(usage.cached_input_tokens)
        if usage.failed_attempts:
            estimated = min(usage.estimated_input_tokens, usage.failed_input_tokens)
            self.llm_failed_attempts.labels(model, role).inc(usage.failed_attempts)
            self.llm_failed_input_tokens.labels(model, role, "reported").inc(
                usage.failed_input_tokens - estimated
            )
            self.llm_failed_input_tokens.labels(model, role, "estimated").inc(estimated)

    def observe_run(self, outcome: str, rounds_to_pass: int | None, quality: float | None) -> None:
        """Record a finished run."""
        self.runs.labels(outcome).inc()
        if rounds_to_pass is not None:
            self.rounds_to_pass.observe(rounds_to_pass)
        if quality is not None:
            self.quality.observe(quality)
