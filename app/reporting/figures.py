"""A batch report's figures, fit for a paper: vector SVG (and PNG at print resolution), every number
with its interval, a colour-blind-safe palette, labelled axes and no legend over the data.

Each figure is drawn from the report's JSON alone (what ``GET /v1/batches/{id}/report`` returns), with
matplotlib's object API (no pyplot state; safe in threads):

- ``comparison``: pass rate (95 % Wilson) and AvgQualityScore (95 % BCa bootstrap) per model and arm;
- ``levels``: the mean final score per Bloom level and the holistic judge, as small multiples;
- ``rounds``: rounds to pass as Kaplan–Meier curves with their 95 % bands;
- ``agreement``: Cohen's κ between every two judges, a heatmap per arm;
- ``flaws``: pass rate per labelled flaw type, with Wilson intervals (when the dataset labels flaws);
- ``paired``: the loop against its control on the same problems (when the batch has a control arm).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from typing import Any
from xml.sax.saxutils import escape

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from agents.schemas import JUDGES
from app.reporting.text import words

# Okabe & Ito (2008): distinguishable with every common colour-vision deficiency, and in grey.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")
ARM_LINESTYLES = {"loop": "-", "control": (0, (4, 2))}  # solid for the loop, dashed for its control
PRINT_DPI = 300
_STYLE: dict[Any, Any] = {"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8}


def _label(row: dict[str, Any]) -> str:
    return f"{row['model']} ({row['arm']})"


def _new(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), layout="constrained")
    return figure


def _interval(value: float | None, ci: Sequence[float | None] | None) -> tuple[float, float] | None:
    """Error-bar lengths below and above ``value``; None when there is no value or no interval."""
    if value is None or not ci or ci[0] is None or ci[1] is None:
        return None
    return max(value - ci[0], 0.0), max(ci[1] - value, 0.0)


def _dots(
    axes: Axes, labels: list[str], values: list[float | None], errors: list[tuple[float, float] | None]
) -> None:
    """One dot per label, top to bottom, with its interval as a whisker."""
    for i, (value, error) in enumerate(zip(values, errors, strict=True)):
        if value is None:
            axes.text(
                0.5, i, "no scored items", va="center", ha="center", transform=axes.get_yaxis_transform()
            )
            continue
        colour = PALETTE[i % len(PALETTE)]
        bars = None if error is None else [[error[0]], [error[1]]]
        axes.errorbar([value], [i], xerr=bars, fmt=MARKERS[i % len(MARKERS)], color=colour, capsize=3, ms=5)
    axes.set_yticks(range(len(labels)), labels)
    axes.set_ylim(len(labels) - 0.5, -0.5)
    axes.grid(axis="x", linewidth=0.4, alpha=0.5)


def comparison(report: dict[str, Any]) -> Figure | None:
    """Pass rate and AvgQualityScore per model and arm, each with its 95 % interval."""
    rows = report["rows"]
    if not rows:
        return None
    figure = _new(7.0, 0.9 + 0.35 * len(rows))
    left, right = figure.subplots(1, 2, sharey=True)
    labels = [_label(r) for r in rows]
    _dots(
        left,
        labels,
        [r["pass_rate"] for r in rows],
        [_interval(r["pass_rate"], r["pass_rate_ci95"]) for r in rows],
    )
    left.set_xlim(-0.02, 1.02)
    left.set_xlabel(f"{words(report)['pass_rate']}\n(95 % Wilson interval)")
    quality = [r["avg_quality_final"] for r in rows]
    _dots(
        right,
        labels,
        quality,
        [_interval(q, r["avg_quality_final_ci95"]) for q, r in zip(quality, rows, strict=True)],
    )
    right.set_xlim(-0.02, 1.02)
    right.axvline(0.85, linestyle="--", color="grey", linewidth=0.8)
    right.set_xlabel("AvgQualityScore, final round\n(95 % BCa bootstrap; dashed: τ = 0.85)")
    figure.suptitle("Models compared over scored items")
    return figure


def levels(report: dict[str, Any]) -> Figure | None:
    """Mean final score per Bloom level and the holistic judge: one small panel each, same scale."""
    rows = [r for r in report["rows"] if any(v is not None for v in r["level_mean_final"].values())]
    if not rows:
        return None
    figure = _new(7.0, 1.2 + 0.9 * len(rows))
    panels = figure.subplots(2, 4, sharex=True, sharey=True).flatten()
    labels = [_label(r) for r in rows]
    for axes, judge in zip(panels, JUDGES, strict=False):
        values = [r["level_mean_final"].get(judge) for r in rows]
        _dots(axes, labels, values, [None] * len(rows))
        axes.axvline(85, linestyle="--", color="grey", linewidth=0.8)
        axes.set_xlim(-2, 102)
        axes.set_title("holistic (Five Keys)" if judge == "holistic" else judge)
    # Every panel shows its own x ticks (a reader compares across rows), and the axis is named once,
    # for the whole figure, so no label can run into its neighbour's.
    for axes in panels[:7]:
        axes.xaxis.set_tick_params(labelbottom=True)
        axes.set_xticks([0, 50, 100])
    figure.supxlabel("mean final score (0–100)", fontsize=9)
    panels[-1].axis("off")
    panels[-1].text(
        0.0,
        0.5,
        "Mean final-round score\n(0–100) over scored\nitems. Dashed: a\njudge's pass mark θ = 85.",
        va="center",
        fontsize=8,
    )
    figure.suptitle("Final score per Bloom level and the holistic judge")
    return figure


def rounds(report: dict[str, Any]) -> Figure | None:
    """Kaplan–Meier curves of the share not yet passed after each round, with 95 % bands."""
    rows = [r for r in report["rows"] if r.get("time_to_pass")]
    if not rows:
        return None
    figure = _new(6.0, 3.8)
    axes = figure.add_subplot()
    for i, row in enumerate(rows):
        curve = row["time_to_pass"]["curve"]
        colour = PALETTE[i % len(PALETTE)]
        steps = [0, *(p["round"] for p in curve)]
        values = [1.0, *(p["not_passed"] for p in curve)]
        # Colour alone fails in grey print and where curves overlap (a control arm's single round
        # often equals the loop's first): the arm sets the dash and each row has its own marker.
        axes.step(
            steps,
            values,
            where="post",
            color=colour,
            label=_label(row),
            linewidth=1.4,
            linestyle=ARM_LINESTYLES.get(row["arm"], "-."),
            marker=MARKERS[i % len(MARKERS)],
            markersize=5,
            markerfacecolor="white" if row["arm"] == "control" else colour,
        )
        low = [1.0, *(p["low"] if p["low"] is not None else p["not_passed"] for p in curve)]
        high = [1.0, *(p["high"] if p["high"] is not None else p["not_passed"] for p in curve)]
        axes.fill_between(steps, low, high, step="post", color=colour, alpha=0.15, linewidth=0)
    axes.set_xlabel("round (versions judged)")
    axes.set_ylabel("share of problems not yet passed")
    axes.set_ylim(0, 1.02)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_title("Rounds to pass (Kaplan–Meier, 95 % bands; censored at each arm's limit)")
    figure.legend(loc="outside lower center", ncols=min(len(rows), 4), frameon=False)
    return figure


def constant_judges(data: dict[str, Any]) -> list[str]:
    """The judges of an arm's agreement data that voted one way on every version (pass rate 0 or 1):
    Cohen's κ with such a judge is undefined (its chance agreement is all of its agreement; the
    formula gives 0 whatever the other judge does), so the figure shows it as n/a."""
    rates = data.get("judge_pass_rates") or {}
    return [j for j in JUDGES if rates.get(j) in (0.0, 1.0)]


def agreement(report: dict[str, Any]) -> Figure | None:
    """Cohen's κ between every two judges, per arm, on a diverging scale from −1 to 1; "n/a" where κ
    is undefined (no shared votes, or a judge that voted one way on every version)."""
    arms = {arm: data for arm, data in (report.get("agreement") or {}).items() if data.get("cohen_kappa")}
    if not arms:
        return None
    figure = _new(3.4 * len(arms) + 0.8, 4.0)
    panels = figure.subplots(1, len(arms), squeeze=False)[0]
    image = None
    notes: list[str] = []
    for axes, (arm, data) in zip(panels, arms.items(), strict=True):
        kappa = data["cohen_kappa"]
        judges = [j for j in JUDGES if j in kappa]
        constant = constant_judges(data)
        matrix = [
            [
                float("nan")
                if kappa[a].get(b) is None or (a != b and (a in constant or b in constant))
                else kappa[a][b]
                for b in judges
            ]
            for a in judges
        ]
        # A mesh of cells, not an image: it stays vector in SVG.
        image = axes.pcolormesh(matrix, cmap="PuOr", vmin=-1, vmax=1, edgecolors="white", linewidth=0.5)
        centres = [i + 0.5 for i in range(len(judges))]
        # Upright names would run into each other; turned a quarter they stand side by side.
        axes.set_xticks(centres, judges, rotation=90)
        axes.set_yticks(centres, judges)
        axes.invert_yaxis()
        axes.set_aspect("equal")
        for i, line in enumerate(matrix):
            for j, value in enumerate(line):
                shown = "n/a" if value != value else f"{value:.2f}"  # NaN: undefined
                colour = "white" if value == value and abs(value) > 0.6 else "black"
                axes.text(j + 0.5, i + 0.5, shown, ha="center", va="center", fontsize=6, color=colour)
        axes.set_title(f"{arm}: {data['versions']} judged versions")
        for judge in constant:
            way = "passed" if data["judge_pass_rates"][judge] == 1.0 else "failed"
            notes.append(f"{arm}: {judge} {way} every version")
    if image is not None:
        bar = figure.colorbar(image, ax=list(panels), shrink=0.8, label="Cohen's κ")
        if bar.solids is not None:
            bar.solids.set_rasterized(False)  # matplotlib rasterizes long colour bars; keep it vector
    figure.suptitle("Agreement between judges")
    why = "n/a: κ undefined (a judge that never varies, or no shared votes)"
    figure.supxlabel(f"{why}{': ' if notes else ''}{'; '.join(notes)}", fontsize=7, wrap=True)
    return figure


def flaws(report: dict[str, Any]) -> Figure | None:
    """Pass rate per labelled flaw type, one row per flaw and a marker per model and arm."""
    entries = [e for e in report.get("by_flaw") or [] if e["pass_rate"] is not None]
    if not entries:
        return None
    kinds = list(dict.fromkeys(f"{e['model']} ({e['arm']})" for e in entries))
    names = sorted({e["flaw"] for e in entries})
    figure = _new(7.0, 1.2 + 0.3 * len(names) * max(1, len(kinds)) ** 0.5)
    axes = figure.add_subplot()
    offset = 0.8 / max(len(kinds), 1)
    for k, kind in enumerate(kinds):
        ys: list[float] = []
        xs: list[float] = []
        bars: list[list[float]] = [[], []]
        for entry in (e for e in entries if f"{e['model']} ({e['arm']})" == kind):
            error = _interval(entry["pass_rate"], entry["pass_rate_ci95"]) or (0.0, 0.0)
            ys.append(names.index(entry["flaw"]) - 0.4 + offset * (k + 0.5))
            xs.append(entry["pass_rate"])
            bars[0].append(error[0])
            bars[1].append(error[1])
        axes.errorbar(
            xs,
            ys,
            xerr=bars,
            fmt=MARKERS[k % len(MARKERS)],
            color=PALETTE[k % len(PALETTE)],
            capsize=2,
            ms=4,
            label=kind,
        )
    axes.set_yticks(range(len(names)), names)
    axes.set_ylim(len(names) - 0.5, -0.5)
    axes.set_xlim(-0.02, 1.02)
    axes.grid(axis="x", linewidth=0.4, alpha=0.5)
    axes.set_xlabel(f"{words(report)['pass_rate']} over scored items\n(95 % Wilson interval)")
    axes.set_title("By labelled flaw type")
    figure.legend(loc="outside lower center", ncols=min(len(kinds), 4), frameon=False)
    return figure


def paired(report: dict[str, Any]) -> Figure | None:
    """Each problem's final quality under the control and under the loop, joined by a line."""
    pairs = [c for c in report.get("comparisons") or [] if c["kind"] == "loop_vs_control" and c.get("pairs")]
    if not pairs:
        return None
    figure = _new(max(4.2, 3.0 * len(pairs) + 0.6), 3.8)
    panels = figure.subplots(1, len(pairs), squeeze=False, sharey=True)[0]
    for axes, comparison_ in zip(panels, pairs, strict=True):
        for loop, control in comparison_["pairs"]:
            colour = PALETTE[0] if loop > control else PALETTE[5] if loop < control else "grey"
            axes.plot([0, 1], [control, loop], color=colour, alpha=0.6, linewidth=0.9, marker="o", ms=3)
        axes.set_xticks([0, 1], ["control", "loop"])
        axes.set_xlim(-0.3, 1.3)
        axes.set_ylim(0, 1.02)
        delta, ci = comparison_["delta_avg_quality"], comparison_["delta_ci95"]
        interval = f" (95 % CI {ci[0]:.3f} to {ci[1]:.3f})" if ci and None not in ci else ""
        mean = "—" if delta is None else f"{delta:+.3f}"
        axes.set_title(f"{comparison_['a'].split('/')[0]}: Δ = {mean}{interval}", fontsize=8)
        axes.set_xlabel("blue: higher with the loop; orange: lower", fontsize=7)
    panels[0].set_ylabel("final quality Q per problem")
    figure.suptitle("Loop vs control on the same problems")
    return figure


FIGURES: dict[str, Callable[[dict[str, Any]], Figure | None]] = {
    "comparison": comparison,
    "levels": levels,
    "rounds": rounds,
    "agreement": agreement,
    "flaws": flaws,
    "paired": paired,
}


def draw(report: dict[str, Any]) -> dict[str, Figure]:
    """Every figure the report has data for, by name."""
    import matplotlib

    out = {}
    with matplotlib.rc_context(_STYLE):
        for name, make in FIGURES.items():
            figure = make(report)
            if figure is not None:
                out[name] = figure
    return out


def provenance(report: dict[str, Any]) -> str:
    """One line naming where a figure's numbers come from: the batch, its dataset's content hash and
    the thinkloop that ran it (from the report's manifest), written into every figure file."""
    manifest = report.get("manifest") or {}
    dataset = manifest.get("dataset") or {}
    made_by = manifest.get("thinkloop") or manifest.get("written_by") or {}
    parts = [f"thinkloop batch {report['batch']['id']}"]
    if dataset.get("name") or dataset.get("content_hash"):
        name = dataset.get("name", dataset.get("id", "?"))
        parts.append(f"dataset {name} ({dataset.get('content_hash', 'no hash')})")
    if made_by.get("version"):
        parts.append(f"thinkloop {made_by['version']} ({made_by.get('git_revision') or 'no git revision'})")
    return "; ".join(parts)


# Where a figure file carries its batch's whole manifest: an element of this namespace inside the
# SVG's <metadata>, and a PNG text chunk of this keyword (both hold the manifest as JSON).
MANIFEST_NS = "urn:thinkloop:manifest"
MANIFEST_KEY = "thinkloop.manifest"


def manifest_json(report: dict[str, Any]) -> str | None:
    """The report's manifest as JSON text (sorted keys: the same bytes every time), or None."""
    manifest = report.get("manifest")
    return json.dumps(manifest, sort_keys=True, default=str) if manifest else None


def svg(figure: Figure, description: str | None = None, manifest: str | None = None) -> str:
    """The figure as standalone SVG text (glyphs as paths: no font needed to view it), with
    ``description`` (e.g. :func:`provenance`) and the ``manifest`` JSON in its metadata."""
    import matplotlib

    buffer = io.StringIO()
    metadata: dict[str, Any] = {"Date": None}
    if description:
        metadata["Description"] = description
    with matplotlib.rc_context({"svg.hashsalt": "thinkloop"}):  # the same ids every time
        figure.savefig(buffer, format="svg", metadata=metadata)
    text = buffer.getvalue()
    if manifest is None:
        return text
    # matplotlib writes only Dublin Core keys: the manifest goes in as an element of our own namespace.
    element = f'<thinkloop:manifest xmlns:thinkloop="{MANIFEST_NS}">{escape(manifest)}</thinkloop:manifest>'
    if "</metadata>" in text:
        return text.replace("</metadata>", f"  {element}\n </metadata>", 1)
    start = text.index(">", text.index("<svg")) + 1
    return f"{text[:start]}\n <metadata>{element}</metadata>{text[start:]}"


def png(
    figure: Figure, dpi: int = PRINT_DPI, description: str | None = None, manifest: str | None = None
) -> bytes:
    """The figure as PNG at print resolution, with ``description`` and the ``manifest`` JSON in text
    chunks (``Description`` and ``thinkloop.manifest``)."""
    buffer = io.BytesIO()
    metadata: dict[str, Any] = {"Software": None}
    if description:
        metadata["Description"] = description
    if manifest is not None:
        metadata[MANIFEST_KEY] = manifest
    figure.savefig(buffer, format="png", dpi=dpi, metadata=metadata)
    return buffer.getvalue()


FIGURE_FORMATS = ("svg", "png")


def render(report: dict[str, Any], name: str, fmt: str) -> bytes | None:
    """One figure of the report as file content, or None when the report has no data for it."""
    make = FIGURES[name]
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        figure = make(report)
    if figure is None:
        return None
    about, manifest = provenance(report), manifest_json(report)
    if fmt == "svg":
        return svg(figure, about, manifest).encode()
    return png(figure, description=about, manifest=manifest)
