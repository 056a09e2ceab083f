"""Problems the tests submit: the orchestra problem (as a ``Problem`` and as a request body) and the flawed
sample."""

from __future__ import annotations

from pathlib import Path

from agents.schemas import Problem

ORCHESTRA = Problem(
    question=(
        "An orchestra of 120 musicians takes 40 minutes to perform a symphony. How long would it "
        "take 60 musicians to perform the same symphony? Let P be the number of musicians and T the "
        "playing time."
    ),
    solution="With half as many musicians it takes twice as long: 40 × 120 / 60 = 80 minutes.",
)


PROBLEM = {
    "question": (
        "An orchestra of 120 musicians takes 40 minutes to perform a symphony. How long would it take "
        "60 musicians to perform the same symphony? Let P be the number of musicians and T the playing time."
    ),
    "solution": "With half as many musicians it takes twice as long: 40 × 120 / 60 = 80 minutes.",
}


FLAWED_SAMPLE = Path(__file__).parents[2] / "app" / "samples" / "datasets" / "flawed-problems.jsonl"
