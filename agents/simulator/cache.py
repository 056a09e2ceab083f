"""The simulator's OpenAI-style prompt cache, as an option of its configuration.

With it, every reply reports ``usage.prompt_tokens_details.cached_tokens`` as OpenAI's cache does:
the longest prefix the prompt shares with a prompt answered before, counted only from 1,024 tokens
on and in steps of 128 (four characters a token; ``SimulatorState.cached_tokens``). Without it the
field is never sent, as by a server with no cache.
"""

from __future__ import annotations

from agents.simulator.rules import SimConfig

# OpenAI caches a prompt's prefix only from this many tokens on (its prompt-caching guide).
OPENAI_MIN_TOKENS = 1024


def with_prompt_cache(config: SimConfig, min_tokens: int = OPENAI_MIN_TOKENS) -> SimConfig:
    """``config`` with a server that reports OpenAI's prompt cache, counted from ``min_tokens``."""
    overrides = config.profile_overrides | {"prompt_cache_min_tokens": min_tokens}
    return config.model_copy(update={"profile_overrides": overrides})
