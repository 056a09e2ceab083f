// The teacher's page: the project's review queue (pending first) and one item per page, with the
// three decisions. Keyboard-first: j/k or arrows move in the queue, Enter opens; on an item s, f, e
// pick sound, flawed or edit-and-approve, Enter (Ctrl+Enter in a text box) submits, Esc cancels.

import { ApiError, api, query } from "./api.js";
import { fill, h, labelled, problemBlock, warrantBadge } from "./dom.js";

export const KEYS = [
  ["j / ↓", "next item in the queue"], ["k / ↑", "previous item"], ["Enter", "open the item / submit"],
  ["s", "decide sound"], ["f", "decide flawed (choose the types)"], ["e", "edit and approve"],
  ["Esc", "cancel the form / back to the queue"],
];

let keyHandler = null;
function onKeys(handler, signal) {
  if (keyHandler) document.removeEventListener("keydown", keyHandler);
  keyHandler = handler;
  document.addEventListener("keydown", handler);
  signal.addEventListener("abort", () => document.removeEventListener("keydown", handler));
}

const typing = (event) => ["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName);

function keyHelp() {
  return h("details", { class: "keys" }, h("summary", {}, "Keyboard"),
    h("dl", {}, KEYS.map(([key, what]) => [h("dt", {}, h("kbd", {}, key)), h("dd", {}, what)])));
}

/** "3 h ago" from an ISO time. */
export function age(iso) {
  const seconds = Math.max(0, (Date.now() - new Date(iso).getTime()) / 1000);
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

const pupil = (item) => item.metadata?.pupil ?? item.metadata?.pupil_id ?? "—";
const REASONS = { needs_review: "needs review", audit: "audit sample", requested: "requested" };

/** The queue: pending items, then decided ones. */
export async function reviewsView(main, params, { signal, navigate }) {
  const pending = await api(`/v1/reviews${query({ status: "pending", limit: 100 })}`, { signal });
  const decided = await api(`/v1/reviews${query({ status: "decided", limit: 50 })}`, { signal });
  const items = [...pending.items, ...decided.items];
  document.title = "Review queue · thinkloop viewer";
  const rows = items.map((item) => h("li", { class: `queue-item ${item.status}`, "data-review": item.id },
    h("a", { href: `#/reviews/${item.id}` },
      h("span", { class: `badge status-${item.status}` }, item.status),
      h("span", { class: "reason" }, REASONS[item.reason] ?? item.reason),
      h("span", { class: "pupil" }, `pupil ${pupil(item)}`),
      h("span", { class: "age" }, age(item.created_at)),
      h("span", { class: "q" }, item.question))));
  const list = h("ol", { class: "queue", "aria-label": "Review queue" }, rows);
  fill(main, h("h1", { tabindex: "-1" }, "Review queue"),
    h("p", {}, `${pending.items.length} pending, ${decided.items.length} decided.`),
    items.length ? list : h("p", {}, "The queue is empty."), keyHelp());
  const links = [...list.querySelectorAll("a")];
  const at = () => links.indexOf(document.activeElement);
  onKeys((event) => {
    if (typing(event) || event.ctrlKey || event.metaKey || event.altKey || !links.length) return;
    if (event.key === "j" || event.key === "ArrowDown") links[Math.min(at() + 1, links.length - 1)].focus();
    else if (event.key === "k" || event.key === "ArrowUp") links[Math.max(at() - 1, 0)].focus();
    else return;
    event.preventDefault();
  }, signal);
}

function verdictList(verdicts) {
  if (!verdicts.length) return h("p", {}, "No judge's verdict on this version.");
  return h("ul", { class: "verdicts" }, verdicts.map((v) => h("li", {},
    h("strong", {}, v.judge ?? v.level ?? "judge"), " ",
    v.abstained ? h("em", {}, "abstained") : h("span", { class: "score" }, `score ${v.score ?? "—"}`),
    h("p", {}, v.rationale || "—"))));
}

function thinkAloud(thinking) {
  if (!thinking.length) return h("p", {}, "No think-aloud (the model did not revise).");
  return thinking.map((t) => h("details", { open: true }, h("summary", {}, `Round ${t.round}`), h("p", { class: "think" }, t.text)));
}

function warrantPart(warrant) {
  if (!warrant) return h("p", { "data-warrant": "none" }, "No warrant.");
  return h("p", {}, warrantBadge(warrant) ?? "No warrant.", warrant.source ? ` Source: ${warrant.source}.` : "");
}

function decisionText(d) {
  const flaws = d.flaws?.length ? `: ${d.flaws.map((f) => f.type).join(", ")}` : "";
  return `${d.decision}${flaws}${d.corrected ? " (corrected)" : ""}, by ${d.reviewer}`;
}

let taxonomy = null;
async function loadTaxonomy(signal) {
  taxonomy ??= await api("/viewer/taxonomy.json", { signal });
  return taxonomy;
}

/** One review item: the problem, the judges' words, the warrant, the think-aloud, the decision. */
export async function reviewView(main, id, { signal, navigate, announce }) {
  const item = await api(`/v1/reviews/${encodeURIComponent(id)}`, { signal });
  const types = await loadTaxonomy(signal);
  document.title = `Review ${id.slice(0, 8)} · thinkloop viewer`;
  const message = h("p", { role: "alert", class: "error", id: "decision-message" });
  const area = h("div", { class: "decide-form" });
  const state = { key: null, mode: null };
  const submit = async (body) => {
    state.key ??= crypto.randomUUID();
    const buttons = area.querySelectorAll("button[type=submit]");
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const decided = await api(`/v1/reviews/${encodeURIComponent(id)}/decision`,
        { method: "POST", body: { ...body, replaces: item.decision?.id ?? null }, signal, headers: { "Idempotency-Key": state.key } });
      announce(`Recorded: ${decided.decision}`);
      navigate("#/reviews");
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      message.textContent = problemMessage(error);
      buttons.forEach((b) => { b.disabled = false; });
      if (error.status === 409 || error.status === 403 || error.status === 404) state.key = null;
    }
  };
  const open = (mode) => { state.mode = mode; state.key = null; message.textContent = ""; fill(area, FORMS[mode](item, types, submit, cancel)); area.querySelector("input,textarea,button")?.focus(); };
  const cancel = () => { state.mode = null; fill(area); actions.querySelector("button")?.focus(); };
  const actions = h("div", { class: "actions", role: "group", "aria-label": "Decide" },
    h("button", { type: "button", onclick: () => open("sound"), "aria-keyshortcuts": "s" }, "Sound (s)"),
    h("button", { type: "button", onclick: () => open("flawed"), "aria-keyshortcuts": "f" }, "Flawed… (f)"),
    h("button", { type: "button", onclick: () => open("edit"), "aria-keyshortcuts": "e" }, "Edit and approve… (e)"));
  fill(main,
    h("p", {}, h("a", { href: "#/reviews" }, "← Review queue")),
    h("h1", { tabindex: "-1" }, `Review: ${REASONS[item.reason] ?? item.reason}`),
    h("p", { class: "meta" }, `Pupil ${pupil(item)} · round ${item.round} · run ${item.run_status} · `, h("span", {}, item.status),
      item.decision ? ` · decided ${decisionText(item.decision)}` : ""),
    item.cause ? h("p", { class: "cause" }, item.cause) : null,
    h("section", { "aria-labelledby": "h-problem" }, h("h2", { id: "h-problem" }, "The problem, as the pupil sees it"),
      problemBlock(item.question, item.solution)),
    h("section", { "aria-labelledby": "h-judges" }, h("h2", { id: "h-judges" }, "What the judges said"), verdictList(item.verdicts)),
    h("section", { "aria-labelledby": "h-warrant" }, h("h2", { id: "h-warrant" }, "Warrant"), warrantPart(item.warrant),
      item.stop_reason && item.stop_reason !== item.cause ? h("p", {}, `Why the run ended: ${item.stop_reason}`) : null),
    h("section", { "aria-labelledby": "h-think" }, h("h2", { id: "h-think" }, "Think-aloud"), thinkAloud(item.thinking)),
    h("section", { "aria-labelledby": "h-decide" }, h("h2", { id: "h-decide" }, "Decision"), actions, area, message),
    keyHelp());
  onKeys((event) => {
    if (event.key === "Escape") { event.preventDefault(); return state.mode ? cancel() : navigate("#/reviews"); }
    if (typing(event) || event.ctrlKey || event.metaKey || event.altKey || state.mode) return;
    const mode = { s: "sound", f: "flawed", e: "edit" }[event.key];
    if (mode) { event.preventDefault(); open(mode); }
  }, signal);
}

/** The problem+json detail, in words, for the statuses a teacher can meet. */
export function problemMessage(error) {
  const detail = error.problem?.detail || error.message;
  if (error.status === 409) return `Another decision was recorded first: ${detail}`;
  if (error.status === 403) return `This key cannot decide reviews (it needs the review scope): ${detail}`;
  if (error.status === 404) return `This item is not in your project's queue: ${detail}`;
  if (error.status === 422) return `The decision was refused: ${detail}`;
  return detail;
}

const note = () => labelled("Note (optional)", h("input", { name: "note", type: "text" }));
const noteOf = (form) => form.elements.note.value.trim() || null;
function formOf(title, body, onSubmit, cancel, label) {
  return h("form", { "aria-label": title, onsubmit: (event) => { event.preventDefault(); onSubmit(event.target); },
    onkeydown: (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.tagName === "TEXTAREA") {
        event.preventDefault(); event.currentTarget.requestSubmit();
      }
    } },
  h("h3", {}, title), body, note(),
  h("div", { class: "buttons" }, h("button", { type: "submit" }, label), h("button", { type: "button", class: "secondary", onclick: cancel }, "Cancel (Esc)")));
}

const FORMS = {
  sound: (item, types, submit, cancel) => formOf("Decide sound", h("p", {}, "The problem is sound as written."),
    (form) => submit({ decision: "sound", flaws: [], corrected: null, note: noteOf(form) }), cancel, "Record sound"),
  flawed: (item, types, submit, cancel) => formOf("Decide flawed", h("fieldset", {}, h("legend", {}, "Flaw types (choose one or more, each with its evidence)"),
    Object.entries(types).map(([type, description]) => {
      const evidence = h("input", { type: "text", name: `evidence-${type}`, hidden: true, "aria-label": `Evidence for ${type}` });
      const box = h("input", { type: "checkbox", name: "type", value: type, id: `t-${type}`,
        onchange: (e) => { evidence.hidden = !e.target.checked; if (e.target.checked) evidence.focus(); } });
      return h("div", { class: "flaw" }, box, h("label", { for: box.id }, h("strong", {}, type.replace(/_/g, " ")), ` — ${description}`), evidence);
    })),
  (form) => submit({ decision: "flawed", note: noteOf(form), corrected: null,
    flaws: [...form.querySelectorAll("input[name=type]:checked")].map((b) => ({ type: b.value, evidence: form.elements[`evidence-${b.value}`].value.trim() })) }),
  cancel, "Record flawed"),
  edit: (item, types, submit, cancel) => formOf("Edit and approve",
    [labelled("Question", h("textarea", { name: "question", rows: 4, required: true }, item.question)),
      labelled("Solution", h("textarea", { name: "solution", rows: 6, required: true }, item.solution)),
      h("p", { class: "note" }, "Ctrl+Enter submits from a text box.")],
    (form) => submit({ decision: "sound", flaws: [], note: noteOf(form),
      corrected: { question: form.elements.question.value, solution: form.elements.solution.value } }),
    cancel, "Approve the edited version"),
};
