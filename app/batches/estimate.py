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
  and max_rounds whose calls were all made counts with its stored tokens and cost, exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.schemas import JUDGES, Problem
from app.access.estimate import CHARS_PER_TOKEN
from app.access.estimate import judge_chars as _judge_chars
from app.access.estimate import reviser_chars as _reviser_chars
from app.access.estimate import solver_chars as _solver_chars

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from agents.models import ModelRegistry, ModelSpec
    from app.batches.estimate_history import ItemKey, Measured
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


def estimate(
    problems: list[tuple[str, Problem]],
    spec: dict[str, Any],
    registry: ModelRegistry,
    history: dict[ItemKey, Measured] | None = None,
    *,
    bound: bool = False,
) -> dict[str, Any]:
    """The batch's expected spend per model (mid estimate; ``bound``: its upper bound). ``problems``
    are (content hash, problem); an item ``history`` has measured is counted as measured."""
    judge = registry.get(spec["judge_model"])
    max_rounds, repeats = int(spec["max_rounds"]), int(spec["repeats"])
    rounds = float(max_rounds) if bound else (1 + max_rounds) / 2
    share = 1.0 if bound else COMPLETION_SHARE
    arms = {"loop": (rounds, rounds - 1)} | ({"control": (1.0, 1.0)} if spec.get("control_arm") else {})
    rows: dict[str, dict[str, Any]] = {}
    total, known = Spend(), 0
    for name in spec["models"]:
        reviser = registry.get(name)
        spent = Spend()
        for content_hash, problem in problems:
            for arm, (judged, revised) in arms.items():
                seen = (history or {}).get((content_hash, name, arm))
                if seen is not None:
                    spent.measured(seen, repeats)
                    known += repeats
                else:
                    _item(spent, judge, reviser, problem, judged * repeats, revised * repeats, share)
        rows[name] = spent.as_dict()
        _sum_into(total, spent)
    return {
        "basis": "bound" if bound else "mid",
        "assumptions": assumptions(max_rounds, rounds, share),
        "items": len(problems) * len(spec["models"]) * repeats * len(arms),
        "measured_items": known,
        "models": rows,
        "total": total.as_dict(),
    }


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
        "no prompt-cache discount and no response-cache hit assumed",
        "an item measured before (same problem, model, arm, judge model, max_rounds) counts as measured",
    ]


async def estimate_batch(session: AsyncSession, spec: BatchSpec, registry: ModelRegistry) -> dict[str, Any]:
    """The mid estimate of a batch over a stored dataset, with the project's measured items."""
    from app.batches.estimate_history import dataset_problems, measured

    problems = await dataset_problems(session, spec.dataset_id)
    hashes = [h for h, _ in problems]
    history = await measured(session, hashes, spec.models, spec.judge_model, spec.max_rounds, spec.project_id)
    return estimate(problems, dict(spec.__dict__), registry, history)
