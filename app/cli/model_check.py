"""`thinkloop models check`: probe an endpoint and print what it supports."""

from __future__ import annotations

from agents.llm import endpoint_host
from agents.models import ModelSpec
from agents.probe import Capabilities

_HOW = {
    "json_schema": "a strict JSON schema in response_format",
    "tool_calling": "a tool call (the server does not honour response_format)",
    "prompt": "the schema written into the prompt (the server honours neither response_format nor tools)",
}


def render_check(spec: ModelSpec, found: Capabilities) -> str:
    """The probe's findings for a person."""
    lines = [
        f"{spec.name}: {spec.model} @ {endpoint_host(spec.base_url)}"
        + (f" (Azure deployment {spec.deployment or spec.model})" if spec.provider == "azure" else ""),
        f"  json_schema      {found.json_schema}",
        f"  tools            {found.tools}",
        f"  streaming        {found.streaming}",
        f"  usage in stream  {found.usage_in_stream}",
        f"  reasoning        {found.reasoning}",
    ]
    lines.append(f"  server slots     {_slots(spec, found)}")
    lines.append(
        f"  max_tokens       judge {spec.max_tokens.judge}, solver {spec.max_tokens.solver}, "
        f"reviser {spec.max_tokens.reviser}, probe {spec.max_tokens.probe}"
    )
    lines += [f"  fixed on the wire: {fix}" for fix in found.fixes]
    if not found.reachable:
        lines.append("The endpoint did not answer: check base_url, the network and the key.")
        return "\n".join(lines)
    lines.append(f"thinkloop will ask for JSON with {_HOW[found.mode]}.")
    if found.reasoning != "none seen":
        lines.append(
            f"A reasoning model's thinking is read from the {found.reasoning} and kept as its think-aloud."
        )
    return "\n".join(lines)


def _slots(spec: ModelSpec, found: Capabilities) -> str:
    """The server's slot count and the concurrency thinkloop will use with it."""
    if found.slots is None:
        return f"not reported (no GET /props); at most {spec.max_concurrency} calls at once"
    if not spec.concurrency_set:
        used = min(found.slots, spec.max_concurrency)
        return f"{found.slots} (GET /props); at most {used} calls at once"
    over = spec.max_concurrency > found.slots
    queued = " (calls beyond the slots wait in the server's queue)" if over else ""
    return f"{found.slots} (GET /props); max_concurrency {spec.max_concurrency} as configured{queued}"
