"""What a batch would spend, before it runs: calls, prompt and completion tokens, and cost, from the
panel's real prompts rendered for each problem and the models file's prices. Nothing is called or
stored.

Assumptions (printed with every estimate):
- tokens are characters ÷ ``CHARS_PER_TOKEN`` (the ratio the simulator bills by, and OpenAI's rule
  of thumb for English);
- a looped item runs a mid estimate of ``(1 + max_rounds) / 2`` rounds (``bound``: ``max_rounds``);
  each round is seven judges and a solver on the judge model, and each round after the first one
  revision on the model under test; a control item is one revision and one judged round;
- a reply is ``COMPLETION_SHARE`` of its kind's ``max_tokens`` (``bound``: all of it);
- no prompt cache discount is assumed (cached tokens 0), and no response-cache hit;
- except for items measured before: an earlier item of the same problem, model, arm, judge model
  and max_rounds whose calls were all made counts with its stored tokens and cost, exactly;
- and where earlier items of the same model, arm, judge model and max_rounds were measured on other
  problems, the assumptions are scaled by what those items spent against what the estimate would
  have assumed for them (calls, prompt and completion tokens, cost; their cached share of the
  prompt tokens): the rounds a model takes and the length of its replies are learnt, not guessed;
- learnt apart for problems whose stated solution the verifier finds wrong and for the others,
  when items of both kinds were measured: the loop's verification gate sends a version with a
  verified error back for revision whatever its judges say, so those items take more rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.schemas import JUDGES, Problem
from agents.verify.verifier import verify
from app.access.estimate import CHARS_PER_TOKEN
from app.access.estimate import judge_chars as _judge_chars
from app.access.estimate import reviser_chars as _reviser_chars
from app.access.estimate import solver_chars as _solver_chars

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from agents.llm.models import ModelRegistry, ModelSpec
    from app.batches.estimate_history import ItemKey, Kind, Measured
    from app.batches.service import BatchSpec

COMPLETION_SHARE = 0.25


@dataclass
class Spend:
    """Calls, tokens and cost (None: a model without a price)."""

    calls: float = 0.0
    input_tokens: float = 0.0
    cached_input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost_usd: float | None = 0.0

    def add(
        self, spec: ModelSpec | None, calls: float, prompt_chars: float, max_tokens: int, share: float
    ) -> None:
        """Add ``calls`` calls of one kind to ``spec`` (None: the offline panel, free)."""
        if spec is None:
            return
        input_tokens = calls * prompt_chars / CHARS_PER_TOKEN
        output_tokens = calls * max_tokens * share
        self.calls += calls
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if spec.price is None:
            self.cost_usd = None
        elif self.cost_usd is not None:
            self.cost_usd += spec.price.cost(round(input_tokens), round(output_tokens))

    def measured(self, seen: Measured, times: int) -> None:
        """Add an earlier item's measured spend, ``times`` over."""
        self.calls += seen.calls * times
        self.input_tokens += seen.input_tokens * times
        self.cached_input_tokens += seen.cached_input_tokens * times
        self.output_tokens += seen.output_tokens * times
        if self.cost_usd is not None:
            self.cost_usd += seen.cost_usd * times

    def scaled(self, by: Scale) -> Spend:
        """This spend scaled by what similar measured items spent against their assumed spend."""
        input_tokens = self.input_tokens * by.input_tokens
        cost = None if self.cost_usd is None else self.cost_usd * by.cost_usd
        return Spend(
            self.calls * by.calls,
            input_tokens,
            input_tokens * by.cached_share,
            self.output_tokens * by.output_tokens,
            cost,
        )

    def as_dict(self) -> dict[str, Any]:
        """Rounded figures."""
        cost = round(self.cost_usd, 6) if self.cost_usd is not None else None
        return {
            "calls": round(self.calls),
            "input_tokens": round(self.input_tokens),
            "cached_input_tokens": round(self.cached_input_tokens),
            "output_tokens": round(self.output_tokens),
            "cost_usd": cost,
        }


@dataclass(frozen=True)
class Scale:
    """Measured ÷ assumed spend of ``items`` similar items, per figure (1: nothing learnt)."""

    items: int
    calls: float = 1.0
    input_tokens: float = 1.0
    output_tokens: float = 1.0
    cost_usd: float = 1.0
    cached_share: float = 0.0

    @classmethod
    def of(cls, assumed: Spend, spent: Spend, items: int) -> Scale:
        """The ratios, each kept at 1 where the assumption was zero (nothing to scale)."""

        def ratio(measured: float, guessed: float) -> float:
            return measured / guessed if guessed > 0 else 1.0

        cost = ratio(spent.cost_usd or 0.0, assumed.cost_usd or 0.0)
        return cls(
            items,
            ratio(spent.calls, assumed.calls),
            ratio(spent.input_tokens, assumed.input_tokens),
            ratio(spent.output_tokens, assumed.output_tokens),
            cost,
            spent.cached_input_tokens / spent.input_tokens if spent.input_tokens > 0 else 0.0,
        )


def estimate(
    problems: list[tuple[str, Problem]],
    spec: dict[str, Any],
    registry: ModelRegistry,
    history: dict[ItemKey, Measured] | None = None,
    *,
    bound: bool = False,
    similar: dict[Kind, list[tuple[Problem, Measured]]] | None = None,
) -> dict[str, Any]:
    """The batch's expected spend per model (mid estimate; ``bound``: its upper bound). ``problems``
    are (content hash, problem); an item ``history`` has measured is counted as measured; the mid
    estimate of the others is scaled by what ``similar`` items of their model and arm spent."""
    judge = registry.get(spec["judge_model"])
    max_rounds, repeats = int(spec["max_rounds"]), int(spec["repeats"])
    rounds = float(max_rounds) if bound else (1 + max_rounds) / 2
    share = 1.0 if bound else COMPLETION_SHARE
    arms = {"loop": (rounds, rounds - 1)} | ({"control": (1.0, 1.0)} if spec.get("control_arm") else {})
    rows: dict[str, dict[str, Any]] = {}
    total, known, learnt = Spend(), 0, 0
    scales: dict[Kind, Scale] = {}
    split: dict[Kind, dict[bool, Scale]] = {}
    wrong = _Wrong()
    for name in spec["models"]:
        reviser = registry.get(name)
        spent = Spend()
        for arm, (judged, revised) in arms.items():
            samples = [] if bound else (similar or {}).get((name, arm), [])
            scale = _scale(samples, judge, reviser, judged, revised, share)
            if scale is not None:
                scales[(name, arm)] = scale
            kinds = {
                kind: _scale(
                    [s for s in samples if wrong(s[0]) is kind], judge, reviser, judged, revised, share
                )
                for kind in (True, False)
            }
            apart = {kind: one for kind, one in kinds.items() if one is not None}
            if len(apart) == 2:  # both kinds measured: each scales its own
                split[(name, arm)] = apart
            for content_hash, problem in problems:
                seen = (history or {}).get((content_hash, name, arm))
                if seen is not None:
                    spent.measured(seen, repeats)
                    known += repeats
                    continue
                one = Spend()
                _item(one, judge, reviser, problem, judged * repeats, revised * repeats, share)
                by = split[(name, arm)][wrong(problem)] if (name, arm) in split else scale
                _sum_into(spent, one if by is None else one.scaled(by))
                learnt += repeats if by is not None else 0
        rows[name] = spent.as_dict()
        _sum_into(total, spent)
    return {
        "basis": "bound" if bound else "mid",
        "assumptions": assumptions(max_rounds, rounds, share) + _learnt(scales) + _apart(split),
        "items": len(problems) * len(spec["models"]) * repeats * len(arms),
        "measured_items": known,
        "scaled_items": learnt,
        "models": rows,
        "total": total.as_dict(),
    }


def _scale(
    samples: list[tuple[Problem, Measured]],
    judge: ModelSpec | None,
    reviser: ModelSpec | None,
    judged: float,
    revised: float,
    share: float,
) -> Scale | None:
    """What ``samples`` spent against what this estimate would have assumed for them (None: none)."""
    if not samples or (judge is None and reviser is None):
        return None
    assumed, spent = Spend(), Spend()
    for problem, seen in samples:
        _item(assumed, judge, reviser, problem, judged, revised, share)
        spent.measured(seen, 1)
    return Scale.of(assumed, spent, len(samples))


def _learnt(scales: dict[Kind, Scale]) -> list[str]:
    """One assumption line per (model, arm) whose estimate similar measured items scaled."""
    return [
        f"{model} ({arm}): scaled by {s.items} similar measured item(s): calls ×{s.calls:.2f}, "
        f"prompt tokens ×{s.input_tokens:.2f}, completion tokens ×{s.output_tokens:.2f}"
        for (model, arm), s in scales.items()
    ]


class _Wrong:
    """Whether the verifier finds a problem's stated solution wrong (what the loop's gate reads
    before any judge), worked out once per problem."""

    def __init__(self) -> None:
        self.seen: dict[Problem, bool] = {}

    def __call__(self, problem: Problem) -> bool:
        if problem not in self.seen:
            self.seen[problem] = bool(verify(problem.solution, problem.question).errors)
        return self.seen[problem]


def _apart(split: dict[Kind, dict[bool, Scale]]) -> list[str]:
    """One assumption line per (model, arm) whose similar items were learnt from in two kinds."""
    return [
        f"{model} ({arm}): problems whose stated solution the verifier finds wrong scaled by their "
        f"{by[True].items} similar item(s) (calls ×{by[True].calls:.2f}), the others by their "
        f"{by[False].items} (calls ×{by[False].calls:.2f})"
        for (model, arm), by in split.items()
    ]


def _sum_into(total: Spend, spent: Spend) -> None:
    total.calls += spent.calls
    total.input_tokens += spent.input_tokens
    total.output_tokens += spent.output_tokens
    total.cached_input_tokens += spent.cached_input_tokens
    if total.cost_usd is not None and spent.cost_usd is not None:
        total.cost_usd += spent.cost_usd
    else:
        total.cost_usd = None


def _item(
    spent: Spend,
    judge: ModelSpec | None,
    reviser: ModelSpec | None,
    problem: Problem,
    judged: float,
    revised: float,
    share: float,
) -> None:
    if judge is not None:
        spent.add(judge, judged * len(JUDGES), _judge_chars(problem), judge.max_tokens.judge, share)
        spent.add(judge, judged, _solver_chars(problem), judge.max_tokens.solver, share)
    if reviser is not None:
        spent.add(reviser, revised, _reviser_chars(problem), reviser.max_tokens.reviser, share)


def assumptions(max_rounds: int, rounds: float, share: float) -> list[str]:
    """The estimate's assumptions, in words."""
    return [
        f"tokens = characters / {CHARS_PER_TOKEN} of the panel's prompts rendered for each problem",
        f"rounds per looped item: {rounds:g} (max_rounds {max_rounds} is the upper bound)",
        f"a reply is {share:.0%} of its kind's max_tokens",
        "no prompt-cache discount and no response-cache hit assumed, unless similar items measured one",
        "an item measured before (same problem, model, arm, judge model, max_rounds) counts as measured",
    ]


async def estimate_batch(session: AsyncSession, spec: BatchSpec, registry: ModelRegistry) -> dict[str, Any]:
    """The mid estimate of a batch over a stored dataset, with the project's measured items."""
    from app.batches.estimate_history import dataset_problems, measured, similar

    problems = await dataset_problems(session, spec.dataset_id)
    hashes = [h for h, _ in problems]
    kind = (spec.models, spec.judge_model, spec.max_rounds, spec.project_id)
    history = await measured(session, hashes, *kind)
    like = await similar(session, *kind)
    return estimate(problems, dict(spec.__dict__), registry, history, similar=like)
