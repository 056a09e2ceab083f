"""A run's lease: one process executes a run while it holds it (claim, renew, sweep, release)."""

from __future__ import annotations

import os
import socket
from collections.abc import Collection
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import short_session
from app.models import utcnow
from app.runs import repository as repo


class LeaseLost(Exception):
    """This process no longer holds the run: it ended or was cancelled elsewhere, or was taken over."""


def worker_name() -> str:
    """This process, as a lease names its owner (host:pid)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Leases:
    """This process's leases on runs, each ``lease`` long: one conditional update claims a run, one
    renews every lease held here, and a graceful stop hands them all back for any process."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], worker: str, lease: timedelta) -> None:
        self.sessions, self.worker, self.lease = sessions, worker, lease

    def deadline(self) -> datetime:
        """When a lease taken now lapses."""
        return utcnow() + self.lease

    async def claim(self, run_id: str) -> bool:
        """Take the run, unless it ended or another live process holds it."""
        async with short_session(self.sessions) as session:
            return await repo.claim_run(session, run_id, self.worker, self.lease)

    async def renew(self, held: Collection[str]) -> set[str]:
        """Extend the leases on ``held``; the ids still held (the others were lost)."""
        async with short_session(self.sessions) as session:
            return await repo.renew_leases(session, held, self.worker, self.lease)

    async def sweep(self, limit: int = 100) -> list[str]:
        """Unfinished runs that no live process holds (never claimed, released, or lapsed)."""
        async with short_session(self.sessions) as session:
            return await repo.claimable_runs(session, limit=limit)

    async def release(self) -> int:
        """Hand back every unfinished run held here; how many."""
        async with short_session(self.sessions) as session:
            return await repo.release_leases(session, self.worker)

    async def check(self, session: AsyncSession, run_id: str) -> None:
        """Write nothing more for a run this process no longer holds (cancelled or taken over
        elsewhere since the last renewal): the transaction rolls back and the run's task ends."""
        if not await repo.holds(session, run_id, self.worker):
            raise LeaseLost(run_id)
