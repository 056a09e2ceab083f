"""Prompt caches and the judges' layout: the panel's prefix against the layout before it (issue 54).

One run prints each target beside its measured figure, for the two layouts thinkloop has sent:
``panel_prefix`` (the rules and all seven levels, then the problem, then a line naming the level)
and ``shared_prefix`` (issue 42's: the rules, then the problem, then the judge's own level). Both
judge the same problems the way the loop does, one round each: the seven judges and the solver at
once, problem after problem.

- On the simulator with its OpenAI-style cache (``agents.simulator.cache``: the longest prefix seen
  before, from 1,024 tokens on, in steps of 128): the judge prompt tokens reported cached per
  judged round; target ≥ 0.6 of them from the batch's second problem on.
- On llama-server (the real-model tier's: Gemma 3 270M from PyPI, two slots, a fresh server per
  layout and cache): the prompt tokens the server evaluated for the seven judge calls per judged
  round (sent minus served from its cache, as each reply reports it), with its default RAM cache and
  with slot caches only (``--cache-ram 0``); target ≤ 0.35 × 7,861 (seven judge prompts evaluated
  with no reuse, measured before issue 42), and beside the older layout. Replies are bounded to a
  few tokens and never re-asked: the prompt is what is measured.

    uv run --frozen python bench/prompt_prefix.py                    # 6 problems, both tiers
    uv run --frozen python bench/prompt_prefix.py --simulator-only   # no llama-server
    uv run --frozen python bench/prompt_prefix.py --problems 12 --json

The llama-server part needs the real-model tier's server and model (built and installed on first
use, see docs/development.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import urllib.request
from pathlib import Path
from typing import Any

from agents.judges import JudgeRequest, Layout, LLMJudge
from agents.llm.calls import Usage
from agents.llm.client import LLMClient
from agents.llm.models import MaxTokens, ModelSpec, Price, build_chat_model
from agents.schemas import JUDGES, Problem
from agents.simulator import SimConfig, SimulatorServer
from agents.simulator.cache import with_prompt_cache
from agents.solver import LLMSolver

DATASET = Path(__file__).resolve().parents[1] / "app" / "samples" / "datasets" / "flawed-problems.jsonl"
LAYOUTS: tuple[Layout, ...] = ("panel_prefix", "shared_prefix")
# Seven judge prompts of a round evaluated with no reuse (llama-server, before issue 42).
NO_REUSE = 7861
TARGET_CACHED_SHARE = 0.6
TARGET_EVALUATED_SHARE = 0.35
# OpenAI's API pricing page, standard tier, per 1M tokens (input / cached input / output), priced by
# the models file's own ``Price``: what the judge prompts of a round cost, replies left out.
PRICES = {
    "gpt-4o-mini": Price(input_per_mtok=0.15, cached_input_per_mtok=0.075, output_per_mtok=0.60),
    "gpt-4.1-mini": Price(input_per_mtok=0.40, cached_input_per_mtok=0.10, output_per_mtok=1.60),
}
CACHES = {"default (RAM cache)": (), "slots only (--cache-ram 0)": ("--cache-ram", "0")}


def problems(count: int) -> list[Problem]:
    """The first ``count`` problems of the shipped dataset."""
    lines = DATASET.read_text("utf-8").splitlines()[:count]
    return [Problem(question=row["question"], solution=row["solution"]) for row in map(json.loads, lines)]


async def judge_rounds(spec: ModelSpec, layout: Layout, items: list[Problem]) -> list[dict[str, int]]:
    """One judged round per problem (seven judges and the solver at once); per round, the judges'
    prompt tokens sent and served from the cache, and the solver's."""
    client = LLMClient(spec, build_chat_model(spec, {}))
    judge, solver = LLMJudge(client, layout=layout), LLMSolver(client)
    rounds = []
    try:
        for problem in items:
            verdicts = [judge.assess(JudgeRequest(name, 1, problem, problem)) for name in JUDGES]
            outcomes, solved = await asyncio.gather(asyncio.gather(*verdicts), solver.solve(problem, 1))
            judged = sum((outcome.usage for outcome in outcomes), Usage())
            rounds.append(_figures(judged, solved.usage))
    finally:
        await client.aclose()
    return rounds


def _figures(judged: Usage, solved: Usage) -> dict[str, int]:
    return {"judge_sent": judged.input_tokens, "judge_cached": judged.cached_input_tokens,
            "solver_sent": solved.input_tokens, "solver_cached": solved.cached_input_tokens}  # fmt: skip


def _spec(base_url: str, model: str, tokens: int) -> ModelSpec:
    return ModelSpec(
        name="bench",
        model=model,
        base_url=base_url,
        max_tokens=MaxTokens(judge=tokens, solver=tokens),
        parse_retries=0,
        max_concurrency=8,
        timeout_s=900,
    )


def on_simulator(items: list[Problem]) -> dict[Layout, list[dict[str, int]]]:
    """Each layout on a fresh simulator with OpenAI's prompt cache."""
    results = {}
    for layout in LAYOUTS:
        server = SimulatorServer(with_prompt_cache(SimConfig()))
        with server.running():
            spec = _spec(server.base_url, "sim", 4096)
            results[layout] = asyncio.run(judge_rounds(spec, layout, items))
    return results


def on_llama_server(
    items: list[Problem], tokens: int, threads: int
) -> dict[str, dict[Layout, list[dict[str, int]]]]:
    """Each cache setting and layout on a fresh llama-server (an empty prompt cache)."""
    from agents.realmodel import (
        MODEL_ID,
        ServerOptions,
        cache_dir,
        gemma_gguf,
        llama_server_binary,
        start_server,
    )

    binary, model = llama_server_binary(), gemma_gguf()
    results: dict[str, dict[Layout, list[dict[str, int]]]] = {}
    for name, extra in CACHES.items():
        results[name] = {}
        for layout in LAYOUTS:
            options = ServerOptions(threads=threads, extra=extra)
            with start_server(binary, model, cache_dir() / "logs", options) as server:
                before = evaluated_total(server.url)
                rounds = asyncio.run(judge_rounds(_spec(server.base_url, MODEL_ID, tokens), layout, items))
                rounds[-1]["server_evaluated"] = evaluated_total(server.url) - before  # every call's
            results[name][layout] = rounds
    return results


def evaluated_total(url: str) -> int:
    """The prompt tokens the server has evaluated since it started (its own Prometheus counter)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as response:
        text = response.read().decode()
    found = re.search(r"^llamacpp:prompt_tokens_total (\d+(?:\.\d+)?)$", text, re.M)
    if found is None:
        raise RuntimeError("the server's /metrics has no llamacpp:prompt_tokens_total")
    return int(float(found.group(1)))


def _later(rounds: list[dict[str, int]], key: str) -> float:
    """Per round, from the second problem on."""
    later = rounds[1:] or rounds
    return sum(r[key] for r in later) / len(later)


def _replies(rounds: list[dict[str, int]]) -> int:
    """Every call's prompt tokens evaluated, as the replies report them."""
    return sum(r["judge_sent"] + r["solver_sent"] - r["judge_cached"] - r["solver_cached"] for r in rounds)


def _server(rounds: list[dict[str, int]]) -> str:
    counted = rounds[-1].get("server_evaluated")
    return "n/a" if counted is None else f"{counted:,}"


def _all(rounds: list[dict[str, int]], key: str) -> float:
    return sum(r[key] for r in rounds) / len(rounds)


def simulator_report(results: dict[Layout, list[dict[str, int]]]) -> list[str]:
    lines = [
        f"Simulator with OpenAI's prompt cache, {len(results[LAYOUTS[0]])} problems, one judged round each "
        "(per round, from the second problem on):",
        "",
        "| layout | judge prompt tokens | cached | share cached | target | "
        + " | ".join(f"{name}, USD" for name in PRICES)
        + " |",
        "| --- | --- | --- | --- | --- |" + " --- |" * len(PRICES),
    ]
    for layout, rounds in results.items():
        sent, cached = _later(rounds, "judge_sent"), _later(rounds, "judge_cached")
        costs = " | ".join(f"{price.cost(round(sent), 0, round(cached)):.6f}" for price in PRICES.values())
        lines.append(
            f"| {layout} | {sent:,.0f} | {cached:,.0f} | **{cached / sent:.2f}** | ≥ {TARGET_CACHED_SHARE} "
            f"| {costs} |"
        )
    return lines


def llama_report(results: dict[str, dict[Layout, list[dict[str, int]]]]) -> list[str]:
    some = next(iter(next(iter(results.values())).values()))
    lines = [
        f"llama-server (Gemma 3 270M, 2 slots), {len(some)} problems, one judged round each: judge prompt "
        "tokens evaluated per round (all rounds; from the second problem on in brackets)",
        "",
        f"| server's cache | layout | sent | evaluated | ÷ {NO_REUSE:,} (no reuse) | target "
        "| ÷ shared_prefix | solver evaluated | all calls: the replies' count / the server's |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for cache, layouts in results.items():
        old = _all(layouts["shared_prefix"], "judge_sent") - _all(layouts["shared_prefix"], "judge_cached")
        for layout, rounds in layouts.items():
            sent = _all(rounds, "judge_sent")
            evaluated = sent - _all(rounds, "judge_cached")
            later = _later(rounds, "judge_sent") - _later(rounds, "judge_cached")
            solver = _all(rounds, "solver_sent") - _all(rounds, "solver_cached")
            lines.append(
                f"| {cache} | {layout} | {sent:,.0f} | {evaluated:,.0f} ({later:,.0f}) "
                f"| **{evaluated / NO_REUSE:.2f}** ({later / NO_REUSE:.2f}) | ≤ {TARGET_EVALUATED_SHARE} "
                f"| {evaluated / old:.2f} | {solver:,.0f} "
                f"| {_replies(rounds):,} / {_server(rounds)} |"
            )
    return lines


def report(results: dict[str, Any]) -> str:
    """The tables, as Markdown."""
    lines = simulator_report(results["simulator"])
    if "llama_server" in results:
        lines += ["", *llama_report(results["llama_server"])]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=6, help="problems of the shipped dataset (default 6)")
    parser.add_argument("--reply-tokens", type=int, default=16, help="llama-server: the bound on a reply")
    parser.add_argument("--threads", type=int, default=1, help="llama-server's threads")
    parser.add_argument("--simulator-only", action="store_true", help="skip llama-server")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    items = problems(args.problems)
    results: dict[str, Any] = {"simulator": on_simulator(items)}
    if not args.simulator_only:
        results["llama_server"] = on_llama_server(items, args.reply_tokens, args.threads)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(report(results))


if __name__ == "__main__":
    main()
