"""The offline panel: deterministic judges built on the checks, and a reviser that repairs them."""

from __future__ import annotations

import hashlib
import re
from functools import cache, lru_cache
from importlib import resources

from agents.judges import JudgeRequest
from agents.reviser import RevisionRequest, ThinkingSink
from agents.rubric.checks import CHECKS, CheckResult, run_checks
from agents.rubric.facts import ProblemFacts
from agents.rubric.repairs import repair
from agents.schemas import (
    HOLISTIC,
    JUDGES,
    FiveKeys,
    HolisticReply,
    JudgeReply,
    JudgeResult,
    Problem,
    RevisionResult,
)

RUBRIC_MODEL = "rubric"
_CHECK_ID = re.compile(r"\[(\w+)\]")


@cache
def rubric_version() -> str:
    """A hash of the rubric's source: the offline panel's 'prompt version'."""
    digest = hashlib.sha256()
    # Every module of both packages, so that a new detector module changes the version by itself.
    for package in (__package__, f"{__package__}.rules", "agents.verify"):
        for source in sorted(resources.files(package).iterdir(), key=lambda entry: entry.name):
            if source.name.endswith(".py"):
                digest.update(source.read_bytes())
    return f"rubric@{digest.hexdigest()[:12]}"


def facts_of(problem: Problem | None) -> ProblemFacts | None:
    """Analyse a problem version (None stays None): one analysis per version, shared by the seven
    judges (and by the holistic judge's second look), as its facts depend on nothing else."""
    return _facts(problem.question, problem.solution) if problem else None


@lru_cache(maxsize=256)
def _facts(question: str, solution: str) -> ProblemFacts:
    return ProblemFacts(question, solution)


def verdict_from(results: list[CheckResult]) -> JudgeReply:
    """A flaw found: score 20 (confident). Only style checks failed: 70. All pass: 100.

    A detected flaw must stop the version whatever the other judges say, so its score is far below
    the pass mark (the agreement term then sees a strong dissent), never a share of checks passed.
    """
    applicable = [r for r in results if r.ok is not None]
    flaws = [r for r in applicable if not r.ok and r.severity == "flaw"]
    style = [r for r in applicable if not r.ok and r.severity == "style"]
    if flaws:
        score, confidence = 20, 90
    elif style:
        score, confidence = 70, 75
    else:
        score, confidence = 100, round(60 + 35 * len(applicable) / max(len(results), 1))
    failed = [f"[{r.check}] {r.evidence or r.advice}. {r.advice}" for r in flaws + style]
    rationale = ("Found: " + " ".join(failed)) if failed else "Every check that applies passes."
    passed = [r.check for r in applicable if r.ok]
    if passed:
        rationale += " Passed: " + ", ".join(passed) + "."
    return JudgeReply(rationale=rationale, score=score, confidence=confidence)


class RubricJudge:
    """A deterministic judge: verifiable checks instead of a language model."""

    async def assess(self, request: JudgeRequest) -> JudgeResult:
        """Run this judge's checks on the version, against its reference."""
        facts, reference = facts_of(request.problem), facts_of(request.reference)
        assert facts is not None
        results = run_checks(request.judge, facts, reference)
        verdict: JudgeReply = verdict_from(results)
        if request.judge == HOLISTIC:
            verdict = _holistic(verdict, results, facts, reference)
        return JudgeResult(
            judge=request.judge,
            round=request.round,
            verdict=verdict,
            raw_outputs=[verdict.model_dump_json()],
            model=RUBRIC_MODEL,
            prompt_version=rubric_version(),
        )


def _holistic(
    base: JudgeReply, results: list[CheckResult], facts: ProblemFacts, ref: ProblemFacts | None
) -> HolisticReply:
    failures = [r for judge in JUDGES for r in run_checks(judge, facts, ref) if r.ok is False]
    narrative = [r.evidence for r in failures if r.check in _NARRATIVE]
    keys = FiveKeys(
        concepts=f"computes with {', '.join(sorted(facts.operators)) or 'no operation'}",
        prerequisites=f"{len(facts.verification.evidence)} computation(s) written out and checked",
        representations="the working is written as computations"
        if facts.verification.checked
        else "no computation is written out",
        alternative_values=f"{len(set(facts.question_numbers))} quantities that could be varied",
        narrative="; ".join(narrative)[:500] or "possible and consistent",
    )
    advice: list[str] = []
    for result in failures:
        text = f"[{result.check}] {result.evidence or result.advice}"
        if text not in advice:
            advice.append(text[:500])
    return HolisticReply(**base.model_dump(), five_keys=keys, suggestions=advice[:8])


_NARRATIVE = {"plausible_quantities", "no_false_proportionality", "data_consistent", "relevant_data_only"}


class RubricReviser:
    """Repairs the defects the panel reported, narrating each step as its think-aloud."""

    async def revise(self, request: RevisionRequest, on_thinking: ThinkingSink) -> RevisionResult:
        """Apply every known repair for the reported checks; unknown defects are left as they are."""
        reported = _reported_checks(request)
        lines = [f"The panel reported: {', '.join(sorted(reported)) or 'nothing specific'}."]
        problem, notes = repair(request.current, reported)
        lines += notes or [
            "I know no deterministic repair for these findings in this problem, so I keep its text."
        ]
        if notes and problem == request.current:
            # every repair was refused as unsound: say so rather than present the text as revised
            lines.append("No sound repair is left, so I return the problem unchanged.")
        thinking = ""
        for line in lines:
            on_thinking(line + "\n")
            thinking += line + "\n"
        return RevisionResult(
            round=request.round,
            problem=problem,
            thinking=thinking,
            raw_outputs=[problem.model_dump_json()],
            model=RUBRIC_MODEL,
            prompt_version=rubric_version(),
        )

    async def revise_unaided(self, problem: Problem, on_thinking: ThinkingSink) -> RevisionResult:
        """Blind, the offline reviser can do nothing: every repair it knows answers one of the
        panel's findings, and it is given none (nor may it run the panel's checks itself). It says
        so and returns the problem unchanged, so the offline control arm judges the original."""
        thinking = (
            "I have no feedback, and every repair I know answers a finding of the panel, so I cannot "
            "tell what to change. I return the problem unchanged.\n"
        )
        on_thinking(thinking)
        return RevisionResult(
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
