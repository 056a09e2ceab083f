"""Cold start: how long a person waits for `thinkloop --help`, `thinkloop models`, and the README's
main job's first printed round, each in a fresh process, and the CPU (user + sys) each process
spends until it exits; medians over --repeats, each beside its target where the project sets one.

Each command is timed twice: as the installed script (`.venv/bin/thinkloop`, what a shell runs
after `uv sync`) and through `uv run --frozen` (which first checks the environment). The floor is
Python starting and importing nothing of thinkloop.

    uv run --frozen python bench/cold_start.py --repeats 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = str(Path(sys.executable).with_name("thinkloop"))
UV = ["uv", "run", "--frozen"]
# Targets: the main job's whole process at most 2.0 CPU s, `--help` answered within 0.5 s.
CPU_TARGETS = {"`thinkloop refine --example orchestra` → first printed round": 2.0}
WALL_TARGETS = {"`thinkloop --help`": 0.5}
COMMANDS = {
    "`thinkloop --help`": (["--help"], None),
    "`thinkloop models`": (["models"], None),
    "`thinkloop refine --example orchestra` → first printed round": (
        ["refine", "--example", "orchestra"],
        "pass rate",
    ),
}


def children_cpu() -> float:
    """User + sys CPU seconds of every child process waited for so far (and their children)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def seconds(command: list[str], marker: str | None) -> tuple[float, float]:
    """(wall seconds until the process exits, or with ``marker`` until it prints a line holding it;
    CPU seconds of the whole process)."""
    start, cpu = time.perf_counter(), children_cpu()
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        elapsed = None
        for line in process.stdout:
            if elapsed is None and marker is not None and marker in line:
                elapsed = time.perf_counter() - start
        process.wait()
    if marker is not None and elapsed is None:
        raise RuntimeError(f"{command} printed no {marker!r}")
    wall = elapsed if elapsed is not None else time.perf_counter() - start
    return wall, children_cpu() - cpu


def medians(command: list[str], marker: str | None, repeats: int) -> tuple[float, float]:
    runs = [seconds(command, marker) for _ in range(repeats)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def _target(name: str, targets: dict[str, float], unit: str) -> str:
    return f"≤ {targets[name]:.1f} {unit}" if name in targets else "—"


def main(repeats: int) -> str:
    seconds([SCRIPT, "--help"], None)  # warm the file cache once, as any second run would have it
    floor, floor_cpu = medians([sys.executable, "-c", "pass"], None, repeats)
    rows = []
    for name, (args, marker) in COMMANDS.items():
        wall, cpu = medians([SCRIPT, *args], marker, repeats)
        uv_wall, _ = medians([*UV, "thinkloop", *args], marker, repeats)
        rows.append(
            f"| {name} | {wall:.2f} ({_target(name, WALL_TARGETS, 's')}) | {uv_wall:.2f} | "
            f"{cpu:.2f} ({_target(name, CPU_TARGETS, 'CPU s')}) |"
        )
    return "\n".join(
        [
            f"Cold start (median of {repeats}; seconds, target in brackets; the CPU column is user + sys)",
            f"(load average at the end: {' '.join(f'{n:.2f}' for n in os.getloadavg())})",
            "",
            "| command | installed script | `uv run --frozen` | CPU of the installed script's process |",
            "|---|---|---|---|",
            *rows,
            f"| floor: `python -c pass` | {floor:.2f} | — | {floor_cpu:.2f} |",
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    print(main(parser.parse_args().repeats))
