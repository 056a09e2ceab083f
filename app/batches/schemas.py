"""HTTP schemas of the batches API."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from agents.llm.calls import CallFailure
from agents.outcome import Outcome
from app.models import BatchItem, RunStatus
from app.pagination import MAX_INT32
from app.reporting.item_result import ItemResult
from app.text import storable_if_text
from app.validity.panel_schemas import WARRANT_EXAMPLES, Warrant
from graphs.scoring import PolicyName

BatchStatus = Literal["queued", "running", "paused", "completed", "cancelled", "budget_exhausted"]
ReportFormat = Literal["json", "md", "csv", "html"]
ItemFormat = Literal["jsonl", "csv", "parquet"]
ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200), BeforeValidator(storable_if_text)]
MAX_BATCH_ITEMS = 100_000
MAX_BUDGET_TOKENS = MAX_INT32  # the column is a 32-bit INTEGER on PostgreSQL
MAX_BUDGET_USD = 1e12


class BatchCreate(BaseModel):
    """POST /v1/batches body: a dataset × models under test × repeats, judged the same way."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [{"dataset_id": "3f2c…", "models": ["gpt4o", "qwen-local"], "control_arm": True}]
        },
    )

    dataset_id: Annotated[str, BeforeValidator(storable_if_text)] = Field(
        max_length=64, description="The dataset to evaluate (POST /v1/datasets)"
    )
    models: list[ModelName] = Field(min_length=1, max_length=20, description="Models under test")
    judge_model: ModelName | None = Field(
        default=None, description="Judge model (default: settings)", examples=["rubric"]
    )
    policy: PolicyName | None = Field(
        default=None,
        description="Scoring policy: default or think-paper (default: settings)",
        examples=["default"],
    )
    max_rounds: int = Field(
        default=3, ge=1, le=10, description="At most this many judged versions per item, 1–10", examples=[3]
    )
    repeats: int = Field(
        default=1,
        ge=1,
        le=100,
        description="Runs of each problem per model and arm, 1–100 (at temperature 0 with the cache, "
        "repeats come out identical)",
        examples=[1],
    )
    control_arm: bool = Field(default=False, description="Also one revision with no feedback, judged alike")
    use_cache: bool = Field(
        default=True, description="Answer identical temperature-0 calls from the cache", examples=[True]
    )
    # Upper bounds: a larger number overflowed the database's integer, a 500.
    budget_tokens: int | None = Field(
        default=None,
        ge=1,
        le=MAX_BUDGET_TOKENS,
        description="Stop cleanly once this many tokens are spent",
        examples=[2_000_000],
    )
    budget_usd: float | None = Field(
        default=None,
        ge=0,
        le=MAX_BUDGET_USD,
        description="Stop cleanly once this many US dollars are spent",
        examples=[25.0],
    )


_EXAMPLE_PROGRESS: dict[str, Any] = {
    "status": "paused",
    "stop_reason": "paused by request",
    "items": {"accepted": 14, "exhausted": 5, "error": 1, "running": 4, "queued": 24},
    "total": 48,
    "finished": 20,
    "eta_s": 7.08,
    "waiting": [],
    "input_tokens": 182_400,
    "output_tokens": 21_950,
    "cost_usd": 0.68,
    "latency_s": 96.4,
}
_EXAMPLE_BATCH: dict[str, Any] = {
    "id": "6fd4be5b0c7e4b1f9a2d3c4e5f6a7b8c",
    "dataset_id": "3f2c1d0e9b8a4c7d8e6f5a4b3c2d1e0f",
    "models": ["gpt4o", "qwen-local"],
    "judge_model": "rubric",
    "policy": "default",
    "max_rounds": 3,
    "repeats": 1,
    "control_arm": True,
    "use_cache": True,
    "budget_tokens": 2_000_000,
    "budget_usd": 25.0,
    "created_at": "2026-11-23T09:00:00Z",
    "finished_at": "2026-11-23T09:04:31Z",
    "progress": _EXAMPLE_PROGRESS,
}
_EXAMPLE_ITEM: dict[str, Any] = {
    "id": 1042,
    "run_id": "a056477daa7643fc9bce169ea3018c97",
    "problem_id": "b71e0c2d9a8f4e3b8c1d2e3f4a5b6c7d",
    "dataset_item_id": "fp-07",
    "model": "qwen-local",
    "arm": "loop",
    "repeat": 0,
    "status": "error",
    "outcome": "error",
    "error": "qwen-local @ 10.0.0.5:8000: HTTP 503 APIStatusError: Service Unavailable",
    "failure": {
        "kind": "endpoint",
        "model": "qwen-local",
        "host": "10.0.0.5:8000",
        "status": 503,
        "exception": "APIStatusError",
        "message": "Service Unavailable",
    },
    "stop_reason": "the model under test gave no usable revision: HTTP 503",
    "rounds": 1,
    "final_quality": 0.3917,
    "attempts": 1,
    "input_tokens": 9_120,
    "output_tokens": 1_204,
    "cost_usd": 0.0,
    "latency_s": 14.2,
    "cache_hits": 0,
    "finished_at": "2026-11-23T09:01:12Z",
}
_EXAMPLE_CURSOR = "WyIyMDI2LTExLTIzVDA5OjAwOjAwKzAwOjAwIiwgIjZmZDRiZTViIl0"


class WaitingItems(BaseModel):
    """Pending items a process was handed and left alone, and why."""

    reason: str = Field(
        description="Why, in words: the process and the model its registry lacks",
        examples=["worker-2:4121 has no model 'qwen-local' in its registry"],
    )
    items: int = Field(description="Pending items left alone for this reason", examples=[12])


class BatchProgress(BaseModel):
    """Items by state, what was spent, and an ETA from the rate so far."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_PROGRESS]})

    status: BatchStatus = Field(
        description="queued, running, paused, completed, cancelled or budget_exhausted"
    )
    stop_reason: str | None = Field(description="Why it stopped early (a budget, a cancel), in words")
    items: dict[str, int] = Field(description="Items by status (pending, running, done, failed, cancelled)")
    total: int = Field(description="Items in the batch")
    finished: int = Field(description="Items that ended, whatever their outcome")
    eta_s: float | None = Field(description="Seconds left at the rate so far; null before an item finished")
    waiting: list[WaitingItems] = Field(
        default_factory=list,
        description="Pending items that processes were handed but left alone, by reason (a model no "
        "process that took them up knows); they wait for a process that knows it",
    )
    input_tokens: int = Field(description="Prompt tokens spent so far")
    output_tokens: int = Field(description="Completion tokens spent so far")
    cost_usd: float = Field(description="US dollars spent so far")
    latency_s: float = Field(description="Seconds of LLM calls so far, summed over items")


class BatchPublic(BaseModel):
    """A batch: what it evaluates and how far it got."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_BATCH]})

    id: str = Field(description="Batch id (any unique prefix works in the CLI)")
    dataset_id: str = Field(description="The dataset it evaluates")
    models: list[str] = Field(description="The models under test")
    judge_model: str = Field(description="The model behind the seven judges")
    policy: str = Field(description="The scoring policy")
    max_rounds: int = Field(description="The round limit of each item")
    repeats: int = Field(description="Runs of each problem per model and arm")
    control_arm: bool = Field(
        description="Whether each problem also ran the control arm (one revision without feedback)"
    )
    use_cache: bool = Field(description="Whether identical temperature-0 calls are answered from the cache")
    budget_tokens: int | None = Field(
        description="Stop cleanly once this many tokens are spent; null: no limit"
    )
    budget_usd: float | None = Field(
        description="Stop cleanly once this many US dollars are spent; null: no limit"
    )
    created_at: datetime = Field(description="When it was created (UTC)")
    finished_at: datetime | None = Field(default=None, description="When it ended (UTC); null until then")
    progress: BatchProgress = Field(description="Items by state, spending and an ETA")


class BatchPage(BaseModel):
    """A page of batches; pass ``next_cursor`` as ``cursor`` for the next one."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"items": [_EXAMPLE_BATCH], "next_cursor": _EXAMPLE_CURSOR}]}
    )

    items: list[BatchPublic] = Field(description="Batches, newest first")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page")


# An item is where its run is, in the runs' words (app.models.RunStatus), and ends as a run does
# (agents.outcome.Outcome): one vocabulary. At run time a Literal of its values, so that the schema
# lists them inline in the field, as it always has.
if TYPE_CHECKING:
    ItemOutcome: TypeAlias = Outcome
else:
    ItemOutcome = Literal[tuple(o.value for o in Outcome)]


class BatchItemPublic(BaseModel):
    """One item: a problem under one model, arm and repeat; its outcome and what it cost."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_ITEM]})

    id: int = Field(description="Item id, unique within the batch's database")
    run_id: str | None = Field(
        description="The run executing the item and recording its trace: GET /v1/runs/{run_id} (null until "
        "it is first claimed)"
    )
    problem_id: str = Field(description="The problem it runs (shared by every model, arm and repeat of it)")
    dataset_item_id: str | None = Field(
        default=None,
        description="The problem's id in its dataset (the row's id, e.g. fp-01); null when the row has none",
    )
    model: str = Field(description="The model under test")
    arm: str = Field(description="loop (the feedback loop) or control (one revision without feedback)")
    repeat: int = Field(description="Which repeat of the problem, from 0")
    status: RunStatus = Field(
        description="Where the item is, in its run's words: queued, running, then how it ended (accepted, "
        "screened, exhausted, needs_review, error; cancelled: never started)"
    )
    outcome: ItemOutcome | None = Field(
        description="How it ended: its status once ended; null while queued or running"
    )
    error: str | None = Field(description="For an error: the cause in one line")
    failure: CallFailure | None = Field(
        description="For an error: model, endpoint host, HTTP status, exception"
    )
    stop_reason: str | None = Field(description="Why its run ended, in words")
    rounds: int = Field(description="Versions judged")
    final_quality: float | None = Field(description="Q of the last judged version (0-1)")
    attempts: int = Field(
        description="Times it was claimed (more than 1: a worker was interrupted and it was resumed)"
    )
    input_tokens: int = Field(description="Prompt tokens of every call of the item")
    output_tokens: int = Field(description="Completion tokens of every call of the item")
    cost_usd: float = Field(description="Its cost in US dollars (0 when no prices are configured)")
    latency_s: float = Field(description="Seconds its calls took, summed")
    cache_hits: int = Field(
        description="Replies taken from the response cache instead of the endpoint (0 with the cache off)"
    )
    finished_at: datetime | None = Field(description="When it ended (UTC); null until then")
    warrant: Warrant | None = Field(
        default=None,
        examples=WARRANT_EXAMPLES,
        description="An accepted item's warrant: the validity record its project cites of its panel, or "
        "status none; "
        "null for any other outcome",
    )

    @classmethod
    def of(
        cls, item: BatchItem, result: ItemResult | None, dataset_item_id: str | None = None
    ) -> BatchItemPublic:
        """The public view of a stored item and its result (``item_result.item_results``)."""
        return cls(
            **item.model_dump(
                include={
                    "run_id",
                    "problem_id",
                    "model",
                    "arm",
                    "repeat",
                    "status",
                    "error",
                    "attempts",
                    "input_tokens",
                    "output_tokens",
                    "cost_usd",
                    "latency_s",
                    "finished_at",
                    "cache_hits",
                }
            ),
            id=item.id or 0,
            dataset_item_id=dataset_item_id,
            outcome=item.outcome,
            failure=CallFailure.model_validate(item.failure) if item.failure else None,
            stop_reason=result.stop_reason if result else None,
            rounds=len(result.rounds) if result else 0,
            final_quality=_final_quality(result),
            warrant=result.warrant if result else None,
        )


def _final_quality(result: ItemResult | None) -> float | None:
    """Q of the last judged version; null for an error run (a failure is never a score)."""
    if result is None or not result.rounds or result.metrics is None:
        return None
    return result.rounds[-1].quality


class BatchItemPage(BaseModel):
    """A page of a batch's items; pass ``next_cursor`` as ``cursor`` for the next one."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"items": [_EXAMPLE_ITEM], "next_cursor": "1042"}]}
    )

    items: list[BatchItemPublic] = Field(description="Items in order")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page")


class BatchComparison(BaseModel):
    """One model and arm of a batch against another (of the same batch or another one) on the
    problems both scored: the report's paired comparison, for any two sides."""

    a: str = Field(description="Side A: batch id, then model/arm", examples=["6fd4be5b0c7e · gpt4o/loop"])
    b: str = Field(
        description="Side B: batch id, then model/arm", examples=["91ac2e7d44b0 · qwen-local/loop"]
    )
    problems: int = Field(description="Problems both sides scored (the pairs)", examples=[48])
    pass_rate_a: float | None = Field(
        description="Side A's share of those problems passed (a problem passes when at least half its "
        "scored repeats pass); null without pairs",
        examples=[0.625],
    )
    pass_rate_b: float | None = Field(description="The same for side B", examples=[0.5])
    a_only: int = Field(description="Problems only side A passed", examples=[9])
    b_only: int = Field(description="Problems only side B passed", examples=[3])
    mcnemar_p: float | None = Field(
        description="Exact McNemar p-value of the pass/fail pairs; null without pairs", examples=[0.146]
    )
    delta_avg_quality: float | None = Field(
        description="Mean per-problem difference A − B of the final AvgQualityScore (0-1)", examples=[0.041]
    )
    delta_ci95: list[float] | None = Field(
        description="BCa bootstrap 95% interval of that mean, over problems", examples=[[0.008, 0.077]]
    )
    delta_p: float | None = Field(
        description="Wilcoxon signed-rank p-value of the differences", examples=[0.021]
    )
    pairs: list[list[float]] = Field(
        description="Per problem, side A's and side B's final AvgQualityScore", examples=[[[0.9123, 0.8811]]]
    )


_EXAMPLE_PPI: dict[str, Any] = {"labelled": 20, "unlabelled": 40, "estimate": 0.652, "ci95": [0.561, 0.744]}
_EXAMPLE_CORRECTED_ROW: dict[str, Any] = {
    "model": "gpt4o",
    "arm": "loop",
    "problems": 60,
    "pass_rate": 0.75,
    "corrected": 0.8125,
    "corrected_ci95": [0.689, 0.943],
    "chance": 0.0,
    "could_swap": False,
    "ppi": _EXAMPLE_PPI,
}
_EXAMPLE_CORRECTION: dict[str, Any] = {
    "status": "corrected",
    "reason": None,
    "method": "Rogan–Gladen (θ = (p − f) / (s − f), clipped to [0, 1]); 95 % percentile interval of a "
    "seeded parametric bootstrap (4000 draws) of the batch's passes and the record's two counts, each "
    "drawn from its Agresti–Coull-adjusted share",
    "seed": 0,
    "resamples": 4000,
    "record": {
        "record_id": "3f0c9a1d2b7e4c5f8a6b1c2d3e4f5a6b",
        "false_accepts": 12,
        "flawed": 120,
        "sound_passed": 63,
        "sound": 70,
        "split": "heldout",
        "set": "shipped",
        "set_hash": "17407c95d697",
    },
    "ppi_method": "prediction-powered inference (ppi_py, power-tuned), over items: teachers' labels and "
    "the panel's passes",
    "ppi_min_labels": 10,
    "rows": [_EXAMPLE_CORRECTED_ROW],
}


class PredictionPoweredRate(BaseModel):
    """A prediction-powered estimate of the share of an arm's final versions that are truly sound."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_PPI]})

    labelled: int = Field(description="Scored runs of the arm a teacher decided", examples=[20])
    unlabelled: int = Field(description="Scored runs of the arm no teacher decided", examples=[40])
    estimate: float | None = Field(
        description="PPI's estimate (ppi_py); null with fewer labelled runs than ppi_min_labels",
        examples=[0.652],
    )
    ci95: list[float] | None = Field(
        description="Its 95 % interval; null without an estimate", examples=[[0.561, 0.744]]
    )


class CorrectionRecord(BaseModel):
    """The validity record whose measured error corrects the batch's pass rates."""

    record_id: str = Field(description="The record the batch's acceptances cite", examples=["3f0c9a1d2b7e"])
    false_accepts: int = Field(description="Flawed problems the panel passed (k)", examples=[12])
    flawed: int = Field(description="Flawed problems it was measured on (n)", examples=[120])
    sound_passed: int = Field(description="Sound versions the panel passed", examples=[63])
    sound: int = Field(description="Sound versions it was measured on", examples=[70])
    split: str | None = Field(description="The split the figures are of (heldout)", examples=["heldout"])
    set: str | None = Field(description="The labelled set's name", examples=["shipped"])
    set_hash: str | None = Field(description="The first 12 hex digits of its hash", examples=["17407c95d697"])


class CorrectedRate(BaseModel):
    """One model and arm's pass rate, raw and corrected for the panel's measured error."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_CORRECTED_ROW]})

    model: str = Field(description="The model under test", examples=["gpt4o"])
    arm: str = Field(description="loop or control", examples=["loop"])
    problems: int = Field(description="Problems scored (repeats averaged first)", examples=[60])
    pass_rate: float | None = Field(description="The raw pass rate: the panel's passes", examples=[0.75])
    corrected: float | None = Field(
        description="Rogan–Gladen's share truly sound, clipped to [0, 1]; null without a record or when "
        "the panel is no better than chance",
        examples=[0.8125],
    )
    corrected_ci95: list[float] | None = Field(
        description="Its 95 % interval, carrying the batch's sampling and the record's calibration error "
        "(parametric bootstrap)",
        examples=[[0.689, 0.943]],
    )
    chance: float | None = Field(
        description="Share of bootstrap draws in which the panel looked no better than chance",
        examples=[0.0],
    )
    could_swap: bool | None = Field(
        description="Whether that share is large enough for the correction to reverse an order",
        examples=[False],
    )
    ppi: PredictionPoweredRate | None = Field(
        description="Prediction-powered estimate from teachers' labels on the arm's runs; null: none labelled"
    )


class BatchCorrection(BaseModel):
    """The batch report's ``correction`` section: pass rates corrected for the judges' measured error,
    or why they are not."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_CORRECTION]})

    status: Literal["corrected", "uncorrected"] = Field(description="Whether a record corrects the rates")
    reason: str | None = Field(
        description="Why the figures are uncorrected (no warrant, several records, a screen); null when "
        "corrected",
        examples=["no item passed, so no acceptance carries a warrant to correct by"],
    )
    method: str | None = Field(description="The estimator and interval, in words; null when uncorrected")
    seed: int = Field(description="The bootstrap's seed (the same figures every time)", examples=[0])
    resamples: int = Field(description="Bootstrap draws per interval", examples=[4000])
    record: CorrectionRecord | None = Field(description="The record corrected by; null when uncorrected")
    ppi_method: str = Field(description="How prediction-powered estimates are computed")
    ppi_min_labels: int = Field(description="Labelled runs an arm needs for a PPI estimate", examples=[10])
    rows: list[CorrectedRate] = Field(description="Each model and arm's pass rate, raw and corrected")


class CorrectedComparison(BaseModel):
    """A paired comparison's pass rates corrected, and whether it is decisive once they are."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "a": 0.8125,
                    "a_ci95": [0.689, 0.943],
                    "b": 0.1875,
                    "b_ci95": [0.071, 0.321],
                    "decisive": True,
                    "verdict": "decisive: gpt4o/loop's corrected interval lies wholly above the other's",
                }
            ]
        }
    )

    a: float | None = Field(description="Side A's corrected pass rate", examples=[0.8125])
    a_ci95: list[float] = Field(description="Its 95 % interval", examples=[[0.689, 0.943]])
    b: float | None = Field(description="Side B's corrected pass rate", examples=[0.1875])
    b_ci95: list[float] = Field(description="Its 95 % interval", examples=[[0.071, 0.321]])
    decisive: bool = Field(
        description="False when the corrected intervals overlap, or when the panel may be no better than "
        "chance (the correction could swap the order)",
        examples=[True],
    )
    verdict: str = Field(
        description="The same, in words", examples=["not decisive: the corrected intervals overlap"]
    )


class BatchReport(BaseModel):
    """GET /v1/batches/{id}/report as JSON. Only the sections on the judges' error are typed here;
    the others (rows, comparisons' raw figures, agreement, by_flaw, teachers, manifest) are described
    in docs/reference/scoring.md and docs/report-terms.md."""

    model_config = ConfigDict(
        extra="allow", json_schema_extra={"examples": [{"correction": _EXAMPLE_CORRECTION}]}
    )

    correction: BatchCorrection | None = Field(
        default=None,
        description="Each arm's pass rate raw and corrected for the panel's measured false-accept rate and "
        "specificity (null in reports stored before it existed)",
    )
