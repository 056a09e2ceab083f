"""Adapters: a detector that reads the lower-cased question, or the texts and the facts, as a rule's."""

from __future__ import annotations

from collections.abc import Callable

from agents.rubric.facts import ProblemFacts
from agents.rubric.rules._registry import Detect


def on_question(detect: Callable[[str], str]) -> Detect:
    """A detector of the lower-cased question."""
    return lambda f: detect(f.q.lower())


def on_texts(detect: Callable[[str, str, ProblemFacts], str]) -> Detect:
    """A detector of the lower-cased question and solution, with the facts."""
    return lambda f: detect(f.q.lower(), f.s.lower(), f)
