"""Text a client may have us store: one check, used by the request schemas and dataset parsing.

JSON lets a client write a lone UTF-16 surrogate (``"\\ud800"``): Python keeps it in a ``str``, but no
UTF-8 encoder (psycopg's, sqlite3's, the JSON response's) will write it, so it surfaced as a 500 after
part of the request had run. PostgreSQL ``text`` cannot hold U+0000 at all. Both are refused where
the text enters, with the character named; every other character, U+2028 and U+2029 among them, is
ordinary text and is stored and answered unchanged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Annotated, TypeVar

from pydantic import AfterValidator

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
ValueT = TypeVar("ValueT")


def unstorable_reason(text: str) -> str | None:
    """Why ``text`` cannot be stored (its first offending character, by code point), or None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL (U+0000) character, which cannot be stored"
    return f"contains a lone surrogate (U+{ord(found.group()):04X}), which is not Unicode text"


def storable(text: str) -> str:
    """``text`` unchanged, or ValueError saying which character cannot be stored (a pydantic
    ``AfterValidator``: the message never repeats the character, so the 422 can always be written)."""
    reason = unstorable_reason(text)
    if reason is not None:
        raise ValueError(f"the text {reason}")
    return text


def storable_if_text(value: ValueT) -> ValueT:
    """``storable`` for a value that may not be text, as a pydantic ``BeforeValidator``.

    Before a constrained string (``max_length``, ``strip_whitespace``): pydantic-core refuses a lone
    surrogate there itself, but only as "unable to parse raw data as a unicode string"."""
    if isinstance(value, str):
        storable(value)
    return value


def storable_scalar(value: ValueT) -> ValueT:
    """A JSON scalar we can store (a metadata value): storable text, or a finite number. JSON's
    NaN and Infinity (which Python's parser accepts, and 1e999 becomes) are refused: PostgreSQL's
    JSON cannot hold them, SQLite's can, and the two must answer alike."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"the number {value} is not finite, so it cannot be stored")
    return storable_if_text(value)


StorableText = Annotated[str, AfterValidator(storable)]


def _nested(value: object) -> Iterator[object]:
    """The keys and values one level inside a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield item
    elif isinstance(value, list):
        yield from value


def first_unstorable(value: object) -> str | None:
    """Why some text anywhere inside a parsed JSON value (keys included) cannot be stored, or None.

    Walked with a list, not by recursion: a value nested as deeply as the JSON parser allows must
    not exhaust the stack here.
    """
    pending = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, str) and (reason := unstorable_reason(current)) is not None:
            return reason
        pending.extend(_nested(current))
    return None


def depth(value: object) -> int:
    """How many arrays and objects a parsed JSON value nests (a scalar: 0), without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        current, level = pending.pop()
        if isinstance(current, dict | list):
            deepest = max(deepest, level)
            pending.extend((item, level + 1) for item in _nested(current))
    return deepest
