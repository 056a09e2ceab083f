"""What the verifier reports: a checked claim (``Evidence``) and one computation of the chain (``Step``)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

Kind = Literal["arithmetic", "conversion", "equation", "clock", "remainder", "chain", "answer"]


@dataclass(frozen=True)
class Evidence:
    """One checked statement: what was written, what it computes to, and whether they agree.

    ``note`` says why a statement that is true alone fails the chain ("120.10 is no earlier result").
    """

    kind: Kind
    claim: str
    stated: str
    actual: str
    ok: bool
    note: str = ""

    def line(self) -> str:
        """The check for a person: ``7 × 36 = 212 (wrong: it is 252)``."""
        verdict = "correct" if self.ok else (self.note or f"wrong: it is {self.actual}")
        return f"{self.claim} ({verdict})"


@dataclass(frozen=True)
class Step:
    """One computation the solution states, as a link of its chain: the numbers it uses, the value
    it states, and where it stands in the normalised solution (``start``/``end`` offsets).

    ``first`` is False for a later side of one written chain (``6 × 4/3`` in ``6 ÷ 3/4 = 6 × 4/3 = 8``):
    its numbers restate the side before rather than take values from elsewhere. An unverified step
    carries the ``reason`` its relation could not be read or traced.
    """

    claim: str
    operands: tuple[Fraction, ...]
    result: Fraction | None
    start: int
    end: int
    ok: bool = True
    first: bool = True
    reason: str = ""
    clock: bool = False  # the stated result is a time of day (minutes after midnight)

    def line(self) -> str:
        """The step for a person: ``unverified: Ben has twice as many as Ann, which is 24 (…)``."""
        return f"unverified: {self.claim} ({self.reason})" if self.reason else self.claim
