"""The offline panel: its scores for a problem, the labelled set, and the items it is known to miss."""

from __future__ import annotations

from pathlib import Path

from agents.judges import JudgeRequest
from agents.rubric.panel import RubricJudge
from agents.schemas import JUDGES, JudgeName, Problem

SET = Path(__file__).parents[2] / "app" / "samples" / "validity" / "problems.jsonl"


async def scores(problem: Problem, reference: Problem | None = None) -> dict[JudgeName, int]:
    out = {}
    for judge in JUDGES:
        outcome = await RubricJudge().assess(JudgeRequest(judge, 1, problem, reference or problem))
        assert outcome.verdict is not None
        out[judge] = outcome.verdict.score
    return out


# Flawed tune items the rubric is known to pass, and why (a deterministic check cannot reach them).
KNOWN_MISSES = {
    "irrel-03": "adds the cinema's staff to its tickets: only world knowledge says staff take no seats",
    "A-irr-03": "takes the 6 lettuces rabbits ate from the carrots: subtracting a number of other things "
    "is right elsewhere (a cinema's 350 tickets taken from its seats), so only knowing that lettuces are "
    "not carrots tells",
    "B-irr-04": "subtracts an account's €100 minimum deposit from the €1,500 deposited: taking a limit "
    "from an amount is right elsewhere (how much more a lift rated 600 kg can carry), so only knowing "
    "what a minimum deposit is tells",
    # written on 2026-11-25 by two writers who never saw the panel
    "h3a-ir-04": "multiplies a song's length by its 3 verses although its 96 bars are the whole song: only "
    "the sentence's meaning says the bars are a total",
    "h3b-op-04": "multiplies distance by speed written in powers of ten, (1.5 × 10^8) × (3 × 10^5): the "
    "numbers are read, but the unit steps skip a clause with brackets, so the operation is never checked",
    "h4c-am-03": "answers litres per 100 km where km per litre is asked: both are rates of the same two "
    "units, and the answer's own unit is not compared with the asked one",
    "h4c-fp-03": "triples a taxi fare that holds a fixed fee: only knowing that the fee is paid once tells",
    "h4c-ir-01": "takes 60 new books out of a total said to hold them already: only reading 'already "
    "counted' tells",
    "h4c-md-03": "invents a monthly fee of $15: it is what the sum 15 + 17 = 32 needs, so the number looks "
    "worked out rather than supplied",
    "h4c-wo-01": "adds 4 and −7 for a fall in temperature: adding a negative is a subtraction elsewhere, "
    "and the sign of the answer is what gives it away",
    "h4d-id-02": "takes a coupon for the next visit off today's bill: only reading 'next visit' tells",
}
