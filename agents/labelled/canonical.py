"""A labelled set's canonical form and hash: what a validity record names its set by.

The canonical JSONL of a set is every item, in the order given, written as JSON with its keys
sorted at every depth, no whitespace between tokens (separators ``,`` and ``:``), non-ASCII
characters as themselves (not ``\\u`` escapes), each followed by one newline (``\\n``), encoded in
UTF-8. The items are the JSON objects exactly as sent: for a file, each non-blank line parsed as
JSON (blank lines are skipped, as the reader skips them). The set hash is the SHA-256 of those
bytes, in hex. Any shell reproduces it:

    python3 -c 'import json,sys
    for l in open(sys.argv[1],encoding="utf-8"):
      if l.strip(): sys.stdout.buffer.write((json.dumps(json.loads(l),sort_keys=True,
        separators=(",",":"),ensure_ascii=False)+"\\n").encode())' FILE | sha256sum

The objects are hashed as sent, not as read (a question's surrounding spaces are stripped when it
is read): two files that differ in any character of an item are two sets.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class CanonicalError(ValueError):
    """A file that is not JSON lines; the message names the line."""


def canonical_jsonl(objects: Iterable[Any]) -> bytes:
    """The canonical JSONL of ``objects``: sorted keys, compact, UTF-8, one per line, newline-ended."""
    lines = (json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for obj in objects)
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


def canonical_hash(objects: Iterable[Any]) -> str:
    """The SHA-256 (hex) of the canonical JSONL of ``objects``: a set's hash."""
    return hashlib.sha256(canonical_jsonl(objects)).hexdigest()


def read_objects(path: Path) -> list[Any]:
    """The JSON value of every non-blank line of ``path``, in order; CanonicalError naming the line."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CanonicalError(f"cannot read {path}: {exc}") from exc
    objects = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            objects.append(json.loads(line))
        except ValueError as exc:
            raise CanonicalError(f"{path}:{number}: invalid JSON ({exc})") from exc
    return objects


def file_hash(path: Path) -> str:
    """The set hash of the JSONL file at ``path``."""
    return canonical_hash(read_objects(path))
