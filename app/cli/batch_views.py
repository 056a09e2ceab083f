"""What `thinkloop batch` shows a person: an id from a prefix, a batch's status, the list of batches,
and the batches left unfinished. (Loaded only by the batch commands.)"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.batches import repository as repo
from app.cli.support import fail
from app.models import BATCH_ACTIVE, BATCH_TERMINAL, RUN_TERMINAL, RUN_UNFINISHED, Batch, RunStatus, utcnow

# Item states as a status line lists them: how items ended, then those left to do.
_TALLY = [*(s for s in RunStatus if s in RUN_TERMINAL), RunStatus.RUNNING, RunStatus.QUEUED]

SHORT = 12  # hex digits of an id shown to a person (48 bits: unique among any real number of batches)


async def resolve(session: AsyncSession, given: str) -> Batch:
    """The batch an id or a unique prefix of one names; otherwise exit 2 saying why (no batch, or
    which batches the prefix fits)."""
    found = await repo.with_prefix(session, given)
    if len(found) == 1:
        return found[0]
    if not found:
        fail(f"no batch {given!r} (see `thinkloop batch list`)")
    listed = "; ".join(f"{b.id} ({b.status}, created {_when(b.created_at)})" for b in found[:10])
    more = " and more" if len(found) > 10 else ""
    fail(f"{given!r} fits several batches: {listed}{more}. Give more of the id.")


def short(batch_id: str) -> str:
    """The id as the CLI shows it (any unique prefix is accepted back)."""
    return batch_id[:SHORT]


def _when(value: datetime | None) -> str:
    return "—" if value is None else f"{value:%Y-%m-%d %H:%M}"


def duration(seconds: float | None) -> str:
    """1h 02m, 3m 05s, 42s."""
    if seconds is None:
        return "—"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def money(value: float) -> str:
    """Dollars to a person's precision: $0.0133, $12.40."""
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def status_text(batch: Batch, state: dict[str, Any], by_model: dict[str, dict[str, int]]) -> str:
    """A batch's status as a person reads it (``--json`` prints ``state`` instead)."""
    items = state["items"]
    tally = " · ".join(f"{items[s]} {s}" for s in _TALLY if items.get(s))
    tokens = state["input_tokens"] + state["output_tokens"]
    elapsed = ((batch.finished_at or utcnow()) - batch.created_at).total_seconds()
    lines = [
        f"batch {batch.id} — {batch.status}" + (f" ({state['stop_reason']})" if state["stop_reason"] else ""),
        f"  models     {', '.join(batch.models)} (judged by {batch.judge_model}, policy {batch.policy}, "
        f"{batch.repeats} repeat(s){', control arm' if batch.control_arm else ''})",
        f"  items      {state['finished']} of {state['total']} finished" + (f": {tally}" if tally else ""),
    ]
    for model, counts in by_model.items():
        done = sum(n for s, n in counts.items() if s in RUN_TERMINAL)
        lines.append(f"    {model:<16} {done} of {sum(counts.values())}")
    lines += [
        f"  spent      {tokens:,} tokens · {money(state['cost_usd'])} · "
        f"LLM time {duration(state['latency_s'])}",
        f"  created    {_when(batch.created_at)} UTC · {_how_long(batch, elapsed)}"
        + (f" · about {duration(state['eta_s'])} left" if state["eta_s"] is not None else ""),
    ]
    for group in state["waiting"]:
        lines.append(
            f"  waiting    {group['items']} queued item(s) left alone: {group['reason']}; add the model to "
            "a process's models file, or cancel the batch"
        )
    if batch.status not in BATCH_TERMINAL and state["finished"] < state["total"]:
        lines.append(f"  resume     thinkloop batch resume {short(batch.id)}")
    return "\n".join(lines)


def _how_long(batch: Batch, elapsed: float) -> str:
    """'running for 3m 05s' while the batch can still go on; once it ended, how long it ran and when
    it finished (a finished batch is not running)."""
    if batch.status in BATCH_TERMINAL:
        ended = f", finished {_when(batch.finished_at)} UTC" if batch.finished_at else ""
        return f"ran for {duration(elapsed)}{ended}"
    if batch.status in BATCH_ACTIVE:
        return f"running for {duration(elapsed)}"
    return f"{batch.status}, {duration(elapsed)} since it was created"


def list_json(batches: Sequence[Batch], states: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`batch list --json`: each batch's progress with what the table shows beside it (its models,
    judge and creation time)."""
    return [
        {**s, "models": b.models, "judge_model": b.judge_model, "created_at": b.created_at.isoformat()}
        for b, s in zip(batches, states, strict=True)
    ]


def list_rows(batches: Sequence[Batch], states: Sequence[dict[str, Any]]) -> list[list[str]]:
    """One row per batch for `batch list`."""
    return [
        [
            short(b.id),
            _when(b.created_at),
            b.status,
            ",".join(b.models),
            f"{s['finished']}/{s['total']}",
            money(s["cost_usd"]),
        ]
        for b, s in zip(batches, states, strict=True)
    ]


LIST_HEAD = ["id", "created (UTC)", "status", "models", "finished", "cost"]


async def unfinished_elsewhere(session: AsyncSession, but: str | None) -> list[tuple[Batch, int]]:
    """Active batches other than ``but`` with items left to do, and how many (a note, not work:
    `batch run` never finishes another batch's items)."""
    out = []
    for batch in await repo.recent(session, 50):
        if batch.id == but or batch.status in BATCH_TERMINAL:
            continue
        counts = await repo.counts(session, batch.id)
        left = sum(counts.get(s, 0) for s in RUN_UNFINISHED)
        if left:
            out.append((batch, left))
    return out
