// The batches list: newest first; status and model filters apply to the batches loaded so far.

import { api, query } from "./api.js";
import { append, badge, fill, h, labelled, select, short, table, when } from "./dom.js";

const STATUSES = ["", "queued", "running", "paused", "completed", "cancelled", "budget_exhausted"];

const COLUMNS = [
  { label: "Batch", cell: (b) => h("a", { href: `#/batches/${b.id}` }, short(b.id)) },
  { label: "Created", cell: (b) => when(b.created_at) },
  { label: "Status", cell: (b) => badge(b.progress.status) },
  { label: "Models", cell: (b) => b.models.join(", ") },
  { label: "Arms", cell: (b) => (b.control_arm ? "loop, control" : "loop") },
  { label: "Finished", num: true, cell: (b) => `${b.progress.finished} / ${b.progress.total}` },
  { label: "Cost (USD)", num: true, cell: (b) => b.progress.cost_usd.toFixed(4) },
];

function keep(batch, params) {
  if (params.status && batch.progress.status !== params.status) return false;
  return !params.model || batch.models.some((m) => m.includes(params.model));
}

export async function batchesView(main, params, { signal, navigate }) {
  document.title = "Batches · thinkloop viewer";
  const form = h("form", { class: "filters", role: "search", "aria-label": "Filter batches", onsubmit: (event) => {
    event.preventDefault();
    navigate(`#/batches${query(Object.fromEntries(new FormData(form)))}`);
  } },
  labelled("Status", select("status", STATUSES.map((s) => [s, s ? s.replace("_", " ") : "any"]), params.status || "")),
  labelled("Model", h("input", { name: "model", value: params.model || "", size: 14 })),
  h("button", { type: "submit" }, "Filter"));
  const body = h("div", {});
  fill(main, h("h1", { tabindex: "-1" }, "Batches"), form, body);
  const loaded = [];
  const show = (cursor) => {
    const rows = loaded.filter((b) => keep(b, params));
    fill(body, rows.length ? table("Batches, newest first", COLUMNS, rows) : h("p", {}, "No batch matches."));
    if (cursor) {
      append(body, h("button", { type: "button", class: "secondary", onclick: () => more(cursor) }, "Load more batches"));
    }
  };
  const more = async (cursor) => {
    const page = await api(`/v1/batches${query({ limit: 50, cursor })}`, { signal });
    loaded.push(...page.items);
    show(page.next_cursor);
  };
  await more(undefined);
}
