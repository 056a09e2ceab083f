"""Every benchmark in one command: runs each script, prints one Markdown report, writes RESULTS.md.

Takes about ten minutes on the project's 2-core machine. Each figure is a ratio, or is printed
beside its bound, measured side by side in one run against the OpenAI-compatible simulator.

    uv run --frozen python bench/run_all.py
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITE = [
    ("Round latency", ["round_latency.py", "--latency", "0.2", "--repeats", "9"]),
    ("Orchestration overhead", ["overhead.py", "--runs", "20", "--items", "40"]),
    ("Connections in shards", ["connection_pool.py", "--concurrency", "8,64,128", "--rounds", "15"]),
    (
        "Batch throughput",
        ["batch_throughput.py", "--latency", "1.0", "--concurrency", "8", "--problems", "120"],
    ),
    ("Streaming fan-out", ["fanout.py", "--subscribers", "100", "1000", "--runs", "10"]),
    ("Stream lag across processes", ["stream_lag.py", "--runs", "4", "--followers", "25"]),
    ("Takeover", ["takeover.py", "--runs", "20"]),
    ("Memory", ["memory.py", "--items", "10000", "--small", "1000"]),
    ("Cold start", ["cold_start.py", "--repeats", "3"]),
]


def run(script: list[str]) -> tuple[str, float]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(HERE / script[0]), *script[1:]],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE.parent,
        env=os.environ | {"THINKLOOP_LOG_LEVEL": "WARNING"},
    )
    return done.stdout.strip(), time.perf_counter() - start


def main() -> None:
    header = [
        "# thinkloop benchmarks",
        "",
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {os.cpu_count()} cores · "
        f"Python {platform.python_version()} · reproduce with `uv run --frozen python bench/run_all.py`",
    ]
    sections = []
    for title, script in SUITE:
        output, seconds = run(script)
        sections.append(f"## {title}\n\n`bench/{' '.join(script)}` ({seconds:.0f} s)\n\n{output}")
        print(f"{title}: {seconds:.0f} s", file=sys.stderr)
    report = "\n".join(header) + "\n\n" + "\n\n".join(sections) + "\n"
    (HERE / "RESULTS.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
