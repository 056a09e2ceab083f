"""Running the judges' validity bench for the CLI and the API."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol

from agents.labelled.labels import LabelledItem, LabelsError, check_labelled, read_labelled
from agents.panel import PanelFactory
from agents.rubric.panel import RUBRIC_MODEL
from agents.schemas import Problem
from app.access.metering import Meter
from app.panels import build_context
from graphs.analysis.guarantee import calibrate
from graphs.analysis.judged import Judged
from graphs.analysis.validity_metrics import SPLITS, summarise, targets_met
from graphs.analysis.validity_sources import by_source
from graphs.analysis.votes_worth import self_preference, votes_worth
from graphs.benches.validity import bench, versions
from graphs.context import RunContext
from graphs.result import RunResult
from graphs.scoring import get_policy

MAX_VERSIONS = 2000  # a request judges at most this many versions (each is seven judge calls)
Split = Literal["tune", "heldout", "all"]


class Runs(Protocol):
    """What drives the bench's runs: ``app.runs.temporary.TemporaryRuns``, the service's executor
    on a temporary store (its callers open one: app.runs already depends on this package)."""

    async def run(self, problem: Problem, context: RunContext, *, model: str, judge_model: str) -> RunResult:
        """Execute one run of ``problem`` on ``context`` to its end."""
        ...


def builtin_set() -> list[LabelledItem]:
    """The labelled set that ships with thinkloop (written for the project)."""
    path = resources.files("app").joinpath("samples", "validity", "problems.jsonl")
    return read_labelled(Path(str(path)))


def select_split(items: Sequence[LabelledItem], split: str, source: str) -> list[LabelledItem]:
    """The items of ``split`` ('all': every one), from a set with unique ids; LabelsError if none."""
    check_labelled(list(items), source)
    chosen = [item for item in items if split == "all" or item.split == split]
    if not chosen:
        raise LabelsError(f"{source}: no items in the {split} split")
    return chosen


def size(items: Sequence[LabelledItem], twins: bool) -> int:
    """How many versions a bench over ``items`` judges."""
    return sum(len(versions(item, twins)) for item in items)


async def validate(
    items: Sequence[LabelledItem],
    factory: PanelFactory,
    judge_model: str,
    runs: Runs,
    *,
    policy: str = "default",
    twins: bool = False,
    concurrency: int = 8,
    meter: Meter | None = None,
    model_under_test: str | None = None,
    guarantee: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Judge every version of ``items`` with ``judge_model``'s panel, each version a run of
    ``runs`` stopped after round 1; measures per split.

    ``complete`` is false when any version did not end in the panel's verdict (its judge calls
    failed, or no quorum): those versions are counted in ``excluded`` and in no rate. With a
    ``meter``, every call's usage is tallied there (for the caller to charge). ``model_under_test``
    (the model whose versions the panel will judge) is only compared with the judge model, for the
    self-preference warning. With a ``guarantee`` target (α, δ), the report's ``calibration`` is the
    least strict Q threshold meeting it on the headline split (``graphs.analysis.guarantee``)."""
    scoring = get_policy(policy)
    context = build_context(factory, judge_model, judge_model, replace(scoring, max_rounds=1), meter=meter)

    async def drive(problem: Problem) -> RunResult:
        return await runs.run(problem, context, model=judge_model, judge_model=judge_model)

    judged = await bench(items, drive, scoring, twins=twins, concurrency=concurrency)
    splits = [s for s in SPLITS if s == "all" or any(i.split == s for i in items)]
    summaries = {split: summarise(judged, split) for split in splits}
    headline = summaries.get("heldout") or summaries["all"]
    everything = summaries["all"]
    reported = sorted(set().union(*(j.reported for j in judged)))
    return {
        "judge_model": judge_model,
        "offline": judge_model == RUBRIC_MODEL,
        "policy": policy,
        "twins": twins,
        "items": len(items),
        "versions": len(judged),
        "judged": everything["judged"],
        "excluded": everything["excluded"],
        "calls": everything["calls"],
        "solver_failures": everything["solver_failures"],
        # the model ids the judge endpoint reported in its replies: a record needs exactly one
        "reported_models": reported,
        "complete": everything["excluded"]["total"] == 0,
        "record": None,  # the validity record, once one is saved of this report
        "splits": summaries,
        # per source (and per source category), on the headline split: one source among others
        "by_source": by_source(
            [j for j in judged if headline["split"] == "all" or j.split == headline["split"]]
        ),
        "targets": targets_met(headline),
        # what the panel's votes are worth, on the headline split (graphs.analysis.votes_worth)
        "votes_worth": votes_worth(judged, scoring, headline["split"]),
        "self_preference": _self_preference(factory, judge_model, reported, model_under_test),
        "calibration": None if guarantee is None else calibration(judged, headline["split"], *guarantee),
    }


def calibration(judged: Sequence[Judged], split: str, alpha: float, delta: float) -> dict[str, Any]:
    """The guarantee's threshold on the decided versions of ``split`` ('all': every one), on Q."""
    decided = [j for j in judged if j.decided and (split == "all" or j.split == split)]
    found = calibrate(
        [j.quality for j in decided],
        [not j.should_pass for j in decided],
        [j.passed for j in decided],
        alpha,
        delta,
    )
    return {"split": split, **found.as_dict()}


def _self_preference(
    factory: PanelFactory, judge_model: str, reported: list[str], model_under_test: str | None
) -> list[str]:
    """Warnings when the judge model is the model under test, or of its family: by registry name,
    by the model id each is configured with, and by the ids the judge endpoint reported. The offline
    panel and the offline reviser prefer nothing."""
    if model_under_test is None or RUBRIC_MODEL in (judge_model, model_under_test):
        return []
    same = [f"the judge model {judge_model!r} is the model under test: it may prefer its own work"]
    judge_spec, tested_spec = factory.registry.get(judge_model), factory.registry.get(model_under_test)
    judge_ids = [*([judge_spec.model] if judge_spec else []), *reported]
    tested_ids = [tested_spec.model] if tested_spec else []
    return (same if judge_model == model_under_test else []) + self_preference(judge_ids, tested_ids)
