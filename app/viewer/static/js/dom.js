// Building the page from data: elements and text nodes only (no HTML strings, so no injection).

/** An element with attributes (``on*`` functions become listeners) and children. */
export function h(tag, attrs = {}, ...children) {
  const svg = ["svg", "g", "line", "rect", "circle", "path", "text", "title", "desc", "polyline"];
  const element = svg.includes(tag)
    ? document.createElementNS("http://www.w3.org/2000/svg", tag)
    : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (name === "class") element.setAttribute("class", value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, ...children);
  return element;
}

/** Add children (strings become text; arrays are flattened; nullish ones skipped). */
export function append(parent, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replace an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  return append(element, ...children);
}

export const fmt = (value, digits = 3) =>
  value === null || value === undefined || Number.isNaN(value) ? "—" : Number(value).toFixed(digits);

export const pct = (value, digits = 1) =>
  value === null || value === undefined ? "—" : `${(100 * value).toFixed(digits)}%`;

/** "0.61–0.93" from a [low, high] pair (null: none). */
export const interval = (pair, scale = 1, digits = 3) =>
  Array.isArray(pair) && pair[0] !== null && pair[1] !== null
    ? `${(scale * pair[0]).toFixed(digits)}–${(scale * pair[1]).toFixed(digits)}`
    : "—";

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : "—");

export const short = (id) => (id ? id.slice(0, 8) : "—");

// What a badge's word does not say: screened is the offline screen's pass, never an acceptance.
const MEANING = {
  screened: "The offline checks found no flaw; this is not a judgement of soundness",
};

export function badge(status) {
  const words = String(status ?? "—").replace(/_/g, " ");
  return h("span", { class: `badge status-${status}`, title: MEANING[status] }, words);
}

/** An accepted run's warrant: both bounds of its panel's validity record (false accepts, sound
 * passed), or "no warrant" (the panel was never validated). Nothing for a run not accepted (null). */
export function warrantBadge(warrant) {
  if (!warrant) return null;
  if (warrant.status !== "valid") {
    return h("span", { class: "badge warrant-none", "data-warrant": "none", title: "This panel has never been validated" },
      "no warrant");
  }
  const upper = warrant.false_accept_upper === null ? "?" : (100 * warrant.false_accept_upper).toFixed(1);
  const n = warrant.false_accept ? warrant.false_accept.n : 0;
  const restsOn = `${n} ${WARRANT_SPLITS[warrant.split] ?? "flawed problems"}`;
  const lower = warrant.sound_passed_lower ?? null;
  const nSound = warrant.specificity ? warrant.specificity.n : 0;
  const sound = lower === null
    ? "sound passed: not recorded (saved before records kept it)"
    : `sound passed ≥ ${(100 * lower).toFixed(1)} % (95 %), ${nSound} ${warrant.split === "heldout" ? "held-out " : ""}sound versions`;
  const hash = warrant.set_hash ? ` (sha256 ${warrant.set_hash})` : "";
  const title = `Validity record ${warrant.record_id}: ${restsOn} of the set ${warrant.set}${hash}, measured ${when(warrant.measured_at)}`;
  return h("span", { class: "badge warrant-valid", "data-warrant": "valid", title },
    `warrant: false accepts ≤ ${upper} % (95 %), ${restsOn}; ${sound}`);
}

/** What a record's bound rests on, by its split (as app/reporting/warrant_text.py words it). */
const WARRANT_SPLITS = {
  heldout: "held-out flawed problems",
  all: "flawed problems of every split (tune split included: not held out)",
  tune: "flawed problems of the tune split (not held out)",
};

/** A table in a box of its own that scrolls sideways when the table is wider than the page. */
export function table(caption, columns, rows, rowAttrs = () => ({})) {
  return h("div", { class: "wide" }, h(
    "table",
    {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.num ? "num" : null }, c.label)))),
    h("tbody", {}, rows.map((row) =>
      h("tr", rowAttrs(row), columns.map((c) => h("td", { class: c.num ? "num" : null }, c.cell(row)))))),
  ));
}

export function labelled(label, control) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), control);
}

export function select(name, options, value) {
  return h("select", { name }, options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
}

export function problemBlock(question, solution) {
  return h(
    "div",
    { class: "problem" },
    h("p", {}, h("strong", {}, "Question: "), question || "—"),
    h("p", {}, h("strong", {}, "Solution: "), solution || "—"),
  );
}
