"""What one step of model work is estimated to spend, before it is made: the reservation a daily
cap is checked against (``app.access.reserve``), and the prompt sizes a batch's estimate is built on.

A step is one round of a run: seven judges and a solver on the judge model, and one revision on the
model under test (a bench's version is a round without the revision). Each call is counted at its
prompt's characters ÷ ``CHARS_PER_TOKEN`` in (the ratio the simulator bills by, and OpenAI's rule of
thumb for English) and its kind's whole ``max_tokens`` out (the most a reply may bill), priced with
the models file's prices (no price: no cost). The offline panel's calls are free.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents.fencing import fence
from agents.judges import JudgeRequest, judge_messages
from agents.llm.models import ModelRegistry, ModelSpec
from agents.schemas import JUDGES, Problem
from agents.solver import solver_payload
from app.access.reserve import Amount
from prompts import load_prompt

CHARS_PER_TOKEN = 4
# What the reviser reads beyond the problem twice over: seven judges' findings, roughly.
FEEDBACK_CHARS = 7 * 240
StepEstimate = Callable[[Problem], Amount]


def _chars(messages: list[Any]) -> int:
    return sum(len(str(m.content)) for m in messages)


def judge_chars(problem: Problem) -> float:
    """The mean length of the seven judges' prompts for this problem (compared with itself)."""
    total = 0
    for judge in JUDGES:
        request = JudgeRequest(judge=judge, round=1, problem=problem, reference=problem)
        total += _chars(judge_messages(request, load_prompt(f"judge_{judge}")))
    return total / len(JUDGES)


def solver_chars(problem: Problem) -> int:
    """The length of the solver's prompt for this problem."""
    return len(load_prompt("solver").text) + len(fence(solver_payload(problem)))


def reviser_chars(problem: Problem) -> int:
    """The length of a reviser's prompt for this problem, with the judges' findings."""
    data = 2 * (len(problem.question) + len(problem.solution)) + FEEDBACK_CHARS
    return len(load_prompt("reviser").text) + data


def _calls(spec: ModelSpec | None, calls: int, prompt_chars: float, max_tokens: int) -> Amount:
    if spec is None:  # the offline panel
        return Amount()
    input_tokens = round(calls * prompt_chars / CHARS_PER_TOKEN)
    output_tokens = calls * max_tokens
    cost = spec.price.cost(input_tokens, output_tokens) if spec.price is not None else 0.0
    return Amount(input_tokens + output_tokens, cost)


def step_estimate(
    registry: ModelRegistry, judge_model: str, model: str, *, revised: bool = True, solved: bool = True
) -> StepEstimate:
    """One step's estimate of a problem, on these models (``revised``: with the revision;
    ``solved``: with the solver's call; a stronger panel escalated to makes neither)."""
    judge, reviser = registry.get(judge_model), registry.get(model)

    def estimate(problem: Problem) -> Amount:
        parts = [
            _calls(judge, len(JUDGES), judge_chars(problem), judge.max_tokens.judge if judge else 0),
        ]
        if solved:
            parts.append(_calls(judge, 1, solver_chars(problem), judge.max_tokens.solver if judge else 0))
        if revised:
            parts.append(
                _calls(reviser, 1, reviser_chars(problem), reviser.max_tokens.reviser if reviser else 0)
            )
        return Amount(sum(p.tokens for p in parts), sum(p.cost_usd for p in parts))

    return estimate
