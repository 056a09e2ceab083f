"""The manifest a report or an export carries: what the batch recorded when it was created
(``app/batches/manifest.py``), completed with what only its items know."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from app.models import Batch, BatchItem, JudgementRow, RevisionRow
from app.version import git_revision, version

# Per model (its name in the registry): what its endpoint said it was, over every answered call.
Served = Mapping[str, Mapping[str, Sequence[str]]]


async def served_by(session: AsyncSession, items: Sequence[BatchItem]) -> dict[str, dict[str, list[str]]]:
    """Per model, the model ids its endpoint reported (``model`` of each reply) and the
    ``system_fingerprint`` values it sent, over the judgements and revisions of the items' runs;
    each sorted, empty where the server never sent one (or every reply came from the cache)."""
    runs = sorted({i.run_id for i in items if i.run_id})
    found: dict[str, dict[str, set[str]]] = {}
    for table in (JudgementRow, RevisionRow):
        for start in range(0, len(runs), 500):
            query = (
                select(col(table.model), col(table.reported_model), col(table.system_fingerprint))
                .where(col(table.run_id).in_(runs[start : start + 500]))
                .distinct()
            )
            for model, reported, fingerprint in (await session.execute(query)).all():
                seen = found.setdefault(model, {"reported_model_ids": set(), "system_fingerprints": set()})
                if reported:
                    seen["reported_model_ids"].add(reported)
                if fingerprint:
                    seen["system_fingerprints"].add(fingerprint)
    return {model: {key: sorted(values) for key, values in seen.items()} for model, seen in found.items()}


def complete_manifest(
    batch: Batch, items: Sequence[BatchItem], served: Served | None = None
) -> dict[str, Any]:
    """The batch's recorded manifest with its times (created, first item started, finished) and
    cache hits, and which thinkloop wrote this report. A batch created before manifests were
    recorded says ``recorded: false`` and carries only what its row knows. ``served``
    (``served_by``) adds to each model the model ids its endpoint reported and the
    ``system_fingerprint`` values it sent, where it sent any."""
    stored = dict(batch.manifest or {})
    if served:
        stored = stored or _unrecorded(batch)
        stored["models"] = [_with_served(model, served) for model in stored.get("models") or []]
    starts = [i.claimed_at for i in items if i.claimed_at is not None]
    ends = [i.finished_at for i in items if i.finished_at is not None]
    hits = [i.cache_hits for i in items]
    return {
        **(stored or _unrecorded(batch)),
        "recorded": bool(stored),
        "batch_id": batch.id,
        "times": {
            "created_at": _iso(batch.created_at),
            "first_item_started_at": _iso(min(starts)) if starts else None,
            "last_item_finished_at": _iso(max(ends)) if ends else None,
            "finished_at": _iso(batch.finished_at),
        },
        "cache": {
            "enabled": batch.use_cache,
            "hits": sum(hits),
            "items_with_hits": sum(1 for n in hits if n),
        },
        "written_by": {"version": version(), "git_revision": git_revision()},
    }


def _with_served(model: dict[str, Any], served: Served) -> dict[str, Any]:
    said = served.get(str(model.get("name"))) or {}
    extra = {key: list(values) for key, values in said.items() if values}
    return {**model, **extra}


def _unrecorded(batch: Batch) -> dict[str, Any]:
    models = [{"name": m, "roles": ["under_test"]} for m in batch.models]
    return {
        "dataset": {"id": batch.dataset_id},
        "models": [*models, {"name": batch.judge_model, "roles": ["judge"]}],
        "policy": {"name": batch.policy},
        "design": {
            "max_rounds": batch.max_rounds,
            "repeats": batch.repeats,
            "control_arm": batch.control_arm,
            "use_cache": batch.use_cache,
            "budget_tokens": batch.budget_tokens,
            "budget_usd": batch.budget_usd,
        },
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def manifest_lines(manifest: dict[str, Any]) -> list[str]:
    """The manifest as short lines of text (Markdown and HTML print these)."""
    lines = []
    tool = manifest.get("thinkloop") or {}
    if tool:
        lines.append(f"thinkloop {tool.get('version')} (git {tool.get('git_revision') or 'unknown'})")
    data = manifest.get("dataset") or {}
    if data.get("content_hash"):
        lines.append(
            f"dataset {data.get('name')} ({data.get('problems')} problems, {data.get('format')}), "
            f"sha256 {data['content_hash']}"
        )
    lines += [_model_line(model) for model in manifest.get("models") or []]
    policy = manifest.get("policy") or {}
    params = policy.get("parameters") or {}
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if k != "name")
    lines.append(f"policy {policy.get('name')}" + (f": {shown}" if shown else ""))
    prompts = manifest.get("prompts") or {}
    if prompts:
        lines.append("prompts " + ", ".join(prompts.values()))
    times = manifest["times"]
    lines.append(
        f"created {times['created_at']} · first item started {times['first_item_started_at'] or '—'} "
        f"· finished {times['finished_at'] or '—'}"
    )
    cache = manifest["cache"]
    state = "on" if cache["enabled"] else "off"
    lines.append(f"response cache {state}: {cache['hits']} hit(s) in {cache['items_with_hits']} item(s)")
    if not manifest.get("recorded"):
        lines.append("(created before manifests were recorded: versions, endpoints and prompts unknown)")
    return lines


def _model_line(model: dict[str, Any]) -> str:
    roles = " and ".join(r.replace("_", " ") for r in model.get("roles", []))
    if model.get("offline"):
        return f"model {model['name']} ({roles}): the offline rubric panel"
    if "provider_model_id" not in model:
        return f"model {model['name']} ({roles})"
    seed = model.get("seed")
    line = (
        f"model {model['name']} ({roles}): {model['provider_model_id']} @ {model['endpoint_host']}, "
        f"temperature {model['temperature']}, seed {'none' if seed is None else seed}, "
        f"structured output {model['structured_output']}"
    )
    return line + _served_text(model)


def _served_text(model: dict[str, Any]) -> str:
    parts = []
    if model.get("reported_model_ids"):
        parts.append(f"the endpoint reported model {', '.join(model['reported_model_ids'])}")
    if model.get("system_fingerprints"):
        parts.append(f"system_fingerprint {', '.join(model['system_fingerprints'])}")
    return "; " + "; ".join(parts) if parts else ""
