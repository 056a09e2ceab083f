"""The validity report as Markdown (and HTML with a reliability diagram)."""

from __future__ import annotations

import html
import io
import re
from typing import Any

from agents.schemas import JUDGES


def rate(share: dict[str, Any]) -> str:
    """``x/n = r % (95 % CI lo–hi %)``, with the versions excluded from n named after it."""
    excluded = f"; {share['excluded']} excluded" if share.get("excluded") else ""
    if not share["n"]:
        return f"0/0: nothing judged{excluded}"
    return (
        f"{share['count']}/{share['n']} = {_percent(share['rate'])} "
        f"(95 % CI {_percent(share['low'], unit=False)}–{_percent(share['high'])}){excluded}"
    )


def _percent(value: float, *, unit: bool = True) -> str:
    return f"{100 * value:.1f}" + (" %" if unit else "")


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _rows(offline: bool) -> tuple[tuple[str, str], ...]:
    """The headline measures and their names (the offline panel is a screen: it lets flaws through)."""
    passed = "passed the screen" if offline else "accepted"
    detection = (
        "detection (refused, a check matching the flaw fired)"
        if offline
        else "detection (refused: a judge of the flaw's levels named its evidence, the verifier found "
        "it, or the solver reached the answer key)"
    )
    solver = () if offline else (("solver_accuracy", "solver answered the answer key (versions with one)"),)
    return (
        ("detection", detection),
        ("refused_other", "refused for another reason (no matching check fired)"),
        *solver,
        (
            "false_accept",
            "let through (flawed, passed the screen)" if offline else "false accepts (flawed, accepted)",
        ),
        ("specificity", f"specificity (sound versions {passed})"),
        ("corrected_accepted", f"corrected versions {passed}"),
        ("controls_accepted", f"controls {passed}"),
        ("adversarial_gap", f"adversarial gap (twins {passed})"),
        ("paraphrases_accepted", f"paraphrases {passed}"),
    )


def _header(report: dict[str, Any]) -> list[str]:
    excluded, calls = report["excluded"], report["calls"]
    lines = [
        f"# Judge validity: `{report['judge_model']}` ({report['policy']} policy)",
        "",
        f"{report['items']} labelled items; {report['versions']} versions sent to the panel"
        + (" (with adversarial twins)" if report["twins"] else "")
        + f": {report['judged']} judged, {excluded['total']} excluded ({excluded['errored']} errored, "
        f"{excluded['undecided']} undecided). {calls['total']} judge calls: {calls['failed']} failed, "
        f"{calls['abstained']} abstained.",
    ]
    if report["offline"]:
        lines += [
            "",
            "The offline panel is a screen: it refuses with evidence and never certifies; a flawed "
            "version it finds nothing in is *let through*.",
        ]
    if not report["complete"]:
        lines += [
            "",
            f"**INCOMPLETE: {excluded['total']} of {report['versions']} versions did not end in the "
            "panel's verdict (errored or undecided). They are in no rate below; each denominator "
            "counts only judged versions.**",
        ]
    return lines


def _sources(report: dict[str, Any]) -> list[str]:
    """Per source, first: no one set's figure is the headline when several were judged."""
    sources = report.get("by_source") or {}  # reports made before sources were kept have none
    if not sources:
        return []
    let_through = "let through" if report["offline"] else "false accepts"
    lines = [
        "",
        "## By source",
        "",
        f"| source | kind | {let_through} | specificity | detection | pairs told apart |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in sources.items():
        cells = [s["false_accept"], s["specificity"], s["detection"], s["pairs_told_apart"]]
        lines.append(f"| {name} | {s['kind'] or '-'} | " + " | ".join(rate(c) for c in cells) + " |")
    for name, s in sources.items():
        if s["by_category"]:
            lines += ["", f"{name}, {let_through} by its own category:", ""]
            lines += [f"- {category}: {rate(c)}" for category, c in s["by_category"].items()]
    return lines


def _headline(report: dict[str, Any]) -> list[str]:
    splits = report["splits"]
    lines = [
        "",
        "Each cell: count/n judged = rate (Wilson 95 % interval); versions excluded from n follow it.",
        "",
        "| measure | " + " | ".join(splits) + " |",
        "|---|" + "---|" * len(splits),
    ]
    for key, name in _rows(report["offline"]):
        lines.append(f"| {name} | " + " | ".join(rate(s[key]) for s in splits.values()) + " |")
    for split, s in splits.items():
        sound = s["specificity"]
        if s["refuses_every_sound"]:
            lines.append(
                f"\n**{split}: this panel refused every sound version (0/{sound['n']}): its detection "
                "says nothing.**"
            )
        if s["excluded"]["total"]:
            ex = s["excluded"]
            lines.append(
                f"\n{split}: n = {s['judged']} judged; {ex['errored']} errored, {ex['undecided']} "
                f"undecided, excluded: {', '.join(ex['versions'][:20])}"
                + (" …" if len(ex["versions"]) > 20 else "")
            )
    return lines


def _targets(report: dict[str, Any]) -> list[str]:
    targets = report["targets"]
    if not targets["claimed"]:
        return ["", f"Targets ({targets['split']}): not claimed: {targets['reason']}."]
    lines = ["", f"Targets on the {targets['split']} split:"]
    said = {True: "met", False: "NOT met", None: "not measured (nothing of that kind was judged)"}
    return lines + [f"- {name}: {said[ok]}" for name, ok in targets["met"].items()]


def _split_section(split: str, s: dict[str, Any], offline: bool) -> list[str]:
    passed = "let through" if offline else "false accepts"
    lines = [
        "",
        f"## {split}: by flaw type",
        "",
        f"| flaw | items | detection | refused for another reason | {passed} | twins passed |",
        "|---|---|---|---|---|---|",
    ]
    for kind, row in s["by_flaw"].items():
        cells = (rate(row[key]) for key in ("detection", "refused_other", "false_accept", "twins_accepted"))
        lines.append(f"| {kind} | {row['n']} | " + " | ".join(cells) + " |")
    if s["twin_forms"]:
        lines += ["", "| twin form | twins passed |", "|---|---|"]
        lines += [f"| {form} | {rate(share)} |" for form, share in s["twin_forms"].items()]
    lines += ["", "| judge | votes | agreement with labels | Cohen's κ | ECE |", "|---|---|---|---|---|"]
    for judge in JUDGES:
        j = s["judges"][judge]
        lines.append(
            f"| {judge} | {j['votes']} | {rate(j['agreement'])} | {_num(j['kappa'])} | {_num(j['ece'])} |"
        )
    for label, key in (
        (passed, "false_accepts"),
        ("refused for another reason", "refused_for_another_reason"),
        ("sound versions refused", "rejected_sound"),
        ("twins passed", "twins_accepted"),
    ):
        if s[key]:
            lines.append(f"\n{label}: {', '.join(s[key])}")
    return lines


def _why(report: dict[str, Any]) -> list[str]:
    """Each excluded version with its causes, and each failed solver call."""
    excluded, lines = report["excluded"].get("causes", []), []
    if excluded:
        lines += ["", "## Why versions were excluded", ""]
        for entry in excluded:
            lines.append(f"- {entry['version']}: {entry['ended']}")
            lines += [f"  - {cause}" for cause in entry["causes"]]
    solver = report.get("solver_failures", [])
    if solver:
        lines += ["", "## Failed solver calls", ""] + [f"- {line}" for line in solver]
    return lines


def _votes_worth(report: dict[str, Any]) -> list[str]:
    """Each judge's error rate, how the judges' errors go together, n_eff and the smallest subset."""
    worth = report.get("votes_worth")  # reports made before it was measured have none
    lines = [f"\n**Warning (self-preference): {line}.**" for line in report.get("self_preference", [])]
    if not worth:
        return lines
    lines += [
        "",
        f"## What the panel's votes are worth ({worth['split']})",
        "",
        "A judge's error is its vote against the version's label (passing a flawed version or a twin, "
        "failing a sound one).",
        "",
        "| judge | errors (Wilson 95 %) |",
        "|---|---|",
    ]
    lines += [f"| {judge} | {rate(errors)} |" for judge, errors in worth["judges"].items()]
    lines += ["", "| judges | versions both judged | phi of their errors |", "|---|---|---|"]
    lines += [f"| {' & '.join(p['judges'])} | {p['n']} | {_num(p['phi'])} |" for p in worth["pairs"]]
    n_eff = (
        "unknown (no pair's correlation is defined)" if worth["n_eff"] is None else f"{worth['n_eff']:.2f}"
    )
    lines += [
        "",
        f"Mean pairwise error correlation ρ̄ = {_num(worth['mean_phi'])}; effective independent votes "
        f"n_eff = m / (1 + (m − 1)·max(ρ̄, 0)) = {n_eff} of m = {worth['m']} judges (Kish).",
    ]
    subset = worth["smallest_subset"]
    if subset:
        lines += [
            "",
            f"Smallest subset deciding within the full panel's intervals: {', '.join(subset['judges'])} "
            f"({subset['size']} of {worth['m']}): false accepts {rate(subset['false_accept'])} against "
            f"{rate(subset['full']['false_accept'])}; specificity {rate(subset['specificity'])} against "
            f"{rate(subset['full']['specificity'])}.",
        ]
    return lines


def to_markdown(report: dict[str, Any]) -> str:
    """The counts, the headline rates per split (each with n and its Wilson interval), whether the
    targets can be claimed, what the panel's votes are worth, why versions were excluded, and per
    split the figures per flaw type, twin form and judge."""
    lines = _header(report) + _sources(report) + _headline(report) + _targets(report) + _votes_worth(report)
    lines += _why(report)
    for split, s in report["splits"].items():
        lines += _split_section(split, s, report["offline"])
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
