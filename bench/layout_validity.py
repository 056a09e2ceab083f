"""The validity bench with a real local model, judges in the level-first layout against the shared prefix.

Issue 42 moved every judge request to the shared prefix (the rules, the problem, then the judge's
level); the text a judge is told is the same, only its order changed. This runs ``thinkloop judges
validate``'s bench (``app.validity.service.validate``: each version a run of round 1, driven by the
service's executor on a temporary store) once per layout, each on a fresh llama-server (the
real-model tier's: Gemma 3 270M, two slots, one thread, ``agents/realmodel.py``) with Gemma as
the whole panel (seven judges and the solver) and the tier's bounds on a reply. Both judge the same
held-out slice of the shipped labelled set, without corrected versions (one version an item).

Per layout it prints how each version ended (decided, errored, undecided: a failed call or a panel
without a quorum is never a verdict, and is counted apart), the bench's rates with n and their Wilson
95 % intervals, and figures per judge call, which have seven times the n: the calls that gave a
verdict, those that abstained (a schema-valid reply with no judgement in it) and those that failed
(a reply that never fitted the schema, or no answer). Then whether each figure of one layout lies
within the other's interval.

    uv run --frozen python bench/layout_validity.py --items 6
    uv run --frozen python bench/layout_validity.py --items 12 --json

Needs the real-model tier's server and model (built and installed on first use: about 11 minutes
for the server's build, see docs/development.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from agents.judges import Layout
from agents.labelled.labels import LabelledItem, read_labelled
from agents.llm.models import MaxTokens, ModelRegistry, ModelSpec
from agents.panel import PanelFactory
from agents.realmodel import (
    MODEL_ID,
    NAME,
    TIER_MAX_TOKENS,
    ServerOptions,
    cache_dir,
    prepared,
    start_server,
)
from agents.schemas import Problem
from app.logging import configure_logging
from app.runs.temporary import TemporaryRuns, temporary_runs
from app.validity.service import validate
from graphs.analysis.validity_metrics import share
from graphs.benches.validity import reading_of
from graphs.context import RunContext
from graphs.result import RunResult
from graphs.scoring import get_policy

VALIDITY_SET = Path(__file__).resolve().parents[1] / "app" / "samples" / "validity" / "problems.jsonl"
LAYOUTS: tuple[Layout, ...] = ("level_first", "shared_prefix")
# The bench's rates compared between the layouts (specificity is the controls' here: no corrected
# version is judged).
RATES = ("detection", "refused_other", "false_accept", "specificity")
CALLS = ("verdict", "abstained", "failed")


def labelled_slice(count: int) -> list[LabelledItem]:
    """``count`` held-out items, the same every time: a third of them sound controls (at least one),
    the rest flawed problems taken one of each kind of flaw in turn (``h2-fp-01``, ``h2-as-01``, …,
    then the ``-02``s), each without its corrected version."""
    held = [item for item in read_labelled(VALIDITY_SET) if item.split == "heldout"]
    controls = [item for item in held if item.kind == "control"][: max(1, count // 3)]
    flawed = [item for item in held if item.kind == "flawed"]
    in_turn = sorted(enumerate(flawed), key=lambda pair: (pair[1].id.rsplit("-", 1)[-1], pair[0]))
    chosen = [item for _, item in in_turn][: count - len(controls)] + controls
    return [item.model_copy(update={"corrected": None}) for item in chosen]


class RecordedRuns:
    """The bench's runs, each result kept with its problem (for the figures per call)."""

    def __init__(self, runs: TemporaryRuns) -> None:
        self.runs = runs
        self.results: list[tuple[Problem, RunResult]] = []

    async def run(self, problem: Problem, context: RunContext, *, model: str, judge_model: str) -> RunResult:
        """One run, as the bench's ``Runs``; its result kept."""
        result = await self.runs.run(problem, context, model=model, judge_model=judge_model)
        self.results.append((problem, result))
        return result


async def sweep(base_url: str, layout: Layout, items: list[LabelledItem]) -> dict[str, Any]:
    """The validity bench on ``items``, Gemma's panel sending its judges' requests in ``layout``."""
    spec = ModelSpec(name=NAME, model=MODEL_ID, base_url=base_url, max_tokens=MaxTokens(**TIER_MAX_TOKENS))
    factory = PanelFactory(ModelRegistry({NAME: spec}), {}, judge_layout=layout)
    async with factory, temporary_runs(factory=factory) as runs:
        recorded = RecordedRuns(runs)
        report = await validate(items, factory, NAME, recorded)
    return {"report": report, "decisions": _decisions(recorded.results), "calls": _calls(recorded.results)}


def _decisions(results: list[tuple[Problem, RunResult]]) -> Counter[str]:
    """How each version's run ended: its decision under the bench's policy, and the run's stop reason."""
    policy = get_policy("default")
    return Counter(f"{reading_of(result, policy).decision} ({result.stop_reason})" for _, result in results)


def _calls(results: list[tuple[Problem, RunResult]]) -> dict[str, Any]:
    """Every judge call of every version: a verdict, an abstention or a failure (by kind); and the
    solver's calls, answered or failed; the HTTP requests behind them (with re-asks)."""
    judges: Counter[str] = Counter()
    solver: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    requests = 0
    for _, result in results:
        requests += result.usage.calls
        for record in result.rounds[:1]:
            for outcome in record.outcomes:
                if outcome.failure is not None:
                    judges["failed"] += 1
                    judges[f"failed: {outcome.failure.kind}"] += 1
                elif outcome.verdict is None:
                    judges["abstained"] += 1
                    reasons[(outcome.abstain_reason or "")[:80]] += 1
                else:
                    judges["verdict"] += 1
            if record.solver is not None:
                failure = record.solver.failure
                solver[f"failed: {failure.kind}: {failure.message[:60]}" if failure else "answered"] += 1
    total = sum(judges[key] for key in CALLS)
    figures = {key: share([True] * judges[key] + [False] * (total - judges[key])) for key in CALLS}
    return {"judge_calls": total, "counts": dict(judges), "shares": figures, "solver": dict(solver),
            "requests": requests, "abstain_reasons": dict(reasons.most_common(5))}  # fmt: skip


def measure(
    layout: Layout, items: list[LabelledItem], binary: Path, model: Path, threads: int
) -> dict[str, Any]:
    """A fresh server (an empty prompt cache) and the bench on it, timed."""
    started = time.monotonic()
    with start_server(binary, model, cache_dir() / "logs", ServerOptions(threads=threads)) as server:
        measured = asyncio.run(sweep(server.base_url, layout, items))
    return measured | {"minutes": (time.monotonic() - started) / 60}


def figures(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The shares compared between layouts: the bench's rates and the per-call shares."""
    heldout = result["report"]["splits"]["heldout"]
    rates = {name: heldout[name] for name in RATES}
    return rates | {f"judge calls: {name}": result["calls"]["shares"][name] for name in CALLS}


def within(a: dict[str, Any], b: dict[str, Any]) -> bool | None:
    """Whether ``a``'s rate lies within ``b``'s interval (None when either has no n)."""
    if not a["n"] or not b["n"]:
        return None
    return bool(b["low"] <= a["rate"] <= b["high"])


def comparison(results: dict[Layout, dict[str, Any]]) -> dict[str, dict[str, bool | None]]:
    """Per figure: shared_prefix's rate within level_first's interval, and the other way round."""
    old, new = figures(results["level_first"]), figures(results["shared_prefix"])
    return {
        name: {
            "shared_in_level_first": within(new[name], old[name]),
            "level_first_in_shared": within(old[name], new[name]),
        }
        for name in old
    }


def _share_text(s: dict[str, Any]) -> str:
    if not s["n"]:
        return f"n 0 ({s.get('excluded', 0)} excluded)"
    text = f"{s['count']}/{s['n']} = {s['rate']:.0%} [{s['low']:.0%}, {s['high']:.0%}]"
    return text + (f" ({s['excluded']} excluded)" if s.get("excluded") else "")


def report(items: list[LabelledItem], results: dict[Layout, dict[str, Any]]) -> str:
    """The figures as Markdown tables."""
    lines = [
        f"{len(items)} held-out items ({', '.join(item.id for item in items)}), one version each; "
        f"{MODEL_ID} on llama-server (2 slots) as the whole panel",
        "",
        "| layout | minutes | flawed: decided / excluded | controls: decided / excluded "
        "| excluded: errored / undecided | judge calls | HTTP requests | solver answered / failed |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for layout, r in results.items():  # the bench's own count of each version (``Judged.decided``)
        heldout, calls = r["report"]["splits"]["heldout"], r["calls"]
        flawed, controls, excluded = heldout["detection"], heldout["specificity"], heldout["excluded"]
        answered = calls["solver"].get("answered", 0)
        unanswered = sum(calls["solver"].values()) - answered
        lines.append(
            f"| {layout} | {r['minutes']:.1f} | {flawed['n']} / {flawed['excluded']} "
            f"| {controls['n']} / {controls['excluded']} | {excluded['errored']} / {excluded['undecided']} "
            f"| {calls['judge_calls']} | {calls['requests']} | {answered} / {unanswered} |"
        )
    old, new = figures(results["level_first"]), figures(results["shared_prefix"])
    check = comparison(results)
    lines += [
        "",
        "| figure (Wilson 95 %) | level_first | shared_prefix | within each other's interval |",
        "| --- | --- | --- | --- |",
    ]
    for name in old:
        both = check[name]
        said = {True: "yes", False: "no", None: "n 0"}
        lines.append(
            f"| {name} | {_share_text(old[name])} | {_share_text(new[name])} "
            f"| {said[both['shared_in_level_first']]} / {said[both['level_first_in_shared']]} |"
        )
    for layout, r in results.items():
        failures = {k: v for k, v in r["calls"]["counts"].items() if k.startswith("failed: ")}
        reasons = r["calls"]["abstain_reasons"]
        lines.append(f"\n{layout}: failed judge calls by kind: {failures or 'none'}")
        lines += ["most common abstentions:"] * bool(reasons)
        lines += [f"  {count} × {reason}" for reason, count in reasons.items()]
    return "\n".join(lines)


def prepare() -> tuple[Path, Path]:
    """llama-server and the model, built and installed on first use; exit 2 saying why if they cannot be."""
    try:
        return prepared()
    except (subprocess.CalledProcessError, OSError, RuntimeError) as exc:
        sys.exit(f"error: the real-model tier's llama-server or model is not available: {exc}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=6, help="held-out items, a third controls (default 6)")
    parser.add_argument("--threads", type=int, default=ServerOptions.threads, help="llama-server's threads")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.items < 2:
        parser.error("--items: at least 2 (a flawed problem and a control)")
    configure_logging("ERROR")  # a failed or malformed call is a figure here, not a line on stderr
    items, (binary, model) = labelled_slice(args.items), prepare()
    results: dict[Layout, dict[str, Any]] = {}
    for layout in LAYOUTS:
        try:
            results[layout] = measure(layout, items, binary, model, args.threads)
        except RuntimeError as exc:  # the server did not start: its log's tail is in the message
            sys.exit(f"error: {layout}: {exc}")
    if args.json:
        out = {"items": [item.id for item in items], "model": MODEL_ID, "layouts": results,
               "within": comparison(results)}  # fmt: skip
        print(json.dumps(out, indent=2, default=str))
    else:
        print(report(items, results))


if __name__ == "__main__":
    main()
