"""Prompt tokens a real server evaluates per judged round: the level-first layout against the shared prefix.

Each layout gets a fresh llama-server (llama.cpp's own, Gemma 3 270M from PyPI; the real-model
tier's, ``tests/realmodel/server.py``) with two slots, and judges the same problems one round each
the way the loop does: the seven judges and the solver at once, problem after problem. Per layout it
prints the prompt tokens sent, the tokens the server served from its prompt cache (what each reply
reports: ``prompt_tokens_details.cached_tokens``), the tokens it evaluated (sent minus cached, checked
against the server's own ``llamacpp:prompt_tokens_total``), and the cost per judged problem at
named public price lists, with and without their cached-input prices. Replies are bounded to a few
tokens and never re-asked: what is measured is the prompt, which the reply's length does not change.

    uv run --frozen python bench/prompt_prefix.py                 # 6 problems, both layouts
    uv run --frozen python bench/prompt_prefix.py --problems 12 --json

Needs the real-model tier's server and model (built and installed on first use: about 11 minutes
for the server's build, see docs/development.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.judges import JudgeRequest, Layout, LLMJudge
from agents.llm import LLMClient
from agents.models import MaxTokens, ModelSpec, Price, build_chat_model
from agents.schemas import JUDGES, Problem, Usage
from agents.solver import LLMSolver
from tests.realmodel.server import (
    MODEL_ID,
    ServerOptions,
    cache_dir,
    gemma_gguf,
    llama_server_binary,
    start_server,
)

DATASET = Path(__file__).resolve().parents[1] / "app" / "samples" / "datasets" / "flawed-problems.jsonl"
LAYOUTS: tuple[Layout, ...] = ("level_first", "shared_prefix")


# OpenAI's API pricing page, standard tier, per 1M tokens (input / cached input / output), priced by
# the models file's own ``Price`` (what every call's ``cost_usd`` is computed with).
PRICES = {
    "OpenAI gpt-4o-mini": Price(input_per_mtok=0.15, cached_input_per_mtok=0.075, output_per_mtok=0.60),
    "OpenAI gpt-4.1-mini": Price(input_per_mtok=0.40, cached_input_per_mtok=0.10, output_per_mtok=1.60),
}


def problems(count: int) -> list[Problem]:
    """The first ``count`` problems of the shipped dataset."""
    lines = DATASET.read_text("utf-8").splitlines()[:count]
    return [Problem(question=row["question"], solution=row["solution"]) for row in map(json.loads, lines)]


def evaluated_total(url: str) -> int:
    """The prompt tokens the server has evaluated since it started (its own Prometheus counter)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as response:
        text = response.read().decode()
    found = re.search(r"^llamacpp:prompt_tokens_total (\d+(?:\.\d+)?)$", text, re.M)
    if found is None:
        raise RuntimeError("the server's /metrics has no llamacpp:prompt_tokens_total")
    return int(float(found.group(1)))


async def judge_rounds(base_url: str, layout: Layout, items: list[Problem], tokens: int) -> dict[str, Any]:
    """One judged round per problem (seven judges and the solver at once); the usage of each."""
    spec = ModelSpec(
        name="gemma",
        model=MODEL_ID,
        base_url=base_url,
        max_tokens=MaxTokens(judge=tokens, solver=tokens),
        parse_retries=0,
        max_concurrency=8,
        timeout_s=900,
    )
    client = LLMClient(spec, build_chat_model(spec, {}))
    judge, solver = LLMJudge(client, layout=layout), LLMSolver(client)
    total = Usage()
    try:
        for problem in items:
            verdicts = [judge.assess(JudgeRequest(name, 1, problem, problem)) for name in JUDGES]
            outcomes, solved = await asyncio.gather(asyncio.gather(*verdicts), solver.solve(problem, 1))
            for usage in [solved.usage, *(outcome.usage for outcome in outcomes)]:
                total += usage
    finally:
        await client.aclose()
    return {"calls": total.calls, "sent": total.input_tokens, "cached": total.cached_input_tokens,
            "output": total.output_tokens}  # fmt: skip


def measure(
    layout: Layout, items: list[Problem], tokens: int, threads: int, extra: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A fresh server (an empty prompt cache) for one layout."""
    options = ServerOptions(threads=threads, extra=extra)
    with start_server(llama_server_binary(), gemma_gguf(), cache_dir() / "logs", options) as server:
        before = evaluated_total(server.url)
        usage = asyncio.run(judge_rounds(server.base_url, layout, items, tokens))
        usage["server_evaluated"] = evaluated_total(server.url) - before
    usage["evaluated"] = usage["sent"] - usage["cached"]
    usage["rounds"] = len(items)
    return usage


def report(results: dict[Layout, dict[str, Any]]) -> str:
    old, new = results["level_first"], results["shared_prefix"]
    rounds = old["rounds"]
    lines = [
        f"{rounds} judged rounds (seven judges and the solver each) on {MODEL_ID}, llama-server with 2 slots",
        "",
        "| layout | calls | prompt tokens sent | served from the cache | evaluated | evaluated per round "
        "| the server's own count |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for layout, r in results.items():
        lines.append(
            f"| {layout} | {r['calls']} | {r['sent']:,} | {r['cached']:,} | {r['evaluated']:,} "
            f"| {r['evaluated'] / rounds:,.0f} | {r['server_evaluated']:,} |"
        )
    lines += [
        "",
        f"evaluated per round, shared_prefix / level_first: **{new['evaluated'] / old['evaluated']:.2f}**",
    ]
    lines += [
        "",
        "| price list (USD per 1M: input / cached / output) | level_first | shared_prefix, no discount "
        "| shared_prefix, cached-input price | ratio |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, price in PRICES.items():
        before = price.cost(old["sent"], old["output"], old["cached"]) / rounds
        flat = price.cost(new["sent"], new["output"]) / rounds  # as if nothing were cached
        after = price.cost(new["sent"], new["output"], new["cached"]) / rounds
        lines.append(
            f"| {name} ({price.input_per_mtok} / {price.cached_input_per_mtok} / {price.output_per_mtok}) "
            f"| ${before:.6f} "
            f"| ${flat:.6f} | ${after:.6f} | {after / before:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=6, help="problems of the shipped dataset (default 6)")
    parser.add_argument("--reply-tokens", type=int, default=16, help="the bound on each reply (default 16)")
    parser.add_argument("--threads", type=int, default=ServerOptions.threads, help="llama-server's threads")
    parser.add_argument("--server-arg", action="append", default=[], help="one more llama-server argument")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    items, extra = problems(args.problems), tuple(args.server_arg)
    results = {layout: measure(layout, items, args.reply_tokens, args.threads, extra) for layout in LAYOUTS}
    print(json.dumps(results, indent=2) if args.json else report(results))


if __name__ == "__main__":
    main()
