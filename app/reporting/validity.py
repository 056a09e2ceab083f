"""The validity report as Markdown (and HTML with a reliability diagram)."""

from __future__ import annotations

import html
import io
import re
from typing import Any

from agents.schemas import JUDGES


def _pct(share: dict[str, Any]) -> str:
    rate = share["rate"]
    return "—" if rate is None else f"{100 * rate:.1f}% ({share['count']}/{share['n']})"


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def to_markdown(report: dict[str, Any]) -> str:
    """Headline table per split, per flaw type, per judge, and whether the targets are met."""
    lines = [
        f"# Judge validity: `{report['judge_model']}` ({report['policy']} policy)",
        "",
        f"{report['items']} labelled items, {report['versions']} versions judged"
        + (" (with adversarial twins)." if report["twins"] else "."),
        "",
        "| split | detection (round 1) | false accepts | specificity | corrected accepted "
        "| adversarial gap | paraphrases kept |",
        "|---|---|---|---|---|---|---|",
    ]
    for split, s in report["splits"].items():
        cells = [
            s["detection"],
            s["false_accept"],
            s["specificity"],
            s["corrected_accepted"],
            s["adversarial_gap"],
            s["paraphrases_accepted"],
        ]
        lines.append(f"| {split} | " + " | ".join(_pct(c) for c in cells) + " |")
    targets = report["targets"]
    lines += ["", f"Targets on the {targets['split']} split:"]
    lines += [f"- {name}: {'met' if ok else 'NOT met'}" for name, ok in targets.items() if name != "split"]
    for split, s in report["splits"].items():
        lines += [
            "",
            f"## {split}: by flaw type",
            "",
            "| flaw | items | detection | false accepts | twins accepted |",
            "|---|---|---|---|---|",
        ]
        for kind, row in s["by_flaw"].items():
            rates = (_num(row[key], 2) for key in ("detection", "false_accept", "twins_accepted"))
            lines.append(f"| {kind} | {row['n']} | " + " | ".join(rates) + " |")
        lines += ["", "| judge | votes | agreement with labels | Cohen's κ | ECE |", "|---|---|---|---|---|"]
        for judge in JUDGES:
            j = s["judges"][judge]
            lines.append(
                f"| {judge} | {j['votes']} | {_num(j['agreement'])} | {_num(j['kappa'])} | {_num(j['ece'])} |"
            )
        for label, key in (
            ("false accepts", "false_accepts"),
            ("sound versions rejected", "rejected_sound"),
            ("twins accepted", "twins_accepted"),
        ):
            if s[key]:
                lines.append(f"\n{label}: {', '.join(s[key])}")
    return "\n".join(lines) + "\n"


def reliability_svg(report: dict[str, Any], split: str) -> str:
    """One panel per judge: its votes binned by stated confidence, each bar at the share of the bin's
    votes that agree with the labels, the votes above it, and the diagonal of perfect calibration."""
    from matplotlib.figure import Figure

    judges = report["splits"][split]["judges"]
    figure = Figure(figsize=(11, 5.6), layout="constrained")
    grid = figure.subplots(2, 4, sharex=True, sharey=True)
    for axes, judge in zip(grid.flat, JUDGES, strict=False):
        _reliability_panel(axes, split, judge, judges[judge])
    grid.flat[-1].set_axis_off()
    figure.supxlabel("stated confidence (bins of 0.1)")
    figure.supylabel("share of votes that agree with the labels")
    figure.suptitle(f"Reliability of the judges ({split})")
    return _inline_svg(figure, f"reliability-{split}")


def _reliability_panel(axes: Any, split: str, judge: str, figures: dict[str, Any]) -> None:
    table = figures["reliability"]
    axes.plot([0, 1], [0, 1], linestyle=":", color="black", linewidth=1, zorder=3)  # over the bars
    bars = axes.bar(
        [row["low"] for row in table],
        [row["accuracy"] for row in table],
        width=[row["high"] - row["low"] for row in table],
        align="edge",
        color="#4c72b0",
        edgecolor="white",
    )
    for bar, row in zip(bars, table, strict=True):
        bar.set_gid(f"reliability-{split}-{judge}-bin-{row['low']:.1f}")  # one id per drawn bin
    axes.bar_label(bars, labels=[str(row["n"]) for row in table], fontsize="x-small")
    ece = "no votes" if figures["ece"] is None else f"ECE {figures['ece']:.3f}"
    axes.set_title(f"{judge}: {ece}", fontsize="medium")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.12)  # room for the counts above a bar at 1.0


def _inline_svg(figure: Any, salt: str) -> str:
    """The figure as an <svg> element for an HTML page: text kept as text, ids unique in the page."""
    import matplotlib

    buffer = io.StringIO()
    # the salt names clip paths per figure (random otherwise), so a page is the same on every run
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buffer.getvalue()
    # matplotlib numbers its groups per figure (figure_1, patch_3...): two figures would share ids
    return _AUTO_ID.sub(r"<g\1>", svg[svg.index("<svg") :])


_AUTO_ID = re.compile(r'<g id="[A-Za-z0-9_.]+_\d+"(/?)>')


def _caption(report: dict[str, Any], split: str) -> str:
    judges = report["splits"][split]["judges"]
    eces = ", ".join(
        f"{judge} {_num(judges[judge]['ece'])} ({judges[judge]['votes']} votes)" for judge in JUDGES
    )
    return (
        f"Reliability of each judge on the {split} split: its votes binned by stated confidence; a bar "
        "stands at the share of the bin's votes that agree with the labels, the number above it is the "
        "bin's votes, and the dotted diagonal is perfect calibration. Expected calibration error (ECE, "
        f"the vote-weighted gap between bar and diagonal): {eces}."
    )


def to_html(report: dict[str, Any]) -> str:
    """The Markdown tables in a page, with a reliability diagram per split."""
    figures = "".join(
        f"<figure>{reliability_svg(report, split)}<figcaption>{html.escape(_caption(report, split))}"
        "</figcaption></figure>"
        for split in report["splits"]
    )
    body = html.escape(to_markdown(report))
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>thinkloop judge validity</title>'
        "<style>body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem}"
        "pre{white-space:pre-wrap}figure{margin:2rem 0}figure svg{max-width:100%;height:auto}"
        "figcaption{color:#444}</style></head><body>"
        f"<pre>{body}</pre>{figures}</body></html>"
    )
