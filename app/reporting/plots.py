"""The report's figures, drawn with matplotlib's object API (no pyplot state; safe in threads)."""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from graphs.paper_tables import LEVELS


def _png(figure: Figure) -> str:
    """The figure as a base64 PNG for a data: URI (no script or markup can ride along)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _label(row: dict[str, Any]) -> str:
    return f"{row['model']} ({row['arm']})"


def bloom_radar(rows: Sequence[dict[str, Any]]) -> str:
    """Mean final-round score per Bloom level, one polygon per model and arm."""
    figure = Figure(figsize=(5.5, 5.5))
    axes = figure.add_subplot(projection="polar")
    angles = [2 * math.pi * i / len(LEVELS) for i in range(len(LEVELS))]
    for row in rows:
        values = [row["level_mean_final"].get(level) or 0.0 for level in LEVELS]
        axes.plot([*angles, angles[0]], [*values, values[0]], label=_label(row))
        axes.fill([*angles, angles[0]], [*values, values[0]], alpha=0.08)
    axes.set_xticks(angles, [level.capitalize() for level in LEVELS])
    axes.set_ylim(0, 100)
    axes.set_title("Final score per Bloom level")
    axes.legend(loc="upper right", bbox_to_anchor=(1.35, 1.12), fontsize="small")
    return _png(figure)


def quality_by_round(rows: Sequence[dict[str, Any]]) -> str:
    """Mean Q (0–1) of the items that reached each round."""
    figure = Figure(figsize=(6, 4))
    axes = figure.add_subplot()
    for row in rows:
        points = row["quality_by_round"]
        axes.plot(
            [p["round"] for p in points], [p["mean_quality"] for p in points], marker="o", label=_label(row)
        )
    axes.axhline(0.85, linestyle="--", color="grey", linewidth=1, label="τ of the default policies")
    axes.set_xlabel("round")
    axes.set_ylabel("mean quality Q")
    axes.set_ylim(0, 1)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_title("Quality by round")
    axes.legend(fontsize="small")
    return _png(figure)


def time_to_pass(rows: Sequence[dict[str, Any]]) -> str:
    """Kaplan-Meier curves: the share of problems not yet passed after each round, per model and arm."""
    figure = Figure(figsize=(6, 4))
    axes = figure.add_subplot()
    for row in rows:
        survival = row["time_to_pass"]
        if not survival:
            continue
        rounds = [0, *(p["round"] for p in survival["curve"])]
        values = [1.0, *(p["not_passed"] for p in survival["curve"])]
        axes.step(rounds, values, where="post", label=_label(row))
    axes.axhline(0.5, linestyle=":", color="grey", linewidth=1)
    axes.set_xlabel("round (evaluations)")
    axes.set_ylabel("share not yet passed")
    axes.set_ylim(0, 1.02)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_title("Rounds to pass (Kaplan-Meier, censored at each arm's limit)")
    axes.legend(fontsize="small")
    return _png(figure)
