"""Cold start: how long a person waits for `thinkloop --help`, `thinkloop models`, and the README's
main job's first printed round, each in a fresh process; medians over --repeats.

Each command is timed twice: as the installed script (`.venv/bin/thinkloop`, what a shell runs
after `uv sync`) and through `uv run --frozen` (which first checks the environment). The floor is
Python starting and importing nothing of thinkloop.

    uv run --frozen python bench/cold_start.py --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = str(Path(sys.executable).with_name("thinkloop"))
UV = ["uv", "run", "--frozen"]
COMMANDS = {
    "`thinkloop --help`": (["--help"], None),
    "`thinkloop models`": (["models"], None),
    "`thinkloop refine --example orchestra` → first printed round": (
        ["refine", "--example", "orchestra"],
        "pass rate",
    ),
}


def seconds(command: list[str], marker: str | None) -> float:
    """Until the process exits, or (with ``marker``) until it prints a line holding it."""
    start = time.perf_counter()
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        if marker is None:
            process.stdout.read()
            process.wait()
            return time.perf_counter() - start
        for line in process.stdout:
            if marker in line:
                elapsed = time.perf_counter() - start
                break
        else:
            raise RuntimeError(f"{command} printed no {marker!r}")
        process.stdout.read()
        process.wait()
    return elapsed


def median(command: list[str], marker: str | None, repeats: int) -> float:
    return statistics.median(seconds(command, marker) for _ in range(repeats))


def main(repeats: int) -> str:
    seconds([SCRIPT, "--help"], None)  # warm the file cache once, as any second run would have it
    floor = median([sys.executable, "-c", "pass"], None, repeats)
    rows = [
        f"| {name} | {median([SCRIPT, *args], marker, repeats):.2f} | "
        f"{median([*UV, 'thinkloop', *args], marker, repeats):.2f} |"
        for name, (args, marker) in COMMANDS.items()
    ]
    return "\n".join(
        [
            f"Cold start (median of {repeats}, seconds)",
            "",
            "| command | installed script | `uv run --frozen` |",
            "|---|---|---|",
            *rows,
            f"| floor: `python -c pass` | {floor:.2f} | — |",
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    print(main(parser.parse_args().repeats))
