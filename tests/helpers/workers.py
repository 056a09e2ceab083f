"""What each pytest-xdist worker keeps to itself on the shared servers.

The suite runs on several xdist workers at once (``-n 2`` in pyproject's addopts). Each worker is its
own pytest session, so its session fixtures (the simulator on a free port, the PostgreSQL databases
with random names, the temp directories under ``popen-gwN``) are already its own. Redis is the one
server addressed by a fixed number: this module gives every worker its own Redis databases, so one
worker's ``flushdb`` or queue cleanup never touches another worker's keys.
"""

from __future__ import annotations

import os

# Redis has 16 databases (0-15); each worker takes two, from the top: serially (or on worker gw0)
# 15 and 14, on gw1 13 and 12, ... on gw7 1 and 0.
REDIS_DATABASES = 16
SLOTS = ("main", "limits")


def worker_index() -> int:
    """This xdist worker's number (gw3 → 3); 0 when the suite runs in one process. Shifted by
    THINKLOOP_TEST_REDIS_OFFSET, so that test sessions of several clones on one machine (each with
    ``-n 0``, or fewer workers) keep to their own Redis databases."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name.removeprefix("gw")) + int(os.environ.get("THINKLOOP_TEST_REDIS_OFFSET", "0"))


def redis_database(slot: str, index: int | None = None) -> int:
    """The Redis database number of ``slot`` ("main": the batch stream, provider limits and
    workers; "limits": the API's key quotas, flushed whole by its tests) for worker ``index``."""
    index = worker_index() if index is None else index
    number = REDIS_DATABASES - 1 - len(SLOTS) * index - SLOTS.index(slot)
    if number < 0:
        raise RuntimeError(
            f"xdist worker gw{index} has no Redis database left: run at most "
            f"{REDIS_DATABASES // len(SLOTS)} workers (-n)"
        )
    return number


def redis_url(slot: str = "main") -> str:
    """This worker's Redis URL for ``slot`` on the machine's server (127.0.0.1:6379)."""
    return f"redis://127.0.0.1:6379/{redis_database(slot)}"
