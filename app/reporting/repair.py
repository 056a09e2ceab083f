"""The repair bench's report as Markdown: per reviser, overall then per flaw type, the repair rate,
accepted but wrong and gave up, each with n and its Wilson 95 % interval."""

from __future__ import annotations

from typing import Any

HEAD = (
    "| flaw type | n | repaired | accepted but wrong | gave up | unrevised | givens changed | unverified "
    "| undecided |",
    "|---|---|---|---|---|---|---|---|---|",
)


def rate_cell(figure: dict[str, Any]) -> str:
    """A share as ``count/n  rate % (low–high)``; an em dash when nothing was decided."""
    if not figure["n"]:
        return "—"
    low, high = 100 * figure["low"], 100 * figure["high"]
    return f"{figure['count']}/{figure['n']} {100 * figure['rate']:.1f} % ({low:.1f}–{high:.1f})"


def _row(name: str, figures: dict[str, Any]) -> str:
    counts = figures["counts"]
    cells = [
        name,
        str(figures["decided"]),
        rate_cell(figures["repaired"]),
        rate_cell(figures["accepted_but_wrong"]),
        rate_cell(figures["gave_up"]),
        str(counts["unrevised"]),
        str(counts["givens_changed"]),
        str(counts["unverified"]),
        str(counts["undecided"]),
    ]
    return "| " + " | ".join(cells) + " |"


def to_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: one table per reviser model."""
    passed = "screened (passed the offline screen)" if report["screen"] else "accepted"
    lines = [
        f"# Repair: {report['problems']} flawed problems with a corrected version ({report['set']}, "
        f"{report['split']})",
        "",
        f"Judges `{report['judge_model']}`, policy `{report['policy']}`, at most {report['max_rounds']} "
        f"rounds. Repaired: {passed}, the verifier checked the chain, the answer is the corrected "
        "version's, the givens are the original's or the correction's, and it is not the flawed "
        "original unrevised. Rates over the decided runs, with Wilson 95 % intervals; undecided runs "
        "(error, held for review) enter no rate.",
    ]
    if report["unkeyed"]:
        lines += ["", f"Not measured (no answer key can be read): {', '.join(report['unkeyed'])}."]
    for reviser, figures in report["figures"].items():
        lines += ["", f"## Reviser `{reviser}`", "", *HEAD, _row("**all**", figures["overall"])]
        lines += [_row(flaw, f) for flaw, f in figures["by_flaw"].items()]
    return "\n".join(lines) + "\n"
