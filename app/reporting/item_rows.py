"""A batch's items as flat rows: one per item, the same columns in every export format."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agents.schemas import JUDGES
from app.models import BatchItem
from app.reporting.item_result import ItemResult

# Column order of every export; ``score_<judge>`` is each judge's score (0-100) of the last judged
# version (None: no verdict, or the item never reached a round).
ITEM_COLUMNS: tuple[str, ...] = (
    "batch_id",
    "item_id",
    "run_id",
    "trace",
    "problem_id",
    "external_id",
    "flaw",
    "model",
    "arm",
    "repeat",
    "status",
    "outcome",
    "stop_reason",
    "warrant",
    "warrant_record_id",
    "warrant_false_accept_upper",
    "warrant_n_flawed",
    "warrant_sound_passed_lower",
    "warrant_n_sound",
    "warrant_split",
    "error",
    "rounds",
    "passed",
    "rounds_to_pass",
    "final_quality",
    "avg_quality_all_steps",
    *(f"score_{judge}" for judge in JUDGES),
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "llm_latency_s",
    "llm_calls",
    "retries",
    "abstentions",
    "cache_hits",
    "attempts",
    "started_at",
    "finished_at",
)
INTEGER_COLUMNS = frozenset(
    {"item_id", "repeat", "rounds", "rounds_to_pass", "input_tokens", "output_tokens", "llm_calls"}
    | {"warrant_n_flawed", "warrant_n_sound"}
    | {"retries", "abstentions", "cache_hits", "attempts"}
)
FLOAT_COLUMNS = frozenset(
    {"final_quality", "avg_quality_all_steps", "cost_usd", "llm_latency_s", *(f"score_{j}" for j in JUDGES)}
    | {"warrant_false_accept_upper", "warrant_sound_passed_lower"}
)


def item_row(
    item: BatchItem, result: ItemResult | None, external_id: str | None = None, flaw: str | None = None
) -> dict[str, Any]:
    """One item and its result (``item_result.item_results``) as a flat row (see ``ITEM_COLUMNS``)."""
    last = result.rounds[-1] if result and result.rounds else None
    metrics = result.figures if result else {}
    calls = result.calls if result else None
    return {
        "batch_id": item.batch_id,
        "item_id": item.id,
        "run_id": item.run_id,
        "trace": f"/v1/runs/{item.run_id}" if item.run_id else None,
        "problem_id": item.problem_id,
        "external_id": external_id,
        "flaw": flaw,
        "model": item.model,
        "arm": item.arm,
        "repeat": item.repeat,
        "status": item.status,
        "outcome": item.outcome,
        "stop_reason": result.stop_reason if result else None,
        **_warrant(result.warrant if result else None),
        "error": item.error,
        "rounds": len(result.rounds) if result else 0,
        "passed": metrics.get("passed"),
        "rounds_to_pass": metrics.get("rounds_to_pass"),
        # An error run has no score: null, never 0 or false (its stop_reason and error say why).
        "final_quality": _rounded(last.quality if last and result and result.metrics is not None else None),
        "avg_quality_all_steps": _rounded(metrics.get("avg_quality_all_steps")),
        **{f"score_{judge}": last.scores.get(judge) if last else None for judge in JUDGES},
        "input_tokens": item.input_tokens,
        "output_tokens": item.output_tokens,
        "cost_usd": round(item.cost_usd, 8),
        "llm_latency_s": round(item.latency_s, 3),
        "llm_calls": calls.llm_calls if calls else 0,
        "retries": calls.retries if calls else 0,
        "abstentions": calls.abstentions if calls else 0,
        "cache_hits": calls.cache_hits if calls else 0,
        "attempts": item.attempts,
        "started_at": _iso(item.claimed_at),
        "finished_at": _iso(item.finished_at),
    }


def item_rows(
    items: Sequence[BatchItem],
    results: Mapping[int, ItemResult],
    external_ids: Mapping[str, str | None] | None = None,
    flaws: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Every item as a row, in item order; ``results`` are the items' results by item id,
    ``external_ids`` and ``flaws`` map a problem to its dataset row's id and labelled flaw."""
    ids, labels = external_ids or {}, flaws or {}
    return [
        item_row(i, results.get(i.id or 0), ids.get(i.problem_id), labels.get(i.problem_id)) for i in items
    ]


def _warrant(warrant: Mapping[str, Any] | None) -> dict[str, Any]:
    """An accepted item's warrant as seven cells (valid or none; its record; its false-accept upper
    bound and the flawed problems it rests on; its lower bound of sound versions passed and the sound
    versions it rests on; their split); empty for any other outcome."""
    warrant = warrant or {}
    return {
        "warrant": warrant.get("status"),
        "warrant_record_id": warrant.get("record_id"),
        "warrant_false_accept_upper": warrant.get("false_accept_upper"),
        "warrant_n_flawed": (warrant.get("false_accept") or {}).get("n"),
        "warrant_sound_passed_lower": warrant.get("sound_passed_lower"),
        "warrant_n_sound": (warrant.get("specificity") or {}).get("n"),
        "warrant_split": warrant.get("split"),
    }


def _rounded(value: float | None) -> float | None:
    """Q to six places (0.984, not 0.9840000000000001)."""
    return None if value is None else round(value, 6)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
