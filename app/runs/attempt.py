"""One attempt at a run in this process: everything the executor and its recorder know of it."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents.schemas import Problem
    from app.models import Run
    from graphs.context import RunContext
    from graphs.result import EventSink


@dataclasses.dataclass
class Write:
    """A change waiting for the run's writer: a transcript event, or a graph step's rows."""

    event: dict[str, Any] | None = None
    key: str | None = None
    update: dict[str, Any] | None = None


@dataclasses.dataclass
class Transcript:
    """What this process knows of a run's transcript while it executes the run.

    The graph does not wait for the database: events and rows are queued, and one writer task per
    run stores everything queued so far in one transaction, then streams the events. A round's
    seven verdicts usually land in one transaction, and no LLM call waits for a commit.
    """

    seq: int = 0
    keys: set[str] = dataclasses.field(default_factory=set)  # dedupe keys stored or queued
    thinking: dict[str, Any] | None = None  # think-aloud not queued yet: its deltas joined
    thinking_since: float = 0.0
    queued: list[Write] = dataclasses.field(default_factory=list)
    writer: asyncio.Task[None] | None = None
    failed: BaseException | None = None  # why the writer stopped (the lease was lost, the database away)

    def stop(self) -> None:
        if self.writer is not None:
            self.writer.cancel()


@dataclasses.dataclass(eq=False)
class Attempt:
    """A run as this process executes it: in a background task of the executor's (``submit``) or
    in its caller's (``execute_here``). One value per run replaces a map per fact."""

    run_id: str
    here: bool = False  # executed in its caller's task (a batch item, a temporary store's run)
    task: asyncio.Future[Any] | None = None  # the task driving it
    active: bool = True  # its lease is renewed by the heartbeat (False once ``execute_here`` returned)
    lost: bool = False  # the heartbeat found its lease lost and stopped it
    ending: bool = False  # its end is being stored here: past that commit its lease is gone, not lost
    transcript: Transcript = dataclasses.field(default_factory=Transcript)
    # Given by its caller (a temporary store's run), else loaded and built from the run's row.
    context: RunContext | None = None
    loaded: tuple[Run, Problem] | None = None
    observe: EventSink | None = None  # its typed events as they happen, for a caller that shows them live

    def restart(self, seq: int, keys: set[str]) -> None:
        """The run's transcript as this attempt (re)reads it; an earlier writer no longer writes."""
        self.transcript.stop()
        self.transcript = Transcript(seq, keys)
