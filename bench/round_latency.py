"""One refinement round's wall time against its bound, and against judges called one by one.

Runs the real graph, driven as every run is (the service's executor, on a temporary store), and
the real ChatOpenAI client against the simulator at a fixed per-call latency. The simulator runs in
its own process, as a model server does: in this one, its thread would take turns with the client
for the interpreter's lock, and each judge's streamed reply would wait on the others' chunks. A
round here is: seven judges, then the reviser. Figures are medians over --repeats, with the target
beside the ratio.

    uv run --frozen python bench/round_latency.py --latency 0.2 --repeats 9
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
from time import perf_counter

import httpx
from _common import simulator

from agents.judges import JudgeRequest
from agents.llm.models import ModelRegistry, ModelSpec
from agents.panel import PanelFactory
from agents.reviser import RevisionRequest
from agents.schemas import JUDGES, Problem
from agents.simulator import Rule, SimConfig
from app.runs.temporary import temporary_runs
from graphs.context import RunContext
from graphs.events import RunEvent
from graphs.scoring import get_policy

TARGET = 1.03  # a round's wall time at most 3 % over its bound

PROBLEM = Problem(
    question="A tank holds 50 litres and loses 4 litres an hour. How much is left after 6 hours?",
    solution="4 × 6 = 24 litres lost, so 50 - 24 = 26 litres are left.",
)


async def parallel_round(context: RunContext) -> tuple[float, float]:
    """Wall time of round 1 + revision in the graph, and its bound (slowest judge + reviser)."""
    marks: dict[str, float] = {}

    def on_event(event: RunEvent) -> None:
        if event.type == "round.started" and event.round == 1:
            marks["start"] = perf_counter()
        elif event.type == "revision.proposed":
            marks["end"] = perf_counter()

    async with temporary_runs() as runs:
        result = await runs.run(PROBLEM, context, model="sim", judge_model="sim", on_event=on_event)
    slowest_judge = max(o.usage.latency_s for o in result.rounds[0].outcomes)
    return marks["end"] - marks["start"], slowest_judge + result.revisions[0].usage.latency_s


async def sequential_round(context: RunContext) -> float:
    """The same work with the judges awaited one after another, as the reference code does."""
    start = perf_counter()
    for name in JUDGES:
        await context.judges[name].assess(JudgeRequest(name, 1, PROBLEM, PROBLEM))
    await context.reviser.revise(RevisionRequest(1, PROBLEM, PROBLEM, (), ()), lambda _: None)
    return perf_counter() - start


async def configure(base_url: str, config: SimConfig) -> None:
    """Script the simulator's next replies through its control route."""
    async with httpx.AsyncClient() as client:
        body = config.model_dump(mode="json", exclude_unset=True)
        (await client.put(base_url.removesuffix("/v1") + "/_sim", json=body)).raise_for_status()


async def measure(base_url: str, latency: float, repeats: int) -> dict[str, float]:
    spec = ModelSpec(name="sim", model="sim", base_url=base_url, max_concurrency=16)
    async with PanelFactory(ModelRegistry({"sim": spec}), {}) as factory:
        panel = factory.build("sim", "sim")
        context = RunContext.of(panel, get_policy("default", max_rounds=2))
        return await _measure(base_url, context, latency, repeats)


async def _measure(base_url: str, context: RunContext, latency: float, repeats: int) -> dict[str, float]:
    walls, bounds, sequential = [], [], []
    judged = SimConfig(latency_s=latency, rules=[Rule(role="^Judge", score=40, times=7)])
    for _ in range(repeats):
        await configure(base_url, judged)
        wall, bound = await parallel_round(context)
        walls.append(wall)
        bounds.append(bound)
        await configure(base_url, SimConfig(latency_s=latency))
        sequential.append(await sequential_round(context))
    return {
        "wall": statistics.median(walls),
        "bound": statistics.median(bounds),
        "sequential": statistics.median(sequential),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", type=float, default=0.2, help="simulated seconds per LLM call")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    with simulator(0.0) as base_url:
        figures = asyncio.run(measure(base_url, args.latency, args.repeats))
    wall, bound, seq = figures["wall"], figures["bound"], figures["sequential"]
    ratio = wall / bound
    print(f"Round latency, simulator at {args.latency * 1000:.0f} ms per call, median of {args.repeats}")
    print(f"(load average at the end: {' '.join(f'{n:.2f}' for n in os.getloadavg())})\n")
    print("| measure | seconds | ratio |")
    print("|---|---|---|")
    print(f"| one round, 7 judges in parallel + reviser | {wall:.3f} | 1.00 |")
    print(
        f"| bound: slowest judge call + reviser call | {bound:.3f} | "
        f"wall ÷ bound = {ratio:.3f} (target ≤ {TARGET:.2f}: {'met' if ratio <= TARGET else 'not met'}) |"
    )
    print(f"| same round, judges one after another | {seq:.3f} | sequential ÷ parallel = {seq / wall:.2f} |")


if __name__ == "__main__":
    main()
