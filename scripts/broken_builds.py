"""Deliberately broken builds: does the inner loop still fail where a feature breaks? (issue 38)

For each break below this script makes a temporary ``git worktree`` of HEAD (the caller's tree and
its uncommitted changes are never touched), gives it its own ``.venv`` (``uv sync --frozen``: the
editable install then points at the broken copy, and so do the subprocesses the tests start with
``sys.executable -m app``), applies the break as exact text replacements that must each match once
(the script fails loudly if the code moved), runs the inner loop's tests for that feature and
prints the failing test ids and a verdict: "caught" when at least one test fails. The worktree is
removed afterwards. Exit status 1 when a break is not caught (or its tests could not run).

    uv run python scripts/broken_builds.py                 # the three breaks, inner loop
    uv run python scripts/broken_builds.py --only outbox   # one break
    uv run python scripts/broken_builds.py --slow          # also each break's slow-tier tests
    uv run python scripts/broken_builds.py --baseline      # also the same tests unbroken first

With ``--baseline`` the same files run once on unbroken HEAD first, and only tests that pass there
and fail with the break count (a test that fails anyway, under load say, proves nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INNER = "not slow and not realmodel"


@dataclasses.dataclass(frozen=True)
class Break:
    name: str
    what: str
    # (file, text that must occur exactly once, its replacement)
    edits: tuple[tuple[str, str, str], ...]
    # The inner-loop files that test the feature, and why those.
    files: tuple[str, ...]
    why: str
    # Slow-tier files that cover it too (run with --slow), and why.
    slow_files: tuple[str, ...] = ()
    slow_why: str = ""


BREAKS = (
    Break(
        name="lease",
        what=(
            "lease renewal: the renewal of a run's lease (app/runs/repository.py renew_leases; a batch "
            "item is held by its run's lease) still answers 'held' but never extends lease_until, so "
            "a lease lapses while its holder is still working"
        ),
        edits=(
            (
                "app/runs/repository.py",
                "        .values(lease_until=utcnow() + lease)\n        .returning(col(Run.id))\n",
                "        .values(lease_until=col(Run.lease_until))\n        .returning(col(Run.id))\n",
            ),
        ),
        files=(
            "tests/app/batches/test_items_are_runs.py",
            "tests/app/batches/test_redis_workers.py",
            "tests/app/runs/test_durability.py",
        ),
        why=(
            "test_items_are_runs is the runner's claim, hand-back and takeover of items and their runs "
            "(in-process); test_redis_workers runs two `batch worker` processes with short leases on an "
            "item that outlives three lease periods (renewal is what keeps the other worker off it); "
            "test_durability restarts a server with 3 s run leases and 1 s heartbeats (runs alone). "
            "Of these, the inner loop keeps test_redis_workers' lease test (the rest is `slow`)"
        ),
        slow_files=(
            "tests/app/batches/test_redis_workers.py",
            "tests/app/runs/test_durability.py",
            "tests/app/runs/test_replicas.py",
        ),
        slow_why=(
            "the worker processes and the SIGKILLed server above, and two API replica processes on one "
            "database (a replica's runs stay its own while it renews them)"
        ),
    ),
    Break(
        name="outbox",
        what=(
            "the webhook outbox: a failed delivery attempt is never retried "
            "(app/webhooks/outbox.py _record marks it failed at once instead of scheduling the next attempt)"
        ),
        edits=(
            (
                "app/webhooks/outbox.py",
                '            values |= {"next_attempt_at": now + retry_delay(self.settings, attempts)}\n',
                '            values |= {"status": DeliveryStatus.FAILED}\n',
            ),
        ),
        files=("tests/app/webhooks/test_outbox.py", "tests/app/webhooks/test_signed_deliveries.py"),
        why=(
            "test_outbox is the outbox itself (claims, backoff, retries until delivered, "
            "exhaustion, takeover, a SIGKILLed sender); test_signed_deliveries is the API's deliveries "
            "(a signed delivery retried with the same id, redelivery, a finished run delivered)"
        ),
        slow_files=("tests/app/webhooks/test_outbox.py",),
        slow_why="a delivery that failed survives its sender's SIGKILL and is delivered exactly once",
    ),
    Break(
        name="gate",
        what=(
            "the verifier's gate: graphs/refinement.py gate_evidence returns no errors, so the graph "
            "accepts a version whose stated solution the verifier (or the solver) contradicts"
        ),
        edits=(("graphs/refinement.py", "    return lines, unverified\n", "    return [], unverified\n"),),
        files=(
            "tests/graphs/test_chain_gate.py",
            "tests/graphs/test_solver_gate.py",
            "tests/app/runs/test_solver_trace.py",
        ),
        why=(
            "the tests that read a round's `verification` list and the gate's decision: the chain "
            "checks (test_chain_gate), the solver's disagreement (test_solver_gate) and the trace the "
            "API returns for a gated run (test_solver_trace)"
        ),
        slow_files=("tests/app/batches/test_acceptance.py",),
        slow_why=(
            "the 600-item acceptance batches: items whose stated product is wrong must never be accepted"
        ),
    ),
)


def run(command: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, check=check, text=True, capture_output=True)


def apply(tree: Path, brk: Break) -> None:
    """Apply the break's edits; each must match exactly once, or the break is out of date."""
    for relative, old, new in brk.edits:
        path = tree / relative
        text = path.read_text()
        count = text.count(old)
        if count != 1:
            raise SystemExit(
                f"{brk.name}: expected the text to replace exactly once in {relative}, found it {count} "
                f"times: the code moved, update this script's break.\n--- text ---\n{old}"
            )
        path.write_text(text.replace(old, new))


# pytest's short summary ("FAILED tests/…::name - reason"); not a captured log's "ERROR    …" line
FAILED = re.compile(r"^(FAILED|ERROR) (tests/\S.*?)(?: - (.*))?$")


def pytest_run(tree: Path, files: tuple[str, ...], marker: str) -> tuple[int, dict[str, str], str]:
    """Exit status, failing (or erroring) test ids with pytest's one-line reason, the last line."""
    command = ["uv", "run", "--frozen", "pytest", "-m", marker, *files]
    command += ["-n", "2", "-q", "-p", "no:cacheprovider"]
    print(f"  $ {shlex.join(command)}", flush=True)
    done = run(command, tree, check=False)
    ids = {
        m.group(2): (m.group(3) or m.group(1))[:160]
        for line in done.stdout.splitlines()
        if (m := FAILED.match(line))
    }
    tail = "\n".join(done.stdout.strip().splitlines()[-1:])
    return done.returncode, ids, tail


def worktree(tree: Path) -> None:
    """A detached worktree of HEAD at ``tree`` with its own environment."""
    run(["git", "worktree", "add", "--detach", str(tree), "HEAD"], ROOT)
    run(["uv", "sync", "--frozen", "--quiet"], tree)
    where = run(["uv", "run", "--frozen", "python", "-c", "import app, graphs; print(app.__file__)"], tree)
    if not Path(where.stdout.strip()).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"the temporary worktree imports app from {where.stdout.strip()}, not from {tree}")


def leftovers(tree: Path) -> None:
    """End the processes still running from ``tree`` (a test killed by its timeout can leave the
    worker or server processes it started behind): by process id, those whose command line names
    the temporary worktree only."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(tree) in command:
            print(f"  ending a leftover process {entry.name}: {command[:120]}")
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)


def remove(tree: Path) -> None:
    leftovers(tree)
    run(["git", "worktree", "remove", "--force", str(tree)], ROOT, check=False)
    shutil.rmtree(tree, ignore_errors=True)
    run(["git", "worktree", "prune"], ROOT, check=False)


def check(brk: Break, marker: str, files: tuple[str, ...], baseline: bool) -> bool:
    """Run ``files`` under ``marker`` with the break in; True when some test fails because of it."""
    home = Path(tempfile.mkdtemp(prefix=f"broken-{brk.name}-"))
    tree = home / "tree"
    try:
        worktree(tree)
        failing_before: set[str] | None = None
        if baseline:
            print("  unbroken HEAD first:", flush=True)
            status, before, tail = pytest_run(tree, files, marker)
            print(f"  {tail}")
            if status not in (0, 1, 5):
                print(f"  pytest could not run (exit {status})")
                return False
            failing_before = set(before)
        apply(tree, brk)
        status, failing, tail = pytest_run(tree, files, marker)
        print(f"  {tail}")
        if status not in (0, 1, 5):  # 2: interrupted, 3: internal error, 4: usage error
            print(f"  pytest could not run (exit {status})")
            return False
        if failing_before is not None:
            also = sorted(set(failing) & failing_before)
            for test in also:
                print(f"  (fails unbroken too, not counted) {test}")
            failing = {t: why for t, why in failing.items() if t not in failing_before}
        for test, why in sorted(failing.items()):
            print(f"  failed: {test}\n          {why}")
        return bool(failing)
    finally:
        remove(tree)
        shutil.rmtree(home, ignore_errors=True)


def verdict(name: str, caught: bool) -> None:
    print(f"PASS {name}: caught" if caught else f"FAIL {name}: NOT caught", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=[b.name for b in BREAKS], help="run one break")
    parser.add_argument("--slow", action="store_true", help="also run each break's slow-tier tests (-m slow)")
    parser.add_argument("--baseline", action="store_true", help="run the same tests unbroken first")
    args = parser.parse_args()
    results: list[tuple[str, bool]] = []
    for brk in BREAKS:
        if args.only and brk.name != args.only:
            continue
        print(f"\n== {brk.name}: {brk.what}\n  files: {', '.join(brk.files)}\n  why: {brk.why}", flush=True)
        caught = check(brk, INNER, brk.files, args.baseline)
        results.append((f"{brk.name} (inner loop)", caught))
        verdict(f"{brk.name} (inner loop)", caught)
        if args.slow and brk.slow_files:
            print(f"  slow tier: {', '.join(brk.slow_files)}: {brk.slow_why}", flush=True)
            caught = check(brk, "slow", brk.slow_files, args.baseline)
            results.append((f"{brk.name} (slow tier)", caught))
            verdict(f"{brk.name} (slow tier)", caught)
    missed = [name for name, caught in results if not caught]
    summary = f"{len(results) - len(missed)} of {len(results)} caught"
    print(f"\n{summary}; not caught: {', '.join(missed)}" if missed else f"\n{summary}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
