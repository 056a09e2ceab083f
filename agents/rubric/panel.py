"""The offline panel: deterministic judges built on the checks, and a reviser that repairs them."""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib import resources

from agents.judges import JudgeRequest
from agents.reviser import RevisionRequest, ThinkingSink
from agents.rubric.analysis import ProblemFacts
from agents.rubric.checks import CHECKS, FIVE_KEYS, CheckResult, run_checks
from agents.rubric.repairs import repair
from agents.schemas import (
    HOLISTIC,
    JUDGES,
    FiveKeys,
    HolisticVerdict,
    JudgeOutcome,
    JudgeVerdict,
    Problem,
    RevisionOutcome,
)

RUBRIC_MODEL = "rubric"
_CHECK_ID = re.compile(r"\[(\w+)\]")


@cache
def rubric_version() -> str:
    """A hash of the rubric's source: the offline panel's 'prompt version'."""
    digest = hashlib.sha256()
    for name in ("analysis.py", "checks.py", "repairs.py", "arithmetic.py"):
        digest.update(resources.files(__package__).joinpath(name).read_bytes())
    return f"rubric@{digest.hexdigest()[:12]}"


def facts_of(problem: Problem | None) -> ProblemFacts | None:
    """Analyse a problem version (None stays None)."""
    return ProblemFacts(problem.question, problem.solution) if problem else None


def verdict_from(results: list[CheckResult]) -> JudgeVerdict:
    """Score = share of applicable checks passed; confidence grows with how many applied."""
    applicable = [r for r in results if r.ok is not None]
    passed = [r for r in applicable if r.ok]
    score = round(100 * len(passed) / len(applicable)) if applicable else 50
    confidence = round(60 + 35 * len(applicable) / len(results))
    failed = [f"[{r.check}] {r.advice}" for r in applicable if not r.ok]
    rationale = ("Failed: " + " ".join(failed)) if failed else "All applicable checks pass."
    if passed:
        rationale += " Passed: " + ", ".join(r.check for r in passed) + "."
    return JudgeVerdict(score=score, confidence=confidence, rationale=rationale)


class RubricJudge:
    """A deterministic judge: verifiable checks instead of a language model."""

    async def assess(self, request: JudgeRequest) -> JudgeOutcome:
        """Run this judge's checks on the version, against its reference."""
        facts, reference = facts_of(request.problem), facts_of(request.reference)
        assert facts is not None
        results = run_checks(request.judge, facts, reference)
        verdict: JudgeVerdict = verdict_from(results)
        if request.judge == HOLISTIC:
            verdict = _holistic(verdict, results, facts, reference)
        return JudgeOutcome(
            judge=request.judge,
            round=request.round,
            verdict=verdict,
            raw_outputs=[verdict.model_dump_json()],
            model=RUBRIC_MODEL,
            prompt_version=rubric_version(),
        )


def _holistic(
    base: JudgeVerdict, results: list[CheckResult], facts: ProblemFacts, ref: ProblemFacts | None
) -> HolisticVerdict:
    by_name = {r.check: r for r in results}
    keys = FiveKeys(**{k: "ok" if by_name[k].ok else by_name[k].advice for k in FIVE_KEYS})
    advice: list[str] = []
    for judge in JUDGES:
        for result in run_checks(judge, facts, ref):
            text = f"[{result.check}] {result.advice}"
            if result.ok is False and text not in advice:
                advice.append(text)
    return HolisticVerdict(**base.model_dump(), five_keys=keys, suggestions=advice[:8])


class RubricReviser:
    """Repairs the defects the panel reported, narrating each step as its think-aloud."""

    async def revise(self, request: RevisionRequest, on_thinking: ThinkingSink) -> RevisionOutcome:
        """Apply every known repair for the reported checks; unknown defects are left as they are."""
        reported = _reported_checks(request)
        lines = [f"The panel reported: {', '.join(sorted(reported)) or 'nothing specific'}."]
        problem, notes = repair(request.current, reported)
        lines += notes or ["I know no deterministic repair for these findings; I keep the text."]
        thinking = ""
        for line in lines:
            on_thinking(line + "\n")
            thinking += line + "\n"
        return RevisionOutcome(
            round=request.round,
            problem=problem,
            thinking=thinking,
            raw_outputs=[problem.model_dump_json()],
            model=RUBRIC_MODEL,
            prompt_version=rubric_version(),
        )

    async def revise_unaided(self, problem: Problem, on_thinking: ThinkingSink) -> RevisionOutcome:
        """Blind, the offline reviser can do nothing: every repair it knows answers one of the
        panel's findings, and it is given none (nor may it run the panel's checks itself). It says
        so and returns the problem unchanged, so the offline control arm judges the original."""
        thinking = (
            "I have no feedback, and every repair I know answers a finding of the panel, so I cannot "
            "tell what to change. I return the problem unchanged.\n"
        )
        on_thinking(thinking)
        return RevisionOutcome(
            round=0,
            problem=problem,
            thinking=thinking,
            raw_outputs=[problem.model_dump_json()],
            model=RUBRIC_MODEL,
            prompt_version=rubric_version(),
        )


def _reported_checks(request: RevisionRequest) -> set[str]:
    """Check ids named in failing findings; with free-text feedback, the rubric's own findings."""
    texts = [f.rationale for f in request.findings if not f.passed] + list(request.suggestions)
    ids = {m for text in texts for m in _CHECK_ID.findall(text)}
    known = {c.name for checks in CHECKS.values() for c in checks}
    if ids & known:
        return ids & known
    facts = ProblemFacts(request.current.question, request.current.solution)
    reference = facts_of(request.original)
    return {r.check for judge in JUDGES for r in run_checks(judge, facts, reference) if r.ok is False}
