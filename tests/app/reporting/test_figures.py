"""The paper figures, drawn from a real batch report: every one present, vector and print-resolution,
every number with its interval, the colour-blind-safe palette only, labelled axes, and no legend
over the data."""

from __future__ import annotations

import json
import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text
from typer.testing import CliRunner

from app.cli import cli
from app.reporting import figures
from tests.helpers.problems import FLAWED_SAMPLE as SAMPLE

ALLOWED = {to_hex(c) for c in figures.PALETTE} | {"#808080", "#000000", "#ffffff"}


@pytest.fixture(scope="module")
def report(flawed_sample_report: dict[str, Any]) -> dict[str, Any]:
    return flawed_sample_report


@pytest.fixture(scope="module")
def drawn(report: dict[str, Any]) -> dict[str, Figure]:
    out = figures.draw(report)
    for figure in out.values():
        FigureCanvasAgg(figure).draw()  # lay out, so extents are final
    return out


def test_every_figure_is_drawn_from_the_report(drawn: dict[str, Figure]) -> None:
    assert list(drawn) == ["comparison", "levels", "rounds", "agreement", "flaws", "paired"]


def test_svg_is_standalone_vector_and_png_is_print_resolution(
    drawn: dict[str, Figure], report: dict[str, Any]
) -> None:
    again = figures.draw(report)
    for name, figure in drawn.items():
        svg = figures.svg(figure)
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg"), name
        assert "<image" not in svg and "<script" not in svg, name  # no raster inside, nothing active
        png = figures.png(figure)
        assert png.startswith(b"\x89PNG"), name
        width = struct.unpack(">I", png[16:20])[0]
        assert width >= figure.get_figwidth() * figures.PRINT_DPI * 0.9, name
        assert figures.svg(again[name]) == figures.svg(figures.draw(report)[name]), (
            f"{name}: not reproducible"
        )


def _colours(figure: Figure) -> set[str]:
    """Every colour of the data drawn: lines, markers, whiskers and bands."""
    seen: set[str] = set()
    for axes in figure.axes:
        for line in axes.get_lines():
            seen |= {to_hex(line.get_color()), to_hex(line.get_markerfacecolor())}
        for collection in axes.collections:
            if isinstance(collection, PolyCollection) or collection.get_array() is None:
                seen |= {to_hex(c) for c in np.asarray(collection.get_facecolor())}
                seen |= {to_hex(c) for c in np.asarray(collection.get_edgecolor())}
    return seen


def test_data_uses_the_colour_blind_safe_palette(drawn: dict[str, Figure]) -> None:
    for name, figure in drawn.items():
        stray = _colours(figure) - ALLOWED
        assert not stray, f"{name}: {stray}"


def test_every_axes_with_data_is_labelled(drawn: dict[str, Figure]) -> None:
    for name, figure in drawn.items():
        for axes in figure.axes:
            if not axes.axison or axes.get_label() == "<colorbar>":
                continue
            siblings = axes.get_shared_y_axes().get_siblings(axes)
            ticks = [t.get_text() for sibling in siblings for t in sibling.get_yticklabels()]
            assert axes.get_title() or axes.get_xlabel(), f"{name}: an axes without title or label"
            assert any(ticks) or any(a.get_ylabel() for a in siblings), f"{name}: an unlabelled y axis"


def test_no_legend_covers_an_axes(drawn: dict[str, Figure]) -> None:
    for name, figure in drawn.items():
        renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
        legends = [*figure.legends, *(lg for a in figure.axes if (lg := a.get_legend()) is not None)]
        for legend in legends:
            box = legend.get_window_extent(renderer)
            for axes in figure.axes:
                if axes.axison and axes.get_label() != "<colorbar>":
                    assert not box.overlaps(axes.get_window_extent(renderer)), f"{name}: legend over data"


def test_numbers_carry_their_intervals(drawn: dict[str, Figure], report: dict[str, Any]) -> None:
    comparison = drawn["comparison"]
    whiskers = 0
    for collection in (c for a in comparison.axes for c in a.collections):
        assert isinstance(collection, LineCollection)  # errorbar draws its whiskers as line collections
        whiskers += len(collection.get_segments())
    with_interval = sum(r["pass_rate_ci95"] is not None for r in report["rows"])
    with_interval += sum(r["avg_quality_final_ci95"] is not None for r in report["rows"])
    assert whiskers == with_interval > 0
    bands = [c for a in drawn["rounds"].axes for c in a.collections if isinstance(c, PolyCollection)]
    assert len(bands) == len([r for r in report["rows"] if r["time_to_pass"]])
    versus = next(c for c in report["comparisons"] if c["kind"] == "loop_vs_control")
    assert len(versus["pairs"]) == versus["problems"]
    title = drawn["paired"].axes[0].get_title()
    assert re.search(r"Δ = [+-]\d\.\d{3} \(95 % CI", title), title


def test_figures_are_skipped_without_their_data(report: dict[str, Any]) -> None:
    bare = {**report, "by_flaw": [], "comparisons": [], "agreement": {}}
    assert list(figures.draw(bare)) == ["comparison", "levels", "rounds"]


def test_the_cli_writes_every_figure_as_svg_and_png_with_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "b.db"
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{database}")
    runner = CliRunner()
    args = ["batch", "run", "--dataset", str(SAMPLE), "--models", "rubric", "--control", "--format", "json"]
    made = runner.invoke(cli, args)
    assert made.exit_code == 0, made.output
    batch_id = json.loads(made.output[made.output.index("{") :])["batch"]["id"]
    out = tmp_path / "figures"
    result = runner.invoke(cli, ["batch", "figures", batch_id[:8], "--out", str(out)])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    stem = f"batch-{batch_id[:12]}"
    expected = [f"{stem}-{n}.{k}" for n in figures.FIGURES for k in ("png", "svg")] + [
        f"{stem}-manifest.json"
    ]
    assert names == sorted(expected) and result.output.split() == [str(out / n) for n in _in_order(expected)]
    manifest = json.loads((out / f"{stem}-manifest.json").read_text())
    svg = (out / f"{stem}-levels.svg").read_text()
    assert manifest["dataset"]["content_hash"] in svg and batch_id in svg
    png = (out / f"{stem}-levels.png").read_bytes()
    assert manifest["dataset"]["content_hash"].encode() in png  # its Description text chunk
    bad = runner.invoke(cli, ["batch", "figures", batch_id, "--format", "gif"])
    assert bad.exit_code == 2 and "unknown format" in bad.output


def _in_order(names: list[str]) -> list[str]:
    """The order the command prints: each figure's SVG then PNG, the manifest last."""
    figures_only = [n for n in names if not n.endswith(".json")]
    ordered = sorted(
        figures_only,
        key=lambda n: (list(figures.FIGURES).index(n.rsplit("-", 1)[1].split(".")[0]), n.endswith(".png")),
    )
    return [*ordered, *(n for n in names if n.endswith(".json"))]


def test_kaplan_meier_curves_differ_without_colour(drawn: dict[str, Figure], report: dict[str, Any]) -> None:
    """In grey, or where curves overlap, each curve still has its own dash and marker: the control
    arm dashed with hollow markers, the loop solid."""
    drawn_lines = drawn["rounds"].axes[0].get_lines()
    lines = [line for line in drawn_lines if not str(line.get_label()).startswith("_")]
    assert len(lines) == len([r for r in report["rows"] if r["time_to_pass"]]) >= 2
    styles = {line.get_label(): (str(line.get_linestyle()), line.get_marker()) for line in lines}
    assert len(set(styles.values())) == len(lines), styles
    loop = next(line for line in lines if "(loop)" in str(line.get_label()))
    control = next(line for line in lines if "(control)" in str(line.get_label()))
    assert loop.get_linestyle() == "-" and control.get_linestyle() != "-"
    assert to_hex(control.get_markerfacecolor()) == "#ffffff" != to_hex(loop.get_markerfacecolor())


def test_the_levels_figure_labels_its_x_axis(drawn: dict[str, Figure]) -> None:
    """The x axis is named once for the whole figure (four names side by side ran into each other),
    and each of the seven panels shows its own ticks."""
    figure = drawn["levels"]
    shown = [axes for axes in figure.axes if axes.axison]
    assert figure.get_supxlabel() == "mean final score (0–100)"
    assert len(shown) == 7 and not any(axes.get_xlabel() for axes in shown)
    for axes in shown:
        assert any(t.get_visible() and t.get_text() for t in axes.get_xticklabels()), axes.get_title()


def test_figure_files_carry_the_whole_manifest(report: dict[str, Any]) -> None:
    from io import BytesIO

    from PIL import Image

    expected = json.loads(json.dumps(report["manifest"], default=str))
    for name in figures.FIGURES:
        svg = figures.render(report, name, "svg")
        assert svg is not None
        found = ET.fromstring(svg).find(f".//{{{figures.MANIFEST_NS}}}manifest")
        assert found is not None and found.text is not None, name
        assert json.loads(found.text) == expected, name
        png = figures.render(report, name, "png")
        assert png is not None
        with Image.open(BytesIO(png)) as image:
            text = image.text  # type: ignore[attr-defined]
        assert json.loads(text[figures.MANIFEST_KEY]) == expected, name
        assert report["batch"]["id"] in text["Description"], name
    assert figures.render(report, "levels", "svg") == figures.render(report, "levels", "svg")


def _drawn_texts(figure: Figure) -> list[tuple[str, Any]]:
    """Every visible, non-empty piece of text the figure draws, with its box on the canvas."""
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    undrawn = {id(t) for axes in figure.axes for t in _undrawn_tick_labels(axes)}
    out = []
    for text in figure.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or id(text) in undrawn:
            continue
        if text.axes is not None and not text.axes.axison and text not in text.axes.texts:
            continue  # an axes switched off draws only the texts put on it
        box = text.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            out.append((text.get_text(), box))
    return out


def _undrawn_tick_labels(axes: Any) -> list[Text]:
    """Tick labels matplotlib keeps but does not draw: those of ticks outside the view limits."""
    out = []
    for axis, (low, high) in ((axes.xaxis, axes.get_xlim()), (axes.yaxis, axes.get_ylim())):
        low, high = min(low, high), max(low, high)
        for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
            location = tick.get_loc()
            if location is None or not low - 1e-9 <= location <= high + 1e-9:
                out += [tick.label1, tick.label2]
    return out


@pytest.fixture
def fresh(report: dict[str, Any]) -> dict[str, Figure]:
    """The figures newly drawn and laid out as a file is written (the module's ``drawn`` have been
    saved at other resolutions by earlier tests, which moves their layout)."""
    out = figures.draw(report)
    for figure in out.values():
        FigureCanvasAgg(figure).draw()
    return out


def test_no_drawn_text_overlaps_another(fresh: dict[str, Figure]) -> None:
    """The boxes of the drawn texts (titles, labels, tick labels, notes, cell values) never overlap:
    each is measured with matplotlib's renderer after layout, with a 1-pixel allowance."""
    for name, figure in fresh.items():
        texts = _drawn_texts(figure)
        for i, (a, box_a) in enumerate(texts):
            for b, box_b in texts[i + 1 :]:
                overlap_w = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
                overlap_h = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
                assert overlap_w <= 1 or overlap_h <= 1, f"{name}: {a!r} overlaps {b!r}"


def test_no_drawn_text_leaves_the_figure(fresh: dict[str, Figure]) -> None:
    for name, figure in fresh.items():
        canvas = figure.bbox
        for text, box in _drawn_texts(figure):
            assert box.x0 >= -1 and box.y0 >= -1, f"{name}: {text!r} cut off"
            assert box.x1 <= canvas.x1 + 1 and box.y1 <= canvas.y1 + 1, f"{name}: {text!r} cut off"


def test_every_axis_shows_its_ticks(fresh: dict[str, Figure]) -> None:
    """Every panel with data shows its x ticks' labels, and its y ticks' labels (itself or, for small
    multiples sharing the y axis, the panel at the start of its row)."""
    for name, figure in fresh.items():
        for axes in figure.axes:
            if not axes.axison or axes.get_label() == "<colorbar>":
                continue
            shown_x = [t for t in axes.get_xticklabels() if t.get_visible() and t.get_text()]
            assert shown_x, f"{name}: the panel {axes.get_title()!r} has no x tick labels"
            row = [
                a
                for a in axes.get_shared_y_axes().get_siblings(axes)
                if a.get_position().y0 == axes.get_position().y0
            ]
            shown_y = [t for a in row for t in a.get_yticklabels() if t.get_visible() and t.get_text()]
            assert shown_y, f"{name}: the panel {axes.get_title()!r} has no y tick labels"


def test_kappa_is_not_shown_as_zero_where_it_is_undefined(
    fresh: dict[str, Figure], report: dict[str, Any]
) -> None:
    """A judge that passed every version makes Cohen's κ undefined (the formula gives 0 whatever the
    other judge did): its cells read n/a, and the figure says which judge and why."""
    constant = {arm: figures.constant_judges(data) for arm, data in report["agreement"].items()}
    assert any(constant.values()), "the sample batch has a judge that always passes"
    shown = [t.get_text() for t in fresh["agreement"].findobj(Text)]
    note = next(t for t in shown if t.startswith("n/a: κ undefined"))
    for arm, judges in constant.items():
        for judge in judges:
            assert f"{arm}: {judge} passed every version" in note
    for axes in fresh["agreement"].axes[: len(report["agreement"])]:
        judges = [t.get_text() for t in axes.get_yticklabels()]
        cells = {
            (round(t.get_position()[1] - 0.5), round(t.get_position()[0] - 0.5)): t.get_text()
            for t in axes.texts
        }
        arm = axes.get_title().split(":")[0]
        for judge in constant[arm]:
            row = judges.index(judge)
            off_diagonal = [cells[(row, column)] for column in range(len(judges)) if column != row]
            assert off_diagonal == ["n/a"] * (len(judges) - 1), (arm, judge, off_diagonal)
