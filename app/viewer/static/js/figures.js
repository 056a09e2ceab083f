// The report's six figures as the server draws them for a paper (GET /v1/batches/{id}/figures/NAME,
// the same SVG `thinkloop batch figures` writes), read with the key like every call and shown as
// blob: images with a text alternative; a figure the batch has no data for says why instead.

import { ApiError, api } from "./api.js";
import { fill, h, short } from "./dom.js";

// name, caption, alt text (the HTML report's words)
export const FIGURES = [
  ["comparison", "Pass rate and AvgQualityScore per model and arm",
    "Dot-and-whisker plot: pass rate and final AvgQualityScore per model and arm, 95% CIs"],
  ["levels", "Final score per Bloom level and the holistic judge",
    "Small multiples: mean final score per Bloom level and the holistic judge, per model and arm"],
  ["rounds", "Rounds to pass, Kaplan-Meier with 95% bands",
    "Kaplan-Meier curves: share of problems not yet passed after each round, with 95% bands"],
  ["agreement", "Agreement between judges (Cohen's kappa)",
    "Heatmap per arm: Cohen's kappa between every two judges"],
  ["flaws", "Pass rate per labelled flaw type",
    "Dot-and-whisker plot: pass rate per labelled flaw type, per model and arm, with 95% intervals"],
  ["paired", "Loop against control on the same problems",
    "Slope chart: each problem's final quality under the control and under the loop"],
];

async function load(slot, batchId, [name, caption, alt], { signal, urls }) {
  try {
    const blob = await api(`/v1/batches/${batchId}/figures/${name}?format=svg`, { signal, accept: "image/svg+xml" });
    const url = URL.createObjectURL(blob);
    urls.push(url);
    fill(slot, h("figcaption", {}, caption), h("img", { src: url, alt, "data-figure-image": name }),
      h("a", { href: url, download: `batch-${short(batchId)}-${name}.svg` }, `Download the ${name} figure (SVG)`));
  } catch (error) {
    if (signal.aborted) return;
    const why = error instanceof ApiError && error.status === 404 ? error.message : `It could not be loaded: ${error.message}`;
    fill(slot, h("figcaption", {}, caption), h("p", { class: "note", "data-no-figure": name }, why));
  }
}

/** A grid of the six figures; each fills in when its SVG arrives (one at a time: each is drawn
 * from the whole report, CPU work on the server). */
export function paperFigures(batchId, { signal }) {
  const slots = FIGURES.map(([name, caption]) =>
    h("figure", { "data-figure": name }, h("figcaption", {}, caption), h("p", { class: "note" }, "Drawing…")));
  const urls = [];
  signal.addEventListener("abort", () => urls.forEach((url) => URL.revokeObjectURL(url)));
  const grid = h("div", { class: "grid2 paper", "aria-busy": "true" }, slots);
  (async () => {
    for (const [i, figure] of FIGURES.entries()) {
      if (signal.aborted) return;
      await load(slots[i], batchId, figure, { signal, urls });
    }
    grid.removeAttribute("aria-busy");
  })();
  return grid;
}
