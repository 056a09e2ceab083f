"""Synthetic flawed problems for load tests, benchmarks and demos (seeded, so reproducible).

Each problem follows one of a few templates, each with a known flaw of the kinds THiNK studies:
false proportionality for a fixed-duration task, an arithmetic slip, a fractional count of
people, or no flaw at all (a control). Numbers vary with the seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator

Template = Callable[[random.Random], tuple[str, str, str]]


def _fixed_duration(rng: random.Random) -> tuple[str, str, str]:
    people, minutes = rng.randint(3, 40), rng.randint(5, 60)
    task = rng.choice(["sing a song", "play a march", "perform a dance"])
    more = people * rng.randint(2, 4)
    question = (
        f"A group of {people} pupils takes {minutes} minutes to {task}. "
        f"How long would {more} pupils take to {task}?"
    )
    return question, f"{minutes} × {people} / {more} minutes.", "false proportionality"


def _arithmetic_slip(rng: random.Random) -> tuple[str, str, str]:
    boxes, per_box = rng.randint(3, 200), rng.randint(4, 60)
    wrong = boxes * per_box + rng.choice([-10, -1, 1, 10])
    question = f"A shop has {boxes} crates with {per_box} bottles each. How many bottles does it have?"
    return question, f"{boxes} × {per_box} = {wrong} bottles.", "arithmetic error"


def _fractional_people(rng: random.Random) -> tuple[str, str, str]:
    pupils, seats = rng.randint(41, 2000), rng.choice([30, 40, 45, 50])
    question = (
        f"A school takes {pupils} pupils on a trip. Each bus seats {seats}. How many buses does it need?"
    )
    return question, f"{pupils} / {seats} = {pupils / seats:.2f} buses.", "fractional count"


def _control(rng: random.Random) -> tuple[str, str, str]:
    speed, hours = rng.randint(20, 120), rng.randint(2, 12)
    vehicle = rng.choice(["train", "bus", "ship", "truck"])
    question = f"A {vehicle} travels at {speed} km per hour for {hours} hours. How far does it go?"
    return question, f"{speed} × {hours} = {speed * hours} km.", "none"


TEMPLATES: tuple[Template, ...] = (_fixed_duration, _arithmetic_slip, _fractional_people, _control)


MAX_SYNTHETIC = 10_000  # each template has well over a quarter of this many distinct questions


def synthetic_rows(n: int, seed: int = 0) -> Iterator[dict[str, object]]:
    """``n`` distinct problems (at most MAX_SYNTHETIC) as dataset rows (JSONL objects)."""
    if not 0 < n <= MAX_SYNTHETIC:
        raise ValueError(f"between 1 and {MAX_SYNTHETIC} problems")
    rng, seen = random.Random(seed), set[str]()
    for index in range(1, n + 1):
        template = TEMPLATES[(index - 1) % len(TEMPLATES)]
        question, solution, flaw = template(rng)
        for _ in range(1000):  # numbers can repeat: keep the set free of duplicates
            if question not in seen:
                break
            question, solution, flaw = template(rng)
        else:
            raise RuntimeError(f"{template.__name__} has too few distinct questions")
        seen.add(question)
        meta = {"flaw": flaw}
        yield {"id": f"syn-{index:05d}", "question": question, "solution": solution, "metadata": meta}


def synthetic_jsonl(n: int, seed: int = 0) -> str:
    """``n`` problems as JSONL text."""
    return "".join(json.dumps(row) + "\n" for row in synthetic_rows(n, seed))
