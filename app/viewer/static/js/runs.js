// The runs list: newest first, filtered by status, model, metadata and time through the API.

import { api, query } from "./api.js";
import { append, badge, fill, fmt, h, labelled, select, short, table, warrantBadge, when } from "./dom.js";

const STATUSES = ["", "queued", "running", "accepted", "screened", "exhausted", "needs_review", "error", "cancelled"];
const SOURCES = [["", "all runs"], ["api", "runs of their own (not in a batch)"], ["batch", "batch items only"]];

function filters(params, navigate) {
  const form = h("form", { class: "filters", role: "search", "aria-label": "Filter runs", onsubmit: (event) => {
    event.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    navigate(`#/runs${query(data)}`);
  } },
  labelled("Status (outcome)", select("status", STATUSES.map((s) => [s, s ? s.replace("_", " ") : "any"]), params.status || "")),
  labelled("Shown", select("source", SOURCES, params.source || "")),
  labelled("Model under test", h("input", { name: "model", value: params.model || "", size: 14 })),
  labelled("Metadata (KEY:VALUE)", h("input", { name: "metadata", value: params.metadata || "", size: 18,
    placeholder: "pupil:P-17" })),
  h("button", { type: "submit" }, "Filter"));
  return form;
}

const COLUMNS = [
  { label: "Run", cell: (r) => h("a", { href: `#/runs/${r.id}` }, short(r.id)) },
  { label: "Created", cell: (r) => when(r.created_at) },
  { label: "Status", cell: (r) => [badge(r.status), " ", warrantBadge(r.warrant)] },
  { label: "Model", cell: (r) => r.model },
  { label: "Question", cell: (r) => (r.question.length > 90 ? `${r.question.slice(0, 90)}…` : r.question) },
  { label: "Final Q", num: true, cell: (r) => fmt(r.avg_quality_final) },
  { label: "Rounds to pass", num: true, cell: (r) => r.rounds_to_pass ?? "—" },
  { label: "Batch", cell: (r) => (r.batch_id ? h("a", { href: `#/batches/${r.batch_id}` }, `${short(r.batch_id)} (${r.arm})`) : "—") },
];

export async function runsView(main, params, { signal, navigate }) {
  document.title = "Runs · thinkloop viewer";
  const body = h("div", {});
  fill(main, h("h1", { tabindex: "-1" }, "Runs"), filters(params, navigate), body);
  const wanted = { status: params.status, model: params.model, metadata: params.metadata, source: params.source,
    batch: params.batch, limit: 50 };
  const more = async (cursor) => {
    const page = await api(`/v1/runs${query({ ...wanted, cursor })}`, { signal });
    if (!cursor) fill(body);
    const shown = table(cursor ? "More runs" : `Runs, newest first`, COLUMNS, page.items);
    append(body, page.items.length || cursor ? shown : h("p", {}, "No run matches."));
    if (page.next_cursor) {
      const button = h("button", { type: "button", class: "secondary", onclick: async () => {
        button.remove();
        await more(page.next_cursor);
      } }, "Load more runs");
      append(body, button);
    }
  };
  await more(undefined);
}
