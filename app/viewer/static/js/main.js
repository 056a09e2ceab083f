// The viewer's router: the part of the address after "#" picks a view; each view gets the main
// landmark, the parameters, and a signal that aborts its fetches and streams when the view changes.

import { ApiError, api, auth } from "./api.js";
import { fill, h } from "./dom.js";
import { batchView } from "./batch.js";
import { batchesView } from "./batches.js";
import { compareView } from "./compare.js";
import { runView } from "./run.js";
import { runsView } from "./runs.js";
import { reviewView, reviewsView } from "./reviews.js";

const main = document.getElementById("main");
const announcer = document.getElementById("announcer");
let current = null;

/** Tell assistive technology about a change that happened without a page load. */
export function announce(text) {
  announcer.textContent = "";
  setTimeout(() => { announcer.textContent = text; }, 50);
}

function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/runs";
  const [path, search = ""] = raw.split("?");
  const parts = path.split("/").filter(Boolean);
  return { parts, params: Object.fromEntries(new URLSearchParams(search)) };
}

function pick(parts) {
  const [section, id] = parts;
  if (section === "runs" && id) return ["runs", (m, p, c) => runView(m, decodeURIComponent(id), c)];
  if (section === "batches" && id) return ["batches", (m, p, c) => batchView(m, decodeURIComponent(id), p, c)];
  if (section === "batches") return ["batches", batchesView];
  if (section === "compare") return ["compare", compareView];
  if (section === "reviews" && id) return ["reviews", (m, p, c) => reviewView(m, decodeURIComponent(id), c)];
  if (section === "reviews") return ["reviews", reviewsView];
  return ["runs", runsView];
}

function markNav(section) {
  for (const link of document.querySelectorAll("nav a[data-section]")) {
    if (link.dataset.section === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

function sessionBar() {
  const bar = document.getElementById("session");
  if (!auth.key) return fill(bar);
  const out = h("button", { type: "button", class: "secondary", onclick: () => { auth.clear(); route(); } }, "Sign out");
  fill(bar, h("span", {}, "Signed in with a key"), out);
}

/** A read key opens where it was; a review-only key (403 on runs) opens the teacher's queue. */
async function checkKey() {
  try {
    await api("/v1/runs?limit=1", { quiet: true });
    return route();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 403) throw error;
  }
  await api("/v1/reviews?limit=1", { quiet: true });
  navigate("#/reviews");
}

function signIn(reason) {
  markNav(null);
  sessionBar();
  const input = h("input", { id: "api-key", name: "key", type: "password", autocomplete: "off", required: true,
    "aria-describedby": "key-help" });
  const message = h("p", { role: "alert", class: "error" }, reason || "");
  const form = h("form", { class: "signin", onsubmit: async (event) => {
    event.preventDefault();
    auth.set(input.value.trim());
    try {
      await checkKey();
    } catch (error) {
      auth.clear();
      message.textContent = error instanceof ApiError && error.status === 403
        ? "This key can neither read runs (read scope) nor the review queue (review scope)."
        : `The key was refused: ${error.message}`;
      input.focus();
    }
  } },
  h("label", { for: "api-key" }, "API key"),
  input,
  h("p", { id: "key-help", class: "note" },
    "The key that ", h("code", {}, "thinkloop view"), " printed, or one from ",
    h("code", {}, "thinkloop keys create --name viewer --scope read"),
    " (a teacher's key has the review scope). It stays in this tab and is sent only in the Authorization header."),
  h("button", { type: "submit" }, "Sign in"),
  message);
  fill(main, h("h1", { tabindex: "-1" }, "Sign in"), form);
  document.title = "Sign in · thinkloop viewer";
  input.focus();
}

async function route() {
  current?.abort();
  if (!auth.key) return signIn();
  sessionBar();
  const controller = new AbortController();
  current = controller;
  const { parts, params } = parseHash();
  const [section, view] = pick(parts);
  markNav(section);
  fill(main, h("p", {}, "Loading…"));
  main.setAttribute("aria-busy", "true"); // until the view has what it shows first
  try {
    await view(main, params, { signal: controller.signal, announce, navigate });
  } catch (error) {
    if (controller.signal.aborted) return;
    if (error instanceof ApiError && error.status === 401) return;
    fill(main, h("h1", { tabindex: "-1" }, "Something went wrong"), h("p", { role: "alert", class: "error" }, error.message));
  } finally {
    if (current === controller) main.removeAttribute("aria-busy");
  }
  const heading = main.querySelector("h1");
  if (heading && document.activeElement === document.body) heading.focus({ preventScroll: true });
}

/** Go to a view (its filters live in the address, so they can be bookmarked and shared). */
export function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

auth.onUnauthorized = () => { auth.clear(); signIn("The key is missing, unknown, revoked or expired: sign in again."); };
window.addEventListener("hashchange", () => {
  route().then(() => main.querySelector("h1")?.focus({ preventScroll: true }));
});
route();
