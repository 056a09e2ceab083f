"""What a test's migrated database costs: migrating from zero (the suite's old fixture) against a
copy of a template migrated once (its fixture now, tests/app/conftest.py), interleaved, medians; and
what a commit costs on a test database with ``synchronous_commit`` on (PostgreSQL's default) and off
(the test databases' setting).

    uv run --frozen python bench/fixture_databases.py [--rounds 5]

Needs the PostgreSQL server on 127.0.0.1:5432 (user postgres, trust auth); cleans up after itself.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path

import psycopg

from app.db import migrate

ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


def admin(statement: str, database: str = "test") -> None:
    """Run one statement outside a transaction on ``database``."""
    with psycopg.connect(ADMIN.replace("/test", f"/{database}"), autocommit=True) as connection:
        connection.execute(statement)


def url(name: str) -> str:
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    old, template = f"bench_old_{uuid.uuid4().hex[:8]}", f"bench_tpl_{uuid.uuid4().hex[:8]}"
    folder = Path(tempfile.mkdtemp())
    admin(f'CREATE DATABASE "{old}"')
    admin(f'CREATE DATABASE "{template}"')
    try:
        asyncio.run(migrate(url(template)))
        asyncio.run(migrate(f"sqlite+aiosqlite:///{folder / 'template.db'}"))
        times: dict[str, list[float]] = {
            "PostgreSQL, before: DROP SCHEMA + migrate": [],
            "PostgreSQL, now: CREATE DATABASE ... TEMPLATE": [],
            "SQLite, before: migrate a new file": [],
            "SQLite, now: copy the template file": [],
        }
        slots = list(times.values())
        for n in range(rounds):

            def reset_and_migrate() -> None:
                admin("DROP SCHEMA public CASCADE", old)
                admin("CREATE SCHEMA public", old)
                asyncio.run(migrate(url(old)))

            copy = f"bench_copy_{uuid.uuid4().hex[:8]}"
            slots[0].append(timed(reset_and_migrate))
            create = f'CREATE DATABASE "{copy}" TEMPLATE "{template}"'
            slots[1].append(timed(partial(admin, create)))
            admin(f'DROP DATABASE "{copy}"')
            fresh = f"sqlite+aiosqlite:///{folder / f'{n}.db'}"
            slots[2].append(timed(partial(asyncio.run, migrate(fresh))))
            slots[3].append(timed(partial(shutil.copyfile, folder / "template.db", folder / f"copy{n}.db")))
            for mode in ("on", "off"):
                times.setdefault(f"PostgreSQL, {COMMITS} commits, synchronous_commit {mode}", []).append(
                    timed(partial(commits, template, mode))
                )
    finally:
        admin(f'DROP DATABASE IF EXISTS "{old}" WITH (FORCE)')
        admin(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')
        shutil.rmtree(folder)
    for name, values in times.items():
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"{name}: median {statistics.median(values):.3f} s (n = {len(values)}: {each})")
    on, off = (
        statistics.median(times[f"PostgreSQL, {COMMITS} commits, synchronous_commit {m}"])
        for m in ("on", "off")
    )
    print(f"a commit with synchronous_commit off takes {off / on:.2f} of its time with it on")


COMMITS = 200


def commits(database: str, mode: str) -> None:
    """``COMMITS`` one-row transactions on ``database`` with ``synchronous_commit`` set to ``mode``."""
    with psycopg.connect(ADMIN.replace("/test", f"/{database}"), autocommit=True) as connection:
        connection.execute(f"SET synchronous_commit = {mode}")
        table = f"bench_commits_{uuid.uuid4().hex[:8]}"  # a logged table: a temporary one writes no WAL
        connection.execute(f"CREATE TABLE {table} (n int)")
        for n in range(COMMITS):
            connection.execute(f"INSERT INTO {table} VALUES (%s)", (n,))
        connection.execute(f"DROP TABLE {table}")


if __name__ == "__main__":
    main()
