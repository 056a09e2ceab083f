"""CPU per model call with the model's connections in one pool or in shards, side by side.

httpcore looks at every idle connection of its pool each time a request starts or ends, so with one
pool keeping ``max_concurrency`` connections open a call costs more the more calls may be in
flight (``agents/llm/connections.py``). Rounds of C calls at once go through the real ChatOpenAI client
to the simulator (its own process, so this process's CPU is the client's alone); the two layouts
alternate, and the figure is the median CPU per call over the repeats. Where C is no more than a
shard, both layouts are the same single pool, and their ratio shows the benchmark's noise.

    uv run --frozen python bench/connection_pool.py --concurrency 8,64,128 --rounds 20 --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import openai
from _common import simulator
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from agents.llm.connections import ShardedTransport
from agents.llm.wire import NormalisingTransport


def chat(base_url: str, concurrency: int, shard: int) -> ChatOpenAI:
    """The client build_chat_model makes, with the connections in shards of ``shard``."""
    transport = NormalisingTransport(ShardedTransport(concurrency, shard=shard))
    http_client = openai.DefaultAsyncHttpxClient(timeout=60, transport=transport)
    return ChatOpenAI(model="sim-1", base_url=base_url, api_key="not-needed", http_async_client=http_client)


async def cpu_per_call(base_url: str, concurrency: int, shard: int, rounds: int) -> float:
    """Milliseconds of this process's CPU per call, over ``rounds`` rounds of ``concurrency`` calls
    (a first round, which opens the connections, is not counted)."""
    model = chat(base_url, concurrency, shard)
    message = [HumanMessage("Is 3 + 4 = 7 right? Answer briefly.")]

    async def one_round() -> None:
        await asyncio.gather(*(model.ainvoke(message) for _ in range(concurrency)))

    await one_round()
    start = time.process_time()
    for _ in range(rounds):
        await one_round()
    return 1000 * (time.process_time() - start) / (rounds * concurrency)


async def main(args: argparse.Namespace) -> None:
    layouts = {"one pool": 0, f"shards of {args.shard}": args.shard}
    with simulator(args.latency) as base_url:
        print(f"CPU ms per call, median of {args.repeats}; C calls at once, {args.latency:g} s each")
        print()
        print("| C | one pool | shards | one pool ÷ shards |")
        print("|---|---|---|---|")
        for concurrency in args.concurrency:
            figures: dict[str, list[float]] = {name: [] for name in layouts}
            for _ in range(args.repeats):
                for name, shard in layouts.items():
                    figures[name].append(
                        await cpu_per_call(base_url, concurrency, shard or concurrency, args.rounds)
                    )
            one, sharded = (statistics.median(figures[name]) for name in layouts)
            print(f"| {concurrency} | {one:.2f} | {sharded:.2f} | {one / sharded:.2f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[8, 64, 128])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05, help="simulated seconds per call")
    parser.add_argument("--shard", type=int, default=8, help="connections a shard keeps open")
    asyncio.run(main(parser.parse_args()))
