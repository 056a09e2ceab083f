"""Cold start: how long a person waits for `thinkloop --help`, `thinkloop models`, and the README's
main job's first printed round, each in a fresh process, and the CPU (user + sys) each process
spends until it exits; medians over --repeats, each beside its target where the project sets one.

Each command is timed twice: as the installed script (`.venv/bin/thinkloop`, what a shell runs
after `uv sync`) and through `uv run --frozen` (which first checks the environment). The floor is
Python starting and importing nothing of thinkloop.

The project's own packages are byte-compiled first, as a user's second run finds them (Python
writes `__pycache__` on the first). `uv sync --compile-bytecode` compiles only the installed
packages, not the editable project, so where `PYTHONDONTWRITEBYTECODE` is set (this machine, CI)
every process would otherwise compile thinkloop's own modules from source: the main job imports
about 130 of them, some 0.35 CPU s, which `--from-source` measures.

    uv run --frozen python bench/cold_start.py --repeats 5
"""

from __future__ import annotations

import argparse
import compileall
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
# The project's own packages (installed editable, so `uv sync --compile-bytecode` leaves them out).
PACKAGES = ("app", "agents", "graphs", "prompts", "migrations", "thinkloop_client")
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


def seconds(
    command: list[str], marker: str | None, env: dict[str, str] | None = None, cwd: Path | str = ROOT
) -> tuple[float, float]:
    """(wall seconds until the process exits, or with ``marker`` until it prints a line holding it;
    CPU seconds of the whole process)."""
    start, cpu = time.perf_counter(), children_cpu()
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, text=True) as process:
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


def compile_cpu() -> float:
    """Byte-compile the project's own packages (as a second run finds them); the CPU s it took."""
    start = time.process_time()
    for package in PACKAGES:
        compileall.compile_dir(ROOT / package, quiet=1, force=True)
    return time.process_time() - start


def from_source_cpu(repeats: int) -> tuple[float, float]:
    """The main job's median CPU s (compiling the project's modules from source in each process,
    compiled), measured in alternate runs. From source runs a copy of the packages that has no
    bytecode and gets none written."""
    import shutil
    import tempfile

    args, marker = COMMANDS["`thinkloop refine --example orchestra` → first printed round"]
    source, compiled = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for package in PACKAGES:
            shutil.copytree(ROOT / package, Path(tmp) / package, ignore=shutil.ignore_patterns("__pycache__"))
        env = {**os.environ, "PYTHONPATH": tmp, "PYTHONDONTWRITEBYTECODE": "1"}
        for _ in range(repeats):
            source.append(seconds([SCRIPT, *args], marker, env=env, cwd=tmp)[1])
            compiled.append(seconds([SCRIPT, *args], marker)[1])
    return statistics.median(source), statistics.median(compiled)


def main(repeats: int, from_source: bool) -> str:
    compiled = compile_cpu()
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
    extra = [
        "",
        f"(the project's own packages byte-compiled first, once: {compiled:.2f} CPU s; "
        "a second run finds them so)",
    ]
    if from_source:
        source, compiled_cpu = from_source_cpu(repeats)
        extra.append(
            f"(the main job compiling the project's modules from source in each process, as with "
            f"`PYTHONDONTWRITEBYTECODE` and no `__pycache__`: {source:.2f} CPU s, against {compiled_cpu:.2f} "
            "compiled, in alternate runs)"
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
            *extra,
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--from-source",
        action="store_true",
        help="also measure the main job compiling the project's modules from source in each process",
    )
    arguments = parser.parse_args()
    print(main(arguments.repeats, arguments.from_source))
