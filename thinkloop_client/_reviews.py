"""The review queue: one method group for each client. A ``review`` key (a teacher's) reads and
decides its project's queue; a ``write`` key (the tutoring backend's) may ask for a review of a run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Literal

from thinkloop_client import _calls as calls
from thinkloop_client._base import AsyncBase, SyncBase
from thinkloop_client.models import Review, ReviewDecision, ReviewDetail

Decision = Literal["sound", "flawed"]


def decision_body(
    decision: Decision,
    flaws: Sequence[tuple[str, str]] = (),
    corrected: tuple[str, str] | None = None,
    note: str | None = None,
    reviewer: str | None = None,
    replaces: str | None = None,
) -> dict[str, Any]:
    """The body of a decision: ``flaws`` as (type, evidence), ``corrected`` as (question, solution)."""
    return {
        "decision": decision,
        "flaws": [{"type": kind, "evidence": evidence} for kind, evidence in flaws] or None,
        "corrected": {"question": corrected[0], "solution": corrected[1]} if corrected else None,
        "note": note,
        "reviewer": reviewer,
        "replaces": replaces,
    }


class ReviewMethods(SyncBase):
    """Read the queue, decide its items, ask for a review, read the review set and the agreement."""

    def iter_reviews(
        self, *, status: str | None = None, reason: str | None = None, limit: int | None = None
    ) -> Iterator[Review]:
        """The project's review queue, newest first, page after page (``status``: pending or
        decided; ``reason``: needs_review, audit or requested)."""
        return self._pages(
            calls.list_reviews(status=status, reason=reason, limit=limit),
            lambda c: calls.list_reviews(c, status=status, reason=reason, limit=limit),
        )

    def get_review(self, review_id: str) -> ReviewDetail:
        """One item with each judge's words, the warrant, the think-aloud and every decision."""
        return self._send(calls.get_review(review_id))

    def decide_review(
        self,
        review_id: str,
        decision: Decision,
        *,
        flaws: Sequence[tuple[str, str]] = (),
        corrected: tuple[str, str] | None = None,
        note: str | None = None,
        reviewer: str | None = None,
        replaces: str | None = None,
        idempotency_key: str | None = None,
    ) -> ReviewDecision:
        """Decide an item: sound, or flawed with (type, evidence) flaws; optionally a corrected
        (question, solution). ConflictError when the item was decided already (pass ``replaces``
        with the current decision's id to replace it)."""
        body = decision_body(decision, flaws, corrected, note, reviewer, replaces)
        return self._send(calls.decide_review(review_id, body, idempotency_key))

    def request_review(self, run_id: str, note: str | None = None) -> Review:
        """Ask a teacher to decide an ended run's final version."""
        return self._send(calls.request_review(run_id, note))

    def review_set(self) -> dict[str, Any]:
        """The project's review set: name, hash, counts and labelled items."""
        return self._send(calls.review_set())

    def review_agreement(self, judge_model: str | None = None) -> dict[str, Any]:
        """The judges against the teachers: κ per judge with its interval, the panel's error rates,
        the audit sample's line."""
        return self._send(calls.review_agreement(judge_model))


class AsyncReviewMethods(AsyncBase):
    """The same as :class:`ReviewMethods`, awaited."""

    def iter_reviews(
        self, *, status: str | None = None, reason: str | None = None, limit: int | None = None
    ) -> AsyncIterator[Review]:
        """See :meth:`Client.iter_reviews`."""
        return self._pages(
            calls.list_reviews(status=status, reason=reason, limit=limit),
            lambda c: calls.list_reviews(c, status=status, reason=reason, limit=limit),
        )

    async def get_review(self, review_id: str) -> ReviewDetail:
        """See :meth:`Client.get_review`."""
        return await self._send(calls.get_review(review_id))

    async def decide_review(
        self,
        review_id: str,
        decision: Decision,
        *,
        flaws: Sequence[tuple[str, str]] = (),
        corrected: tuple[str, str] | None = None,
        note: str | None = None,
        reviewer: str | None = None,
        replaces: str | None = None,
        idempotency_key: str | None = None,
    ) -> ReviewDecision:
        """See :meth:`Client.decide_review`."""
        body = decision_body(decision, flaws, corrected, note, reviewer, replaces)
        return await self._send(calls.decide_review(review_id, body, idempotency_key))

    async def request_review(self, run_id: str, note: str | None = None) -> Review:
        """See :meth:`Client.request_review`."""
        return await self._send(calls.request_review(run_id, note))

    async def review_set(self) -> dict[str, Any]:
        """See :meth:`Client.review_set`."""
        return await self._send(calls.review_set())

    async def review_agreement(self, judge_model: str | None = None) -> dict[str, Any]:
        """See :meth:`Client.review_agreement`."""
        return await self._send(calls.review_agreement(judge_model))
