"""Write the command output shown in the docs from the current code, or check the committed copies.

    uv run python scripts/docs_excerpts.py            # rewrite docs/excerpts/*
    uv run python scripts/docs_excerpts.py --check    # exit 1 naming each stale excerpt

Each excerpt is the output of one documented command, run in a fresh temporary database, with the
lines that vary from run to run (ids) left out. The pages include them with
``--8<-- "docs/excerpts/NAME"``; the README quotes ``refine-orchestra.txt`` verbatim.
``tests/docs/test_excerpts.py`` fails when a committed copy differs from what the code prints.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXCERPTS = ROOT / "docs" / "excerpts"
BOX = "│╭╮╰╯─┃━┏┓┗┛┡┩└┘┌┐ "


def _thinkloop(*args: str) -> str:
    """Run `thinkloop ARGS` as the docs do, on a temporary database, and return what it printed."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "COLUMNS": "200",
            "THINKLOOP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/excerpt.db",
        }
        done = subprocess.run(
            [sys.executable, "-m", "app", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"thinkloop {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def refine_orchestra() -> str:
    """The lines of `thinkloop refine --example orchestra` that tell the story: rounds, think-aloud, end."""
    keep = (
        "pass rate ",
        "Model under test, thinking aloud",
        "The panel reported",
        "outcome ",
        "RoundsToPass",
    )
    lines = [line.strip(BOX) for line in _thinkloop("refine", "--example", "orchestra").splitlines()]
    return "\n".join(line for line in lines if line.startswith(keep)) + "\n"


def batch_report() -> str:
    """The head of the Markdown report of the docs' batch: items by outcome and the scored statistics."""
    report = _thinkloop(
        "batch", "run", "--dataset", "app/samples/datasets/flawed-problems.jsonl",
        "--models", "rubric", "--control", "--repeats", "2", "--format", "md",
    )  # fmt: skip
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Items: "))
    stats = next(i for i, line in enumerate(lines) if line.startswith("## Scored statistics"))
    end = next(i for i in range(stats + 1, len(lines)) if lines[i].startswith("## "))
    kept = [line for line in lines[start:end] if line.strip()]
    return "\n".join(kept) + "\n"


EXCERPTS_BY_NAME: dict[str, Callable[[], str]] = {
    "refine-orchestra.txt": refine_orchestra,
    "batch-report.md": batch_report,
}


def differs(path: Path, current: str) -> bool:
    """Whether the committed copy at PATH is missing or not CURRENT."""
    return not path.exists() or path.read_text(encoding="utf-8") != current


def stale(directory: Path = EXCERPTS, names: list[str] | None = None) -> list[str]:
    """The excerpts in DIRECTORY whose text is not what the current code prints."""
    return [
        name
        for name in names or list(EXCERPTS_BY_NAME)
        if differs(directory / name, EXCERPTS_BY_NAME[name]())
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a committed excerpt is stale")
    parser.add_argument("names", nargs="*", help="only these excerpts (default: all)")
    options = parser.parse_args()
    if options.check:
        names = stale(EXCERPTS, options.names or None)
        for name in names:
            print(f"stale: docs/excerpts/{name} (run: uv run python scripts/docs_excerpts.py {name})")
        return 1 if names else 0
    EXCERPTS.mkdir(exist_ok=True)
    for name in options.names or EXCERPTS_BY_NAME:
        (EXCERPTS / name).write_text(EXCERPTS_BY_NAME[name](), encoding="utf-8")
        print(f"wrote docs/excerpts/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
