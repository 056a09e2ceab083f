"""The validity report as Markdown (and HTML with a reliability diagram)."""

from __future__ import annotations

import io
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
        "| split | detection (round 1) | false accepts | specificity | corrected accepted | adversarial gap | paraphrases kept |",
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
            lines.append(
                f"| {kind} | {row['n']} | {_num(row['detection'], 2)} | {_num(row['false_accept'], 2)} | {_num(row['twins_accepted'], 2)} |"
            )
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
    """Each judge's confidence against how often it was right (the diagonal is perfect calibration)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 5))
    axes = figure.add_subplot()
    axes.plot([0, 1], [0, 1], linestyle=":", color="grey", label="perfect calibration")
    for judge in JUDGES:
        table = report["splits"][split]["judges"][judge]["reliability"]
        if table:
            axes.plot(
                [r["confidence"] for r in table], [r["accuracy"] for r in table], marker="o", label=judge
            )
    axes.set_xlabel("stated confidence")
    axes.set_ylabel("share of votes that agree with the labels")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.02)
    axes.set_title(f"Reliability of the judges ({split})")
    axes.legend(fontsize="small", loc="lower right")
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    return buffer.getvalue()


def to_html(report: dict[str, Any]) -> str:
    """The Markdown tables in a page, with a reliability diagram per split."""
    import html

    svgs = "".join(f"<figure>{reliability_svg(report, split)}</figure>" for split in report["splits"])
    body = html.escape(to_markdown(report))
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>thinkloop judge validity</title>'
        "<style>body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem}"
        "pre{white-space:pre-wrap}</style></head><body>"
        f"<pre>{body}</pre>{svgs}</body></html>"
    )
