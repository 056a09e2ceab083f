"""A revision must revise (issue 53, item 2), and an error run always names its failure (item 8).

The simulator is the panel and the model under test: the judges split 3–4 with confidence 95 (the
split that, persisting after a revision, sends a run to review), and the reviser is scripted. A reply
that is no revision is a failed attempt of the model under test: asked again (its parse_retries),
then the run ends ``exhausted`` with the cause, never ``needs_review``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agents.schemas import Problem
from agents.simulator import Rule, SimulatorServer
from graphs.context import RunContext
from graphs.events import RevisionProposed, RunEvent
from graphs.revising import NOT_REVISED
from tests.helpers.driving import drive
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]
Ctx = Callable[..., RunContext]
PROPORTION = (
    "The solution treats the playing time as inversely proportional to the number of musicians, but "
    "a symphony lasts as long however many play it."
)
# Each Bloom judge's own finding (seven judges asked seven questions write seven rationales).
FINDINGS = {
    "Remember": "The question states its numbers plainly and asks for one quantity.",
    "Understand": "A reader can follow the story and sees what is asked.",
    "Apply": "The arithmetic 40 × 120 / 60 = 80 is carried out without a slip.",
    "Analyze": PROPORTION,
    "Evaluate": "The answer of 80 minutes cannot be right for a piece of fixed length.",
    "Create": "Changing the orchestra's size should not change how long the music lasts.",
}
PASSES = ("Remember", "Understand", "Apply")


def split_panel(reviser: dict[str, str], times: int | None = None) -> list[Rule]:
    """Judges split 3–4 (Remember, Understand and Apply pass; ``times``: for that many rounds), and
    the reviser replies ``reviser``."""
    judges = [
        Rule(
            role=f"Judge: {level}",
            json={
                "own_answer": "40 minutes",
                "rationale": text,
                "score": 100 if level in PASSES else 5,
                "confidence": 95,
            },
            times=times,
        )
        for level, text in FINDINGS.items()
    ]
    # the solver finds 40 minutes: the loop's evidence against the stated 80
    return [Rule(role="Reviser", json=reviser), Rule(role="^Solver", answer="40 minutes"), *judges]


def revision(question: str, solution: str) -> dict[str, str]:
    return {"thinking": "I revise the problem.", "question": question, "solution": solution}


def reviser_payloads(server: SimulatorServer) -> list[dict[str, Any]]:
    """What each reviser request was given (its fenced JSON)."""
    bodies = [r.body for r in server.state.requests if r.role == "Reviser"]
    texts = [body["messages"][-1]["content"] for body in bodies]
    return [json.loads(t.split("```json\n", 1)[1].rsplit("\n```", 1)[0]) for t in texts]


async def run(context: RunContext, problem: Problem = ORCHESTRA) -> tuple[Any, list[RunEvent]]:
    events: list[RunEvent] = []
    result = await drive(problem, context, on_event=events.append)
    return result, events


ECHO = revision(ORCHESTRA.question.replace("takes 40", "take 40"), ORCHESTRA.solution)


async def test_an_echoing_reviser_ends_exhausted_with_its_cause_not_in_review(
    sim: Sim, llm_context: Ctx
) -> None:
    server = sim(split_panel(ECHO), default_confidence=95, default_score=5)
    result, events = await run(llm_context())
    assert result.outcome == "exhausted", result.stop_reason
    assert result.stop_reason.startswith(f"{NOT_REVISED} (3 attempt(s)): it ")  # parse_retries 2: 3 asks
    assert "kept every given and every computation" in result.stop_reason  # the solver disagreed
    assert len(result.rounds) == 1 and result.final == ORCHESTRA  # no refused reply is ever judged
    payloads = reviser_payloads(server)
    assert len(payloads) == 3 and "rejected_attempts" not in payloads[0]
    assert [len(p["rejected_attempts"]) for p in payloads[1:]] == [1, 2]  # told why, each time
    (proposed,) = [e for e in events if isinstance(e, RevisionProposed)]
    assert len(proposed.not_revised) == 3 and proposed.note and proposed.note.startswith(NOT_REVISED)
    (stored,) = result.revisions
    assert len(stored.raw_outputs) == 3 and stored.usage.calls == 3  # every attempt is accounted
    assert result.scored and result.metrics is not None and not result.metrics["passed"]


async def test_an_echo_of_a_version_the_loop_found_no_error_in_is_unnamed_wording(
    sim: Sim, llm_context: Ctx
) -> None:
    rules = split_panel(ECHO)
    rules[1] = Rule(role="^Solver", answer="80 minutes")  # the solver agrees: no evidence against it
    sim(rules, default_confidence=95, default_score=5)
    result, _ = await run(llm_context())
    assert result.outcome == "exhausted", result.stop_reason
    assert "it changed only wording no judge's finding names ('takes' → 'take')" in result.stop_reason


async def test_a_reviser_that_pastes_the_feedback_into_the_solution_ends_exhausted(
    sim: Sim, llm_context: Ctx
) -> None:
    pasted = revision(ORCHESTRA.question, f"{ORCHESTRA.solution} {PROPORTION}")
    sim(split_panel(pasted), default_confidence=95, default_score=5)
    result, _ = await run(llm_context())
    assert result.outcome == "exhausted", result.stop_reason
    assert result.stop_reason.startswith(NOT_REVISED)
    assert "it pasted the panel's feedback into the problem ('the solution treats the playing time" in (
        result.stop_reason
    )


async def test_a_genuine_revision_is_not_flagged(sim: Sim, llm_context: Ctx) -> None:
    fixed = revision(
        ORCHESTRA.question,
        "The playing time does not depend on the number of musicians, so 60 musicians also take 40 minutes.",
    )
    # round 1 split as above, the solver disagreeing with 80 minutes; then every judge passes
    rules = split_panel(fixed, times=1)
    rules[1] = Rule(role="^Solver", answer="40 minutes")
    sim([*rules, Rule(role="^Judge", score=95)], default_confidence=95)
    result, events = await run(llm_context())
    assert result.outcome == "accepted", result.stop_reason
    assert len(result.rounds) == 2 and result.revisions[0].not_revised == []
    (proposed,) = [e for e in events if isinstance(e, RevisionProposed)]
    assert proposed.note is None and proposed.not_revised == []


async def test_an_error_run_with_no_usable_verdict_has_its_failure_set(sim: Sim, llm_context: Ctx) -> None:
    # every judge answers, and every one writes the same rationale: no call failed, no verdict is usable
    same = {"own_answer": "80 minutes", "rationale": "It is fine.", "score": 90, "confidence": 90}
    keys = dict.fromkeys(
        ("concepts", "prerequisites", "representations", "alternative_values", "narrative"), ""
    )
    holistic = same | {"five_keys": keys, "suggestions": []}
    sim([Rule(role="Five Keys", json=holistic), Rule(role="^Judge", json=same)])
    result, _ = await run(llm_context())
    assert result.outcome == "error" and result.stop_reason.startswith("the panel gave no usable verdict")
    assert result.failure is not None, "an error run always names its failure"
    assert (result.failure.kind, result.failure.exception) == ("malformed", "NoUsableVerdict")
    assert result.failure.model == "sim" and "no usable verdict" in result.failure.message
