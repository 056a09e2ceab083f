"""Separating a reasoning model's thinking from its answer, and finding the JSON in a reply.

Reasoning arrives in one of two places: a field of its own (``reasoning_content``, ``reasoning``;
the wire layer takes those out, see ``agents/llm/wire.py``) or inside the content, wrapped in a tag
(``<think>…</think>`` by default). :class:`TagSplitter` separates the tagged part as the text
streams in, so the thinking can be shown live and the answer parsed alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

ReasoningSink = Callable[[str], None]


@dataclass
class TagSplitter:
    """Streams content pieces in; sends a leading ``<tag>…</tag>`` block to ``on_reasoning`` and
    returns the rest. Text that might still turn out to be the tag is held back, never guessed."""

    tag: str
    on_reasoning: ReasoningSink
    _buffer: str = ""
    _state: str = "start"  # start → inside → after
    answer: list[str] = field(default_factory=list)

    @property
    def _open(self) -> str:
        return f"<{self.tag}>"

    @property
    def _close(self) -> str:
        return f"</{self.tag}>"

    def feed(self, piece: str) -> str:
        """Take the next piece of content; return the part of the answer that is now certain."""
        self._buffer += piece
        out = self._step()
        self.answer.append(out)
        return out

    def finish(self) -> str:
        """The stream ended: whatever is held back belongs to the answer (or the unclosed thinking)."""
        rest, self._buffer = self._buffer, ""
        if self._state == "inside":
            self.on_reasoning(rest)
            return ""
        self.answer.append(rest)
        return rest

    def _step(self) -> str:
        if self._state == "start":
            stripped = self._buffer.lstrip()
            if self._open.startswith(stripped) and len(stripped) < len(self._open):
                return ""  # could still become the opening tag
            if not stripped.startswith(self._open):
                self._state = "after"
            else:
                self._state, self._buffer = "inside", stripped[len(self._open) :]
        if self._state == "inside":
            return self._inside()
        out, self._buffer = self._buffer, ""
        return out

    def _inside(self) -> str:
        end = self._buffer.find(self._close)
        if end < 0:
            keep = _partial_suffix(self._buffer, self._close)
            self.on_reasoning(self._buffer[: len(self._buffer) - keep])
            self._buffer = self._buffer[len(self._buffer) - keep :]
            return ""
        self.on_reasoning(self._buffer[:end])
        self._state, self._buffer = "after", self._buffer[end + len(self._close) :].lstrip()
        out, self._buffer = self._buffer, ""
        return out


def _partial_suffix(text: str, marker: str) -> int:
    """Length of the longest end of ``text`` that begins ``marker`` (it may complete later)."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0


def split_reasoning(text: str, tag: str = "think") -> tuple[str, str]:
    """(reasoning, answer) of a whole reply: a leading ``<tag>…</tag>`` block, or everything before
    a closing tag that was never opened (templates that put the opening tag in the prompt)."""
    stripped = text.lstrip()
    opening, closing = f"<{tag}>", f"</{tag}>"
    if stripped.startswith(opening):
        inner = stripped[len(opening) :]
        end = inner.find(closing)
        if end < 0:
            return inner, ""
        return inner[:end], inner[end + len(closing) :].lstrip()
    end = text.find(closing)
    if end >= 0 and opening not in text[:end]:
        return text[:end], text[end + len(closing) :].lstrip()
    return "", text


_FENCE = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.S)


def json_candidates(text: str) -> list[str]:
    """The reply as given, then the JSON object inside a code fence or between the first ``{`` and
    the last ``}``: servers that ignore structured output often wrap the object in prose."""
    candidates = [text]
    fenced = _FENCE.search(text)
    if fenced:
        candidates.append(fenced.group(1))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    return list(dict.fromkeys(candidates))
