"""`thinkloop models check`: probe an endpoint, and print what it supports and whether a run fits.

The report is one dict (:func:`check_report`): ``--json`` prints it, and the text is rendered from
it line by line, so the two always say the same.
"""

from __future__ import annotations

from typing import Any

from agents.llm.client import endpoint_host
from agents.llm.models import ModelSpec, prompt_rate, timeout_bounds
from agents.probe import Capabilities

_HOW = {
    "json_schema": "a strict JSON schema in response_format",
    "tool_calling": "a tool call (the server does not honour response_format)",
    "prompt": "the schema written into the prompt (the server honours neither response_format nor tools)",
}


def check_report(spec: ModelSpec, found: Capabilities) -> dict[str, Any]:
    """Everything the check found, and every bound a run of ``spec`` will be held to."""
    return {
        "name": spec.name,
        "model": spec.model,
        "endpoint": endpoint_host(spec.base_url),
        "reachable": found.reachable,
        **found.as_dict(),
        "max_concurrency": _concurrency(spec, found),
        "max_tokens": spec.max_tokens.model_dump(),
        "timeouts": _timeouts(spec, found),
    }


def _concurrency(spec: ModelSpec, found: Capabilities) -> int:
    """The calls a run sends at once: the configured figure, else at most the server's slots."""
    if found.slots is None or spec.concurrency_set:
        return spec.max_concurrency
    return min(found.slots, spec.max_concurrency)


def _timeouts(spec: ModelSpec, found: Capabilities) -> dict[str, Any]:
    """Every time bound, in seconds, with the first-token bound the longest judge prompt gets."""
    bounds = timeout_bounds(spec)
    longest = max((fit.tokens for fit in found.prompts), default=None)
    first = None if longest is None else bounds.first_token_s(longest, prompt_rate(spec))
    return {
        "timeout_s": spec.timeout_s,
        "connect_timeout_s": spec.connect_timeout_s or spec.timeout_s,
        "queue_timeout_s": bounds.floor_s,
        "first_token_longest_judge_prompt_s": None if first is None else round(first, 1),
        "token_gap_timeout_s": bounds.gap_s,
        "total_timeout_s": bounds.total_s,
    }


def render_check(report: dict[str, Any]) -> str:
    """The check's report (:func:`check_report`) for a person."""
    lines = [
        f"{report['name']}: {report['model']} @ {report['endpoint']}",
        f"  json_schema      {report['json_schema']}",
        f"  tools            {report['tools']}",
        f"  streaming        {report['streaming']}",
        f"  usage in stream  {report['usage_in_stream']}",
        f"  reasoning        {report['reasoning']}",
        f"  server slots     {_slots(report)}",
        f"  context per slot {_tokens(report['context_per_slot'], 'not reported')}",
        f"  reported model   {report['reported_model'] or 'none (no reply named one)'}",
        f"  listed model     {report['listed_model'] or 'not listed (GET /v1/models)'}",
        f"  model file       {_file(report['model_file'])}",
        f"  panel identity   {report['identity'] or 'none'} (the reported model a panel's identity holds)",
        f"  prompt rate      {_rate(report)}",
        *_prompts(report["judge_prompts"]),
        "  max_tokens       " + ", ".join(f"{kind} {bound}" for kind, bound in report["max_tokens"].items()),
        f"  timeouts         {_timeouts_line(report['timeouts'])}",
    ]
    lines += [f"  fixed on the wire: {fix}" for fix in report["fixes"]]
    if not report["reachable"]:
        lines.append("The endpoint did not answer: check base_url, the network and the key.")
        return "\n".join(lines)
    lines.append(f"thinkloop will ask for JSON with {_HOW[report['mode']]}.")
    if report["reasoning"] != "none seen":
        lines.append(
            f"A reasoning model's thinking is read from the {report['reasoning']} "
            "and kept as its think-aloud."
        )
    lines += [f"FAILS: {problem}" for problem in report["problems"]]
    if report["problems"]:
        lines.append(
            "Such judge calls fail: a prompt longer than a slot is refused (llama-server: HTTP 400), "
            "and a reply that runs out of room is cut off (finish_reason length)."
        )
    return "\n".join(lines)


def _slots(report: dict[str, Any]) -> str:
    """The server's slot count and the concurrency thinkloop will use with it."""
    slots, used = report["slots"], report["max_concurrency"]
    if slots is None:
        return f"not reported (no GET /props); at most {used} calls at once"
    queued = " (calls beyond the slots wait in the server's queue)" if used > slots else ""
    return f"{slots} (GET /props); at most {used} calls at once{queued}"


def _tokens(value: int | None, missing: str) -> str:
    return missing if value is None else f"{value:,} tokens"


def _file(found: dict[str, Any] | None) -> str:
    if found is None:
        return "not exposed"
    parts = [found["name"] or "name not exposed"]
    if found["size_bytes"] is not None:
        parts.append(f"{found['size_bytes']:,} bytes")
    if found["parameters"] is not None:
        parts.append(f"{found['parameters']:,} parameters")
    if found["context_train"] is not None:
        parts.append(f"trained with a context of {found['context_train']:,} tokens")
    return ", ".join(parts)


def _rate(report: dict[str, Any]) -> str:
    rate = report["prompt_rate_tokens_per_s"]
    source = report["prompt_rate_from"]
    return source if rate is None else f"{rate:g} prompt tokens/s ({source})"


def _prompts(fits: list[dict[str, Any]]) -> list[str]:
    """One line per judge: its prompt for a long problem, its reply bound, and whether both fit."""
    if not fits:
        return ["  judge prompts    not counted (the endpoint did not answer)"]
    lines = [f"  judge prompts    for a long problem, counted by {fits[0]['counted']}:"]
    for fit in fits:
        room = fit["prompt_tokens"] + fit["max_tokens"]
        verdict = {True: "fits", False: "DOES NOT FIT", None: "context unknown"}[fit["fits"]]
        limit = "" if fit["context"] is None else f" of {fit['context']:,}"
        lines.append(
            f"    {fit['judge']:<11}{fit['prompt_tokens']:>6,} + max_tokens {fit['max_tokens']:,} = "
            f"{room:,}{limit}: {verdict}"
        )
    return lines


def _timeouts_line(bounds: dict[str, Any]) -> str:
    first = bounds["first_token_longest_judge_prompt_s"]
    longest = "" if first is None else f" ({first:g} s for the longest judge prompt)"
    total = bounds["total_timeout_s"]
    return (
        f"connect {bounds['connect_timeout_s']:g} s, first token at least {bounds['queue_timeout_s']:g} s"
        f"{longest}, token gap {bounds['token_gap_timeout_s']:g} s, "
        f"total {'unbounded' if total is None else f'{total:g} s'}, other requests {bounds['timeout_s']:g} s"
    )
