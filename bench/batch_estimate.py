"""`thinkloop batch estimate` against what the batch then spends, on the simulator.

Three estimates, each printed beside what the batch then spent (no response cache, so every call is
made), for calls, prompt and completion tokens and cost:

- cold: nothing measured before; rendered prompts with assumed rounds and reply lengths (the mid
  estimate, and the upper bound beside it);
- similar: the dataset's first half was run before, and the estimate of its second half learns
  rounds, reply lengths and prompt tokens from those items (other problems, same models); on the
  shipped sample (12 varied problems: 6 learnt from) and on 40 generated ones (20 learnt from);
- warm: the same batch was run before, so each item counts with its measured spend.

Target (issue 54): an estimate with a history within ±20 % of what was spent. A cold estimate has
only its assumptions; its upper bound must not be below the spend. This is a benchmark of the
estimate's accuracy, not of time.

    uv run python bench/batch_estimate.py --max-rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import simulator

from app.datasets.synthetic import synthetic_jsonl

SAMPLE = Path(__file__).parents[1] / "app" / "samples" / "datasets" / "flawed-problems.jsonl"
FIELDS = ("calls", "input_tokens", "output_tokens", "cost_usd")
TARGET = 0.20


def thinkloop(env: dict[str, str], *args: str) -> dict[str, Any]:
    """Run a thinkloop command and parse the JSON it prints."""
    done = subprocess.run(["thinkloop", *args], env=env, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"thinkloop {' '.join(args)} failed: {done.stderr}")
    out: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{") :])
    return out


def spent(report: dict[str, Any]) -> dict[str, float]:
    """What the batch's items spent, summed over its rows."""
    rows = report["rows"]
    totals = {f: float(sum(r[f] for r in rows)) for f in FIELDS if f != "calls"}
    totals["calls"] = float(sum(r["llm_calls"] for r in rows))
    return totals


def main() -> None:
    """Estimate, run, compare: cold, from similar items, and warm."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-rounds", type=int, default=3)
    parser.add_argument("--dataset", type=Path, default=SAMPLE)
    args = parser.parse_args()
    rows = args.dataset.read_text().splitlines(keepends=True)
    with simulator(0.0) as base_url, tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp) / "models.toml"
        models.write_text(
            f'[models.sim]\nmodel = "sim-1"\nbase_url = "{base_url}"\n'
            "price = { input_per_mtok = 1.0, output_per_mtok = 4.0 }\n"
        )
        first, second = Path(tmp) / "first.jsonl", Path(tmp) / "second.jsonl"
        first.write_text("".join(rows[: len(rows) // 2]))
        second.write_text("".join(rows[len(rows) // 2 :]))

        def env(name: str) -> dict[str, str]:
            return {
                **os.environ,
                "THINKLOOP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/{name}.db",
                "THINKLOOP_LOG_LEVEL": "WARNING",
            }

        def common(dataset: Path) -> list[str]:
            return ["--dataset", str(dataset), "--models", "sim", "--judge-model", "sim", "--max-rounds",
                    str(args.max_rounds), "--models-file", str(models)]  # fmt: skip

        def run(name: str, dataset: Path) -> dict[str, float]:
            return spent(
                thinkloop(env(name), "batch", "run", *common(dataset), "--no-cache", "--format", "json")
            )

        cold = thinkloop(env("cold"), "batch", "estimate", *common(args.dataset))["total"]
        bound = thinkloop(env("cold"), "batch", "estimate", *common(args.dataset), "--bound")["total"]
        real = run("cold", args.dataset)
        warm = thinkloop(env("cold"), "batch", "estimate", *common(args.dataset))["total"]
        again = run("cold", args.dataset)
        run("similar", first)
        learnt = thinkloop(env("similar"), "batch", "estimate", *common(second))
        later = run("similar", second)
        generated = synthetic_jsonl(40, seed=1).splitlines(keepends=True)
        first.write_text("".join(generated[:20]))
        second.write_text("".join(generated[20:]))
        run("generated", first)
        learnt_generated = thinkloop(env("generated"), "batch", "estimate", *common(second))
        later_generated = run("generated", second)
    table(
        "cold: nothing measured before (rendered prompts, assumed rounds and reply lengths)",
        cold,
        bound,
        real,
    )
    print("  (no target for a guess: the bound must not be below the spend)")
    print(f"  bound ≥ spent on every figure: {all(bound[f] >= real[f] for f in FIELDS)}")
    table(
        f"similar, the sample: its second half after its first ({learnt['scaled_items']} items scaled)",
        learnt["total"],
        None,
        later,
    )
    table(
        f"similar, generated problems: 20 after 20 ({learnt_generated['scaled_items']} items scaled)",
        learnt_generated["total"],
        None,
        later_generated,
    )
    table("warm: the same batch measured once before", warm, None, again)


def table(title: str, estimate: dict[str, Any], bound: dict[str, Any] | None, real: dict[str, float]) -> None:
    """Estimate, bound, spent and ratio per figure, with the ±20 % target."""
    print(f"\n{title}\n{'':14}{'estimate':>12}{'bound':>12}{'spent':>12}{'ratio':>8}  target")
    for field in FIELDS:
        ratio = estimate[field] / real[field] if real[field] else float("nan")
        ok = "±20 % " + ("ok" if abs(ratio - 1) <= TARGET else "MISSED")
        ok = "none (a guess)" if bound is not None else ok
        upper = f"{bound[field]:>12,.4g}" if bound is not None else f"{'-':>12}"
        print(f"{field:14}{estimate[field]:>12,.4g}{upper}{real[field]:>12,.4g}{ratio:>8.2f}  {ok}")


if __name__ == "__main__":
    main()
