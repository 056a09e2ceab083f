// Figures drawn from the report's data as SVG: estimates with their 95% intervals, and
// Kaplan-Meier curves. Okabe-Ito colours, each series also told apart by its marker and dash,
// a legend beside (never over) the plot, and a text description for screen readers.

import { h } from "./dom.js";

export const PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"];
const DASHES = ["", "6 3", "2 3", "8 3 2 3", "1 2", "10 4", "4 4"];
let serial = 0;

function frame(caption, description, width, height, body, legend) {
  serial += 1;
  const titleId = `fig-title-${serial}`;
  const descId = `fig-desc-${serial}`;
  return h("figure", {},
    h("figcaption", { id: `${titleId}-cap` }, caption),
    h("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", "aria-labelledby": `${titleId} ${descId}` },
      h("title", { id: titleId }, caption), h("desc", { id: descId }, description), body),
    legend);
}

function axisTicks(x0, x1, y, domain, ticks, format) {
  const [lo, hi] = domain;
  const scale = (v) => x0 + ((v - lo) / (hi - lo)) * (x1 - x0);
  return h("g", {},
    h("line", { x1: x0, x2: x1, y1: y, y2: y, stroke: "#4d4d4d" }),
    ticks.map((t) => h("g", {},
      h("line", { x1: scale(t), x2: scale(t), y1: y, y2: y + 5, stroke: "#4d4d4d" }),
      h("text", { x: scale(t), y: y + 18, "text-anchor": "middle" }, format(t)))));
}

/** One row per model and arm: a dot at the estimate and a whisker over its 95% interval. */
export function intervalChart(caption, rows, { domain = [0, 1], format = (v) => v.toFixed(2), axis = "" } = {}) {
  const width = 560;
  const left = 190;
  const right = width - 20;
  const rowH = 30;
  const height = 40 + rows.length * rowH + 48;
  const scale = (v) => left + ((v - domain[0]) / (domain[1] - domain[0])) * (right - left);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((t) => domain[0] + t * (domain[1] - domain[0]));
  const body = h("g", {},
    rows.map((row, i) => {
      const y = 30 + i * rowH;
      const colour = PALETTE[i % PALETTE.length];
      const known = row.value !== null && row.value !== undefined;
      return h("g", {},
        h("text", { x: left - 10, y: y + 4, "text-anchor": "end" }, row.label),
        row.low !== null && row.low !== undefined
          ? h("line", { x1: scale(row.low), x2: scale(row.high), y1: y, y2: y, stroke: colour, "stroke-width": 3 })
          : null,
        known ? h("circle", { cx: scale(row.value), cy: y, r: 6, fill: colour, stroke: "#000" })
          : h("text", { x: left + 4, y: y + 4 }, "no scored item"));
    }),
    axisTicks(left, right, 30 + rows.length * rowH, domain, ticks, format),
    h("text", { x: (left + right) / 2, y: height - 8, "text-anchor": "middle" }, axis));
  const description = rows.map((r) => `${r.label}: ${r.value === null || r.value === undefined ? "none" : format(r.value)}` +
    (r.low !== null && r.low !== undefined ? ` (95% interval ${format(r.low)} to ${format(r.high)})` : "")).join("; ");
  return frame(caption, description, width, height, body, null);
}

/** Label heights moved apart (keeping their order) so that no two are closer than ``gap``, within
 * [low, high]: curves that end at the same height get their numbers one above the other. */
export function spread(wanted, gap, low, high) {
  const order = wanted.map((v, i) => [v, i]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const placed = new Array(wanted.length);
  let previous = -Infinity;
  for (const [v, i] of order) {
    placed[i] = Math.max(v, previous + gap, low);
    previous = placed[i];
  }
  const overshoot = previous - high; // pushed past the bottom: move the whole stack up
  if (overshoot > 0) for (let i = 0; i < placed.length; i += 1) placed[i] -= overshoot;
  return placed;
}

/** Kaplan-Meier step curves: the share of problems not yet passed after each round. */
export function survivalChart(caption, series, maxRound) {
  const width = 560;
  const height = 260;
  const [left, right, top, bottom] = [60, width - 34, 15, height - 45];
  const x = (r) => left + (r / Math.max(maxRound, 1)) * (right - left);
  const y = (v) => bottom - v * (bottom - top);
  const ends = series.map((s) => (s.points.length ? s.points[s.points.length - 1].not_passed : 1));
  const labelY = spread(ends.map((v) => y(v) - 5), 16, top + 12, bottom - 4);
  const lines = series.map((s, i) => {
    let d = `M ${x(0)} ${y(1)}`;
    for (const p of s.points) d += ` H ${x(p.round)} V ${y(p.not_passed)}`;
    d += ` H ${x(maxRound)}`;
    return h("g", {},
      h("path", { d, fill: "none", stroke: PALETTE[i % PALETTE.length], "stroke-width": 2.5, "stroke-dasharray": DASHES[i % DASHES.length] || null }),
      h("text", { x: right + 14, y: labelY[i] + 4, "text-anchor": "end", "data-line-end": i + 1 }, String(i + 1)));
  });
  const rounds = Array.from({ length: maxRound + 1 }, (_, r) => r);
  const body = h("g", {},
    [0, 0.5, 1].map((v) => h("g", {},
      h("line", { x1: left, x2: right, y1: y(v), y2: y(v), stroke: "#c4c8cf", "stroke-dasharray": v === 0.5 ? "3 3" : null }),
      h("text", { x: left - 8, y: y(v) + 4, "text-anchor": "end" }, v.toFixed(1)))),
    axisTicks(left, right, bottom, [0, Math.max(maxRound, 1)], rounds, (r) => String(r)),
    h("text", { x: (left + right) / 2, y: height - 4, "text-anchor": "middle" }, "rounds (evaluations)"),
    h("text", { x: 14, y: (top + bottom) / 2, transform: `rotate(-90 14 ${(top + bottom) / 2})`, "text-anchor": "middle" }, "not yet passed"),
    lines);
  const legend = h("ul", { class: "legend" }, series.map((s, i) => h("li", {},
    h("svg", { width: 34, height: 12, "aria-hidden": "true" },
      h("line", { x1: 0, x2: 34, y1: 6, y2: 6, stroke: PALETTE[i % PALETTE.length], "stroke-width": 3, "stroke-dasharray": DASHES[i % DASHES.length] || null })),
    ` ${i + 1}. ${s.label}`)));
  const description = series.map((s) => `${s.label}: ` +
    s.points.map((p) => `after round ${p.round}, ${(100 * p.not_passed).toFixed(0)}% not yet passed`).join(", ")).join("; ");
  return frame(caption, description || "no scored item", width, height, body, legend);
}
