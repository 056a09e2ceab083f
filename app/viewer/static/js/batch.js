// A batch's page: live progress over its event stream, the per-model table with 95% intervals and
// figures from its report (and the server's six figures for a paper), its comparisons, and its
// items (each a run: one click to its trace).

import { api, follow, query } from "./api.js";
import { intervalChart, survivalChart } from "./charts.js";
import { paperFigures } from "./figures.js";
import { append, badge, fill, fmt, h, interval, labelled, pct, select, short, table, warrantBadge, when } from "./dom.js";

const ENDED = new Set(["completed", "cancelled", "budget_exhausted"]);
// An item's status is its run's: queued, running, then how it ended (the outcomes).
const ITEM_STATUSES = ["", "queued", "running", "accepted", "screened", "exhausted", "needs_review", "error", "cancelled"];
const OUTCOMES = ["", "accepted", "screened", "exhausted", "needs_review", "error", "cancelled"];

function progressBlock(state) {
  const counts = Object.entries(state.items).filter(([, n]) => n).map(([k, n]) => `${k} ${n}`).join(" · ");
  const eta = state.eta_s ? ` · about ${Math.ceil(state.eta_s)} s left` : "";
  return [
    h("p", {}, "Status ", badge(state.status), state.stop_reason ? ` · ${state.stop_reason}` : ""),
    h("progress", { max: state.total || 1, value: state.finished, "aria-label": "Items finished" }),
    h("p", { "data-finished": state.finished, "data-total": state.total },
      `${state.finished} of ${state.total} items finished`, counts ? ` (${counts})` : "", eta,
      ` · ${state.input_tokens + state.output_tokens} tokens · $${state.cost_usd.toFixed(4)}`),
  ];
}

const label = (row) => `${row.model} (${row.arm})`;

function qualityDomain(rows) {
  const values = rows.flatMap((r) => [r.avg_quality_final, ...(r.avg_quality_final_ci95 || [])]).filter((v) => v !== null && v !== undefined);
  return values.some((v) => v > 1) ? [0, 100] : [0, 1]; // reports written before quality moved to 0-1
}

function modelTable(rows, screen) {
  // A batch judged by the offline panel is a screen: its passes passed the screen, never accepted.
  const pass = screen ? "Screen pass rate" : "Pass rate";
  const median = (t) => (!t ? "—" : t.median === null ? `> ${t.limit}` : `${t.median} (${interval(t.median_ci95, 1, 0)})`);
  return table("Per model and arm: scored items only, 95% intervals over problems", [
    { label: "Model", cell: (r) => r.model },
    { label: "Arm", cell: (r) => r.arm },
    { label: "Scored items / problems", num: true, cell: (r) => `${r.scored_items} / ${r.problems}` },
    { label: "Not scored", num: true, cell: (r) => r.items.total - r.scored_items },
    { label: `${pass} (Wilson 95%)`, num: true, cell: (r) => `${pct(r.pass_rate)} (${interval(r.pass_rate_ci95, 100, 1)})` },
    { label: "AvgQualityScore final (BCa 95%)", num: true, cell: (r) => `${fmt(r.avg_quality_final)} (${interval(r.avg_quality_final_ci95)})` },
    { label: screen ? "Rounds to pass the screen (passers)" : "Rounds to pass (passers)", num: true, cell: (r) => fmt(r.rounds_to_pass_passers, 2) },
    { label: "Median rounds to pass (KM, 95%)", num: true, cell: (r) => median(r.time_to_pass) },
    { label: "Cost (USD)", num: true, cell: (r) => r.cost_usd.toFixed(4) },
  ], rows);
}

function comparisonTable(comparisons) {
  return table("Paired comparisons on the same problems (p-values Holm-adjusted across the report)", [
    { label: "A", cell: (c) => c.a },
    { label: "B", cell: (c) => c.b },
    { label: "Problems", num: true, cell: (c) => c.problems },
    { label: "Pass A / B", num: true, cell: (c) => `${pct(c.pass_rate_a)} / ${pct(c.pass_rate_b)}` },
    { label: "Only A / only B passed", num: true, cell: (c) => `${c.a_only} / ${c.b_only}` },
    { label: "McNemar p (Holm)", num: true, cell: (c) => `${fmt(c.mcnemar_p)} (${fmt(c.mcnemar_p_holm)})` },
    { label: "ΔAvgQualityScore A−B (95%)", num: true, cell: (c) => `${fmt(c.delta_avg_quality)} (${interval(c.delta_ci95)})` },
    { label: "Corrected pass A / B", cell: (c) => (c.corrected ? `${pct(c.corrected.a)} / ${pct(c.corrected.b)}: ${c.corrected.verdict}` : "uncorrected") },
  ], comparisons);
}

// Each arm's pass rate raw and corrected for the panel's measured error, or why it is not corrected.
function correctionBlock(correction) {
  if (!correction) return null; // a report stored before the correction
  const record = correction.record;
  const said = correction.status === "corrected"
    ? `Corrected for the panel's measured error: record ${short(record.record_id)}, ${record.false_accepts} of ${record.flawed} flawed problems passed, ${record.sound_passed} of ${record.sound} sound versions passed. ${correction.method}.`
    : `The pass rates are uncorrected: ${correction.reason}.`;
  const corrected = (r) => (r.corrected === null ? (r.could_swap ? "no better than chance" : "—") : `${pct(r.corrected)} (${interval(r.corrected_ci95, 100, 1)})`);
  const ppi = (r) => (!r.ppi ? "—" : r.ppi.estimate === null ? `${r.ppi.labelled} labelled (no estimate)` : `${pct(r.ppi.estimate)} (${interval(r.ppi.ci95, 100, 1)}), ${r.ppi.labelled} labelled`);
  return h("section", { "data-correction": correction.status },
    h("h3", {}, "Pass rates corrected for the judges' error"),
    h("p", { class: "note" }, said),
    table("Pass rate raw, corrected (Rogan–Gladen, 95%) and prediction-powered (95%)", [
      { label: "Model", cell: (r) => r.model },
      { label: "Arm", cell: (r) => r.arm },
      { label: "Problems", num: true, cell: (r) => r.problems },
      { label: "Pass rate (raw)", num: true, cell: (r) => pct(r.pass_rate) },
      { label: "Corrected (95%)", num: true, cell: corrected },
      { label: "PPI (95%)", num: true, cell: ppi },
    ], correction.rows));
}

function figures(rows, maxRounds) {
  const domain = qualityDomain(rows);
  const digits = domain[1] > 1 ? 0 : 2;
  const km = rows.filter((r) => r.time_to_pass).map((r) => ({ label: label(r), points: r.time_to_pass.curve }));
  return h("div", { class: "grid2" },
    intervalChart("Pass rate with its Wilson 95% interval", rows.map((r) => ({
      label: label(r), value: r.pass_rate, low: r.pass_rate_ci95?.[0], high: r.pass_rate_ci95?.[1] })),
    { format: (v) => `${Math.round(100 * v)}%`, axis: "pass rate over problems" }),
    intervalChart("AvgQualityScore (final) with its BCa 95% interval", rows.map((r) => ({
      label: label(r), value: r.avg_quality_final, low: r.avg_quality_final_ci95?.[0], high: r.avg_quality_final_ci95?.[1] })),
    { domain, format: (v) => v.toFixed(digits), axis: "final quality" }),
    survivalChart("Rounds to pass (Kaplan-Meier)", km, maxRounds));
}

async function reportSection(section, batch, { signal }) {
  const report = await api(`/v1/batches/${batch.id}/report`, { signal });
  const download = h("button", { type: "button", class: "secondary", onclick: async () => {
    const blob = await api(`/v1/batches/${batch.id}/report?format=html`, { signal, accept: "text/html" });
    const link = h("a", { href: URL.createObjectURL(blob), download: `batch-${short(batch.id)}-report.html` });
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  } }, "Download the HTML report");
  const models = [...new Set(report.rows.map((r) => r.model))];
  const compare = models.length >= 2
    ? h("a", { href: `#/compare${query({ a: batch.id, model_a: models[0], b: batch.id, model_b: models[1] })}` }, `Compare ${models[0]} with ${models[1]}`)
    : null;
  fill(section,
    h("h2", { id: "results-h" }, "Results"),
    h("div", { class: "toolbar" }, download, compare,
      h("a", { href: `#/compare${query({ a: batch.id, model_a: models[0] })}` }, "Compare with another batch")),
    modelTable(report.rows, Boolean(report.batch?.screen)),
    correctionBlock(report.correction),
    report.comparisons.length ? comparisonTable(report.comparisons) : null,
    h("h2", {}, "Figures"),
    figures(report.rows, batch.max_rounds),
    h("h3", {}, "The report's figures for a paper"),
    h("p", { class: "note" }, "As ", h("code", {}, "thinkloop batch figures"), " writes them: vector SVG carrying the batch's manifest."),
    paperFigures(batch.id, { signal }));
}

function itemsSection(section, batch, params, { signal, navigate }) {
  const form = h("form", { class: "filters", "aria-label": "Filter items", onsubmit: (event) => {
    event.preventDefault();
    navigate(`#/batches/${batch.id}${query(Object.fromEntries(new FormData(form)))}`);
  } },
  labelled("Item status", select("status", ITEM_STATUSES.map((s) => [s, s ? s.replace("_", " ") : "any"]), params.status || "")),
  labelled("Outcome", select("outcome", OUTCOMES.map((s) => [s, s ? s.replace("_", " ") : "any"]), params.outcome || "")),
  h("button", { type: "submit" }, "Filter items"));
  const body = h("div", {});
  fill(section, h("h2", { id: "items-h" }, "Items"), form, body);
  const columns = [
    { label: "Item", cell: (i) => (i.run_id ? h("a", { href: `#/runs/${i.run_id}` }, `#${i.id}`) : `#${i.id}`) },
    { label: "Problem", cell: (i) => (i.dataset_item_id
      ? h("span", { title: `problem ${i.problem_id}`, "data-dataset-id": i.dataset_item_id }, i.dataset_item_id)
      : h("span", { title: `problem ${i.problem_id} (its dataset row has no id)` }, short(i.problem_id))) },
    { label: "Model", cell: (i) => i.model },
    { label: "Arm", cell: (i) => i.arm },
    { label: "Repeat", num: true, cell: (i) => i.repeat },
    { label: "Status", cell: (i) => badge(i.status) },
    { label: "Outcome", cell: (i) => (i.outcome ? [badge(i.outcome), " ", warrantBadge(i.warrant)] : "—") },
    { label: "Rounds", num: true, cell: (i) => i.rounds },
    { label: "Final Q", num: true, cell: (i) => fmt(i.final_quality) },
    { label: "Cache hits", num: true, cell: (i) => i.cache_hits },
    { label: "Error", cell: (i) => i.error || "" },
  ];
  const more = async (cursor) => {
    const page = await api(`/v1/batches/${batch.id}/items${query({ status: params.status, outcome: params.outcome, limit: 100, cursor })}`, { signal });
    append(body, page.items.length || cursor ? table(cursor ? "More items" : "Items in order (a finished item links to its run)", columns, page.items)
      : h("p", {}, "No item matches."));
    if (page.next_cursor) {
      const button = h("button", { type: "button", class: "secondary", onclick: () => { button.remove(); more(page.next_cursor); } }, "Load more items");
      append(body, button);
    }
  };
  return more(undefined);
}

export async function batchView(main, batchId, params, context) {
  const { signal, announce } = context;
  const batch = await api(`/v1/batches/${encodeURIComponent(batchId)}`, { signal });
  document.title = `Batch ${short(batch.id)} · thinkloop viewer`;
  const progress = h("div", { id: "progress" });
  const results = h("section", { "aria-labelledby": "results-h" });
  const items = h("section", { "aria-labelledby": "items-h" });
  fill(main,
    h("h1", { tabindex: "-1" }, `Batch ${short(batch.id)}`),
    h("dl", { class: "meta" },
      h("dt", {}, "Batch id"), h("dd", {}, h("code", {}, batch.id)),
      h("dt", {}, "Models under test"), h("dd", {}, batch.models.join(", ")),
      h("dt", {}, "Judge model · policy"), h("dd", {}, `${batch.judge_model} · ${batch.policy}`),
      h("dt", {}, "Rounds · repeats · control arm"), h("dd", {}, `${batch.max_rounds} · ${batch.repeats} · ${batch.control_arm ? "yes" : "no"}`),
      h("dt", {}, "Dataset"), h("dd", {}, h("code", {}, batch.dataset_id)),
      h("dt", {}, "Created"), h("dd", {}, when(batch.created_at))),
    h("section", { "aria-labelledby": "progress-h" }, h("h2", { id: "progress-h" }, "Progress"), progress),
    results, items);
  fill(progress, progressBlock(batch.progress));
  await Promise.all([reportSection(results, batch, context), itemsSection(items, batch, params, context)]);
  if (ENDED.has(batch.progress.status)) return;
  let over = false;
  const onEvent = (kind, state) => {
    fill(progress, progressBlock(state));
    if (kind === "batch.finished") over = true;
  };
  follow(`/v1/batches/${batch.id}/events`, onEvent, { signal, isOver: () => over })
    .then(async () => {
      await Promise.all([reportSection(results, batch, context), itemsSection(items, batch, params, context)]);
      announce("The batch has finished; its results are updated.");
    })
    .catch((error) => { if (!signal.aborted) append(progress, h("p", { class: "error" }, error.message)); });
}
