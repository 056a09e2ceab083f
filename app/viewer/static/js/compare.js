// Two batches, or two models of one batch, side by side on the problems both scored: paired
// differences and the problems where they disagree (each side's runs one click away). Within one
// batch the report's own comparison (McNemar, BCa interval, Wilcoxon, Holm) is shown beside it; for
// any two sides the server's compare endpoint gives the paired mean's BCa interval and Wilcoxon p.

import { allPages, api, query } from "./api.js";
import { append, badge, fill, fmt, h, interval, labelled, pct, select, short, table } from "./dom.js";

const SCORED = new Set(["accepted", "screened", "exhausted"]);
const PASSED = new Set(["accepted", "screened"]); // screened: passed the offline screen (not accepted)
const SHOWN = 50; // disagreements shown (with their question) before "show all"

function side(name, batches, params) {
  const batchId = params[name] || batches[0]?.id || "";
  const models = () => batches.find((b) => b.id === batchSelect.value)?.models ?? [];
  const batchSelect = select(name, batches.map((b) => [b.id, `${short(b.id)} · ${b.models.join(", ")} · ${b.progress.status}`]), batchId);
  const modelSelect = select(`model_${name}`, [], "");
  const armSelect = select(`arm_${name}`, [["loop", "loop"], ["control", "control"]], params[`arm_${name}`] || "loop");
  const refill = (wanted) => {
    fill(modelSelect, models().map((m) => h("option", { value: m, selected: m === wanted }, m)));
  };
  batchSelect.addEventListener("change", () => refill(""));
  refill(params[`model_${name}`]);
  return h("fieldset", {}, h("legend", {}, name === "a" ? "Side A" : "Side B"),
    labelled("Batch", batchSelect), labelled("Model", modelSelect), labelled("Arm", armSelect));
}

function byProblem(items) {
  const out = new Map();
  for (const item of items) {
    if (!SCORED.has(item.outcome)) continue;
    const entry = out.get(item.problem_id) ?? { passes: 0, n: 0, qualities: [], runs: [], outcomes: [] };
    entry.n += 1;
    entry.passes += PASSED.has(item.outcome) ? 1 : 0;
    if (item.final_quality !== null) entry.qualities.push(item.final_quality);
    if (item.run_id) entry.runs.push(item.run_id);
    entry.outcomes.push(item.outcome);
    out.set(item.problem_id, entry);
  }
  for (const entry of out.values()) {
    entry.share = entry.passes / entry.n;
    entry.pass = entry.share >= 0.5; // as the report's comparisons count a problem as passed
    entry.quality = entry.qualities.length ? entry.qualities.reduce((s, q) => s + q, 0) / entry.qualities.length : null;
  }
  return out;
}

/** The exact two-sided McNemar p-value (binomial on the discordant pairs), as the report's. */
export function mcnemarExact(aOnly, bOnly) {
  const n = aOnly + bOnly;
  const k = Math.min(aOnly, bOnly);
  let logC = 0;
  let tail = 0;
  for (let i = 0; i <= k; i += 1) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i);
    tail += Math.exp(logC - n * Math.LN2);
  }
  return Math.min(1, 2 * tail);
}

async function loadSide(ref, { signal }) {
  const items = await allPages(`/v1/batches/${encodeURIComponent(ref.batch)}/items`, { limit: 500 }, { signal });
  return byProblem(items.filter((i) => i.model === ref.model && i.arm === ref.arm));
}

function pairs(left, right) {
  return [...left.keys()].filter((p) => right.has(p)).map((problem) => {
    const a = left.get(problem);
    const b = right.get(problem);
    const delta = a.quality !== null && b.quality !== null ? a.quality - b.quality : null;
    return { problem, a, b, delta, disagree: a.pass !== b.pass };
  });
}

function summary(rows, names, stats) {
  const aOnly = rows.filter((r) => r.a.pass && !r.b.pass).length;
  const bOnly = rows.filter((r) => r.b.pass && !r.a.pass).length;
  const deltas = rows.map((r) => r.delta).filter((d) => d !== null);
  const mean = (xs) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);
  return table(`${names.a} (A) against ${names.b} (B), on the ${rows.length} problems both scored`, [
    { label: "Problems", num: true, cell: () => rows.length },
    { label: "Pass rate A", num: true, cell: () => pct(mean(rows.map((r) => (r.a.pass ? 1 : 0)))) },
    { label: "Pass rate B", num: true, cell: () => pct(mean(rows.map((r) => (r.b.pass ? 1 : 0)))) },
    { label: "Only A / only B passed", num: true, cell: () => `${aOnly} / ${bOnly}` },
    { label: "Exact McNemar p", num: true, cell: () => (rows.length ? fmt(mcnemarExact(aOnly, bOnly)) : "—") },
    { label: "Mean final Q, A − B (paired)", num: true, cell: () => fmt(mean(deltas)) },
    // From the server (the report's statistics): the BCa interval and Wilcoxon test of that mean.
    { label: "Its BCa 95% interval", num: true, cell: () => (stats ? interval(stats.delta_ci95) : "—") },
    { label: "Wilcoxon p", num: true, cell: () => (stats ? fmt(stats.delta_p) : "—") },
  ], [{}]);
}

function runLinks(entry, side) {
  return entry.runs.map((run, i) => [i ? " " : "", h("a", { href: `#/runs/${run}` }, `${side} run ${i + 1}`)]);
}

function problemTable(caption, rows, withQuestion) {
  const cells = [
    { label: "Problem", cell: (r) => (withQuestion ? h("span", { "data-question": r.problem }, short(r.problem)) : short(r.problem)) },
    { label: "A outcome", cell: (r) => r.a.outcomes.map((o) => badge(o)) },
    { label: "B outcome", cell: (r) => r.b.outcomes.map((o) => badge(o)) },
    { label: "Final Q A", num: true, cell: (r) => fmt(r.a.quality) },
    { label: "Final Q B", num: true, cell: (r) => fmt(r.b.quality) },
    { label: "Δ A − B", num: true, cell: (r) => fmt(r.delta) },
    { label: "Runs", cell: (r) => [runLinks(r.a, "A"), " ", runLinks(r.b, "B")] },
  ];
  return table(caption, cells, rows, (r) => ({ class: r.disagree ? "disagree" : null }));
}

async function questions(container, rows, signal) {
  // The items carry no question: read it from one run of each problem shown.
  for (const row of rows) {
    const run = row.a.runs[0] || row.b.runs[0];
    const cell = container.querySelector(`[data-question="${CSS.escape(row.problem)}"]`);
    if (!run || !cell || signal.aborted) continue;
    const trace = await api(`/v1/runs/${run}`, { signal });
    fill(cell, trace.problem.question);
  }
}

function reportRow(report, refs) {
  const a = `${refs.a.model}/${refs.a.arm}`;
  const b = `${refs.b.model}/${refs.b.arm}`;
  const row = report.comparisons.find((c) => (c.a === a && c.b === b) || (c.a === b && c.b === a));
  if (!row) return null;
  return h("p", {}, `The batch report's comparison of ${row.a} with ${row.b}: McNemar p ${fmt(row.mcnemar_p)} ` +
    `(Holm ${fmt(row.mcnemar_p_holm)}); ΔAvgQualityScore ${row.a} − ${row.b} ${fmt(row.delta_avg_quality)} ` +
    `(BCa 95% ${interval(row.delta_ci95)}), Wilcoxon p ${fmt(row.delta_p)} (Holm ${fmt(row.delta_p_holm)}).`);
}

async function results(body, refs, { signal }) {
  const [left, right] = await Promise.all([loadSide(refs.a, { signal }), loadSide(refs.b, { signal })]);
  const rows = pairs(left, right);
  const names = { a: `${short(refs.a.batch)} · ${refs.a.model} (${refs.a.arm})`, b: `${short(refs.b.batch)} · ${refs.b.model} (${refs.b.arm})` };
  const disagree = rows.filter((r) => r.disagree).sort((x, y) => Math.abs(y.delta ?? 0) - Math.abs(x.delta ?? 0));
  const same = refs.a.batch === refs.b.batch ? await api(`/v1/batches/${refs.a.batch}/report`, { signal }) : null;
  const stats = rows.length ? await api(`/v1/batches/${encodeURIComponent(refs.a.batch)}/compare${query({
    model: refs.a.model, arm: refs.a.arm, with_batch: refs.b.batch, with_model: refs.b.model, with_arm: refs.b.arm,
  })}`, { signal }) : null;
  const shown = disagree.slice(0, SHOWN);
  const list = disagree.length
    ? problemTable(`${disagree.length} problem(s) where one side passed and the other did not${disagree.length > SHOWN ? ` (the first ${SHOWN})` : ""}`, shown, true)
    : h("p", {}, "They agree on every shared problem.");
  fill(body,
    h("h2", { id: "paired-h" }, "Paired differences"),
    rows.length ? summary(rows, names, stats) : h("p", {}, "No problem was scored on both sides (compare batches of the same dataset)."),
    same ? reportRow(same, refs) : null,
    h("h2", {}, "Where they disagree"), list,
    rows.length ? h("details", {}, h("summary", {}, `Every shared problem (${rows.length})`),
      problemTable("Every problem both sides scored", rows, false)) : null);
  questions(body, shown, signal).catch(() => {}); // the table is usable before every question is in
}

export async function compareView(main, params, context) {
  const { signal, navigate } = context;
  document.title = "Compare · thinkloop viewer";
  const batches = (await api("/v1/batches?limit=100", { signal })).items;
  const heading = h("h1", { tabindex: "-1" }, "Compare on the same problems");
  if (!batches.length) return fill(main, heading, h("p", {}, "There is no batch yet."));
  const form = h("form", { class: "filters", "aria-label": "Choose what to compare", onsubmit: (event) => {
    event.preventDefault();
    navigate(`#/compare${query(Object.fromEntries(new FormData(form)))}`);
  } }, side("a", batches, params), side("b", batches, { ...params, b: params.b || params.a }),
  h("button", { type: "submit" }, "Compare"));
  const body = h("section", { "aria-labelledby": "paired-h" });
  fill(main, heading,
    h("p", { class: "note" }, "Pairs are problems that both sides scored (accepted, screened or exhausted); a problem passes when at least half its repeats did."),
    form, body);
  const ready = params.a && params.b && params.model_a && params.model_b;
  if (!ready) return append(body, h("p", { id: "paired-h" }, "Choose two batches (or one batch and two models), then Compare."));
  const refs = {
    a: { batch: params.a, model: params.model_a, arm: params.arm_a || "loop" },
    b: { batch: params.b, model: params.model_b, arm: params.arm_b || "loop" },
  };
  fill(body, h("p", { id: "paired-h" }, "Loading both sides…"));
  await results(body, refs, context);
}
