"""Time to first token of a judge's prompt for a long problem on a llama-server, and the bound.

    uv run --frozen python bench/first_token.py http://127.0.0.1:8080 [--judge understand]

Sends the judge's real request for the 535-word problem `models check` uses (`agents/fit.py`),
streamed with 8 tokens of reply and llama.cpp's `cache_prompt` off, and prints: when the headers
came, when the first token came, the server's own `timings` (prompt tokens read in how many ms), and
the first-token bound thinkloop gives that prompt at that rate with the default `queue_timeout_s`.
"""

from __future__ import annotations

import argparse
import json
import time

import httpx

from agents.fit import request_body
from agents.llm.models import ModelSpec, timeout_bounds
from agents.llm.timeouts import CHARS_PER_TOKEN, PromptRate


def main() -> None:
    """Measure one call and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("url", help="the server's root, e.g. http://127.0.0.1:8080")
    parser.add_argument("--judge", default="understand")
    args = parser.parse_args()
    body = request_body(args.judge, "json_schema") | {
        "model": "any",
        "max_tokens": 8,
        "stream": True,
        "cache_prompt": False,
    }
    chars = sum(len(json.dumps(m["content"])) for m in body["messages"])
    start = time.monotonic()
    headers_s = first_s = None
    timings: dict[str, float] = {}
    with httpx.stream("POST", f"{args.url}/v1/chat/completions", json=body, timeout=None) as response:
        headers_s = time.monotonic() - start
        for line in response.iter_lines():
            if not line.startswith("data: {"):
                continue
            data = json.loads(line[6:])
            delta = (data.get("choices") or [{}])[0].get("delta") or {}
            if first_s is None and delta.get("content"):
                first_s = time.monotonic() - start
            timings = data.get("timings") or timings
    rate = PromptRate()
    rate.from_timings(int(timings["prompt_n"]), float(timings["prompt_ms"]))
    bounds = timeout_bounds(ModelSpec(name="x", model="x"))
    estimated = int(chars / CHARS_PER_TOKEN)
    print(f"judge {args.judge}: headers after {headers_s:.2f} s, first token after {first_s:.1f} s")
    print(f"server timings: {timings['prompt_n']:.0f} prompt tokens in {timings['prompt_ms'] / 1000:.1f} s")
    print(f"prompt rate {rate.tokens_per_s:.1f} tokens/s; thinkloop's estimate: {estimated} tokens")
    print(
        f"first-token bound: {bounds.first_token_s(estimated, rate):.0f} s "
        f"(3 x {estimated} / {rate.tokens_per_s:.1f}, floor queue_timeout_s {bounds.floor_s:g} s)"
    )


if __name__ == "__main__":
    main()
