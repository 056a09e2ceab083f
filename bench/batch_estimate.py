"""`thinkloop batch estimate` against what the batch then spends, on the simulator.

Estimates the batch (mid estimate and upper bound), runs it on the simulator (no response cache, so
every call is made), and prints estimate, spent and their ratio side by side for calls, prompt and
completion tokens and cost. Target (issue 54): the mid estimate within ±20 % of what was spent.
This is a benchmark of the estimate's accuracy, not of time.

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
    """Estimate, run, compare."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-rounds", type=int, default=3)
    parser.add_argument("--dataset", type=Path, default=SAMPLE)
    args = parser.parse_args()
    with simulator(0.0) as base_url, tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp) / "models.toml"
        models.write_text(
            f'[models.sim]\nmodel = "sim-1"\nbase_url = "{base_url}"\n'
            "price = { input_per_mtok = 1.0, output_per_mtok = 4.0 }\n"
        )
        env = {**os.environ, "THINKLOOP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/b.db"}
        env["THINKLOOP_LOG_LEVEL"] = "WARNING"
        common = ["--dataset", str(args.dataset), "--models", "sim", "--judge-model", "sim"]
        common += ["--max-rounds", str(args.max_rounds), "--models-file", str(models)]
        mid = thinkloop(env, "batch", "estimate", *common)["total"]
        bound = thinkloop(env, "batch", "estimate", *common, "--bound")["total"]
        real = spent(thinkloop(env, "batch", "run", *common, "--no-cache", "--format", "json"))
        warm = thinkloop(env, "batch", "estimate", *common)["total"]
        again = spent(thinkloop(env, "batch", "run", *common, "--no-cache", "--format", "json"))
    table(
        "cold: no earlier run measured (rendered prompts, assumed rounds and reply lengths)", mid, bound, real
    )
    table("warm: the same batch measured once before", warm, None, again)


def table(title: str, estimate: dict[str, Any], bound: dict[str, Any] | None, real: dict[str, float]) -> None:
    """Estimate, bound, spent and ratio per figure, with the ±20 % target."""
    print(f"\n{title}\n{'':14}{'estimate':>12}{'bound':>12}{'spent':>12}{'ratio':>8}  target")
    for field in FIELDS:
        ratio = estimate[field] / real[field] if real[field] else float("nan")
        ok = "ok" if abs(ratio - 1) <= TARGET else "MISSED"
        upper = f"{bound[field]:>12,.4g}" if bound is not None else f"{'-':>12}"
        print(f"{field:14}{estimate[field]:>12,.4g}{upper}{real[field]:>12,.4g}{ratio:>8.2f}  ±20 % {ok}")


if __name__ == "__main__":
    main()
