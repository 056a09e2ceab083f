// A word diff between two versions of a text (longest common subsequence over words and spaces).

import { h } from "./dom.js";

const MAX_CELLS = 4_000_000; // beyond this, show the two texts whole rather than stall the page

function tokens(text) {
  return (text || "").split(/(\s+)/).filter((t) => t !== "");
}

function lcsTable(a, b) {
  const rows = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      rows[i][j] = a[i] === b[j] ? rows[i + 1][j + 1] + 1 : Math.max(rows[i + 1][j], rows[i][j + 1]);
    }
  }
  return rows;
}

/** The edits from ``before`` to ``after``: [["same"|"del"|"ins", text], …]. */
export function wordDiff(before, after) {
  const a = tokens(before);
  const b = tokens(after);
  if (a.length * b.length > MAX_CELLS) return [["del", before], ["ins", after]];
  const lcs = lcsTable(a, b);
  const out = [];
  const push = (kind, text) => {
    if (out.length && out[out.length - 1][0] === kind) out[out.length - 1][1] += text;
    else out.push([kind, text]);
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) { push("same", a[i]); i += 1; j += 1; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) { push("del", a[i]); i += 1; }
    else { push("ins", b[j]); j += 1; }
  }
  while (i < a.length) { push("del", a[i]); i += 1; }
  while (j < b.length) { push("ins", b[j]); j += 1; }
  return out;
}

/** The diff as a paragraph: deletions struck through, insertions underlined (both named for readers). */
export function diffBlock(label, before, after) {
  const parts = wordDiff(before, after).map(([kind, text]) => {
    if (kind === "same") return text;
    const tag = kind === "del" ? "del" : "ins";
    return h(tag, {}, h("span", { class: "sr-only" }, kind === "del" ? "removed: " : "added: "), text);
  });
  const changed = parts.some((p) => typeof p !== "string");
  return h("p", { class: "diff" }, h("strong", {}, `${label}: `), changed ? parts : [before, " (unchanged)"]);
}
