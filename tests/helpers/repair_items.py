"""A labelled flawed problem with its correction, shared by the repair tests: a wrong product
(4 × 12 = 46) whose corrected version answers 33 rolls."""

from __future__ import annotations

from agents.labelled.labels import Flaw, LabelledItem
from agents.schemas import Problem

QUESTION = "A baker makes 4 trays of 12 rolls and sells 15 rolls. How many rolls are left?"
FLAWED = Problem(question=QUESTION, solution="4 × 12 = 46 rolls; 46 − 15 = 31 rolls are left.")
CORRECTED = Problem(question=QUESTION, solution="4 × 12 = 48 rolls; 48 − 15 = 33 rolls are left.")
ITEM = LabelledItem(
    id="rolls",
    split="heldout",
    kind="flawed",
    question=FLAWED.question,
    solution=FLAWED.solution,
    flaws=[Flaw(type="arithmetic_symbolic", levels=["apply"], evidence="4 × 12 is 48, not 46")],
    corrected=CORRECTED,
    answer="33 rolls",
)
