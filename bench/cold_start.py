"""Cold start: from the README's main-job command to its first printed round, beside its floor.

The floor is the same `uv run --frozen` starting Python and importing the CLI, which every command
pays; the rest is building the graph, the panel and judging round 1. Medians over --repeats.

    uv run --frozen python bench/cold_start.py --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN_JOB = ["uv", "run", "--frozen", "thinkloop", "refine", "--example", "orchestra"]
# The floor prints the same marker once the CLI is imported, so both are timed to a printed line.
FLOOR = ["uv", "run", "--frozen", "python", "-c", "import app.cli; print('pass rate', flush=True)"]


def until_first_round(command: list[str]) -> float:
    """Seconds until the command prints a line with "pass rate" (then it is left to finish)."""
    start = time.perf_counter()
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if "pass rate" in line:
                elapsed = time.perf_counter() - start
                break
        else:
            raise RuntimeError("the main job printed no round")
        process.wait()
    return elapsed


def main(repeats: int) -> str:
    until_first_round(FLOOR)  # warm the file cache once, as any second run would have it
    first = statistics.median(until_first_round(MAIN_JOB) for _ in range(repeats))
    floor = statistics.median(until_first_round(FLOOR) for _ in range(repeats))
    return "\n".join(
        [
            f"Cold start (median of {repeats})",
            "",
            "| measure | seconds | ratio |",
            "|---|---|---|",
            f"| README main job → first printed round | {first:.2f} | {first / floor:.2f} × floor |",
            f"| floor: `uv run --frozen` + import the CLI | {floor:.2f} | 1.00 |",
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    print(main(parser.parse_args().repeats))
