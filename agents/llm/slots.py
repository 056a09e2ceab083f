"""How many requests a server works on at once, where it says so (llama.cpp's ``GET /props``).

llama.cpp's server answers ``--parallel`` requests at a time and queues the rest; its ``/props``
route (at the server's root, beside ``/v1``) reports that figure as ``total_slots``. Sending more
calls than it has slots gains nothing and leaves requests waiting in its queue, so a model whose
``max_concurrency`` is not configured sends at most that many. OpenAI, vLLM and most other servers
have no such route: then nothing is learned and nothing fails.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agents.llm.models import ModelSpec

PROPS_TIMEOUT_S = 10.0


def props_url(spec: ModelSpec) -> str | None:
    """``/props`` on the configured server (None where there is no such server to ask: the
    OpenAI default endpoint and Azure deployments)."""
    if spec.base_url is None or spec.provider != "openai":
        return None
    parts = urlsplit(spec.base_url)
    root = parts.path.rstrip("/").removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, f"{root}/props", "", ""))


async def server_slots(spec: ModelSpec, chat: Any) -> int | None:
    """``total_slots`` from the server's ``/props``; None when it has no such route or figure.

    Asked through the chat model's own OpenAI client (its key, its connections), once, with no retry.
    """
    url = props_url(spec)
    client = getattr(chat, "root_async_client", None)
    if url is None or client is None:
        return None
    options: dict[str, Any] = {"max_retries": 0, "timeout": min(spec.timeout_s, PROPS_TIMEOUT_S)}
    try:
        props = await client.get(url, cast_to=object, options=options)
    except Exception:  # a 404 (most servers), a refusal or non-JSON: the server does not say, silently
        return None
    slots = props.get("total_slots") if isinstance(props, dict) else None
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None
