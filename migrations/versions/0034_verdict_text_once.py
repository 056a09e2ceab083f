"""A verdict's text is stored once, in its judgement row.

Revision ID: 0034
Revises: 0033

A ``judge.verdict`` transcript event kept the verdict's text (rationale, own answer, abstain
reason, failure, reasoning) beside the same text in its ``judgements`` row. Upgrading cuts each
stored event down to its headline (round, judge, score, confidence, abstained, model, usage) where
joining the row's text back gives the event exactly; an event whose text differs from its row's (an
earlier attempt's verdict that was never counted), that has no row, or that was written before the
event carried all five keys keeps its text. Readers join the text back from the row. Downgrading
joins the text back into every event that lacks it.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0034"
down_revision: str | None = "0033"
branch_labels = None
depends_on = None

# The text's keys, and the order of an event's keys as the event was written (a downgrade puts the
# text back where it was).
TEXT = ("rationale", "own_answer", "abstain_reason", "failure", "reasoning")
ORDER = (
    "type",
    "round",
    "judge",
    "score",
    "confidence",
    "rationale",
    "own_answer",
    "abstained",
    "abstain_reason",
    "failure",
    "reasoning",
    "model",
    "usage",
)
CHUNK = 1000

EVENTS = sa.table(
    "transcript_events",
    sa.column("id", sa.Integer),
    sa.column("run_id", sa.String),
    sa.column("type", sa.String),
    sa.column("data", sa.JSON),
)
JUDGEMENTS = sa.table(
    "judgements",
    sa.column("run_id", sa.String),
    sa.column("round", sa.Integer),
    sa.column("judge", sa.String),
    sa.column("rationale", sa.Text),
    sa.column("details", sa.JSON),
    sa.column("abstain_reason", sa.Text),
    sa.column("failure", sa.JSON),
    sa.column("reasoning", sa.Text),
)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _texts(bind: sa.Connection, run_ids: set[str]) -> dict[tuple[str, int, str], dict[str, Any]]:
    """The text of each judgement of these runs, by the event's names, by (run, round, judge)."""
    query = sa.select(JUDGEMENTS).where(JUDGEMENTS.c.run_id.in_(sorted(run_ids)))
    texts = {}
    for row in bind.execute(query).mappings():
        texts[(row["run_id"], row["round"], row["judge"])] = {
            "rationale": row["rationale"],
            "own_answer": (_json(row["details"]) or {}).get("own_answer"),
            "abstain_reason": row["abstain_reason"],
            "failure": _json(row["failure"]),
            "reasoning": row["reasoning"],
        }
    return texts


def _joined(headline: dict[str, Any], text: dict[str, Any]) -> dict[str, Any]:
    """The event whole again (a verdict without an answer of its own said "": its row keeps none)."""
    if text["own_answer"] is None and not headline.get("abstained"):
        text = text | {"own_answer": ""}
    merged = headline | text
    ordered = {key: merged[key] for key in ORDER if key in merged}
    return ordered | {key: value for key, value in merged.items() if key not in ordered}


def _rewrite(change: Any) -> None:
    """Every ``judge.verdict`` event, a chunk at a time: ``change(data, text of its row or None)``
    gives its new data, or None to leave it as it is."""
    bind = op.get_bind()
    last = 0
    shortened = sa.update(EVENTS).where(EVENTS.c.id == sa.bindparam("event_id"))
    while True:
        query = (
            sa.select(EVENTS.c.id, EVENTS.c.run_id, EVENTS.c.data)
            .where(EVENTS.c.type == "judge.verdict", EVENTS.c.id > last)
            .order_by(EVENTS.c.id)
            .limit(CHUNK)
        )
        rows = bind.execute(query).all()
        if not rows:
            return
        last = rows[-1].id
        texts = _texts(bind, {row.run_id for row in rows})
        updates = []
        for row in rows:
            data = _json(row.data)
            text = texts.get((row.run_id, int(data.get("round", 0)), str(data.get("judge"))))
            new = change(data, text)
            if new is not None:
                updates.append({"event_id": row.id, "new": new})
        if updates:
            bind.execute(shortened.values(data=sa.bindparam("new")), updates)


def _shorten(data: dict[str, Any], text: dict[str, Any] | None) -> dict[str, Any] | None:
    """The headline, where joining it back with its row's text gives the event exactly."""
    if text is None or not all(key in data for key in TEXT):
        return None
    headline = {key: value for key, value in data.items() if key not in TEXT}
    return headline if list(_joined(headline, text).items()) == list(data.items()) else None


def _restore(data: dict[str, Any], text: dict[str, Any] | None) -> dict[str, Any] | None:
    if any(key in data for key in TEXT) or text is None:
        return None
    return _joined(data, text)


def upgrade() -> None:
    _rewrite(_shorten)


def downgrade() -> None:
    _rewrite(_restore)
