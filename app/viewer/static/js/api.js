// The public /v1 API with the person's key, sent as "Authorization: Bearer" (never in a URL).
// The key lives in this tab's sessionStorage only: closing the tab forgets it.

const KEY = "thinkloop.key";

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

export const auth = {
  get key() { return sessionStorage.getItem(KEY); },
  set(key) { sessionStorage.setItem(KEY, key); },
  clear() { sessionStorage.removeItem(KEY); },
  onUnauthorized: () => {},
};

function headers(extra = {}) {
  const out = { ...extra };
  if (auth.key) out.Authorization = `Bearer ${auth.key}`;
  return out;
}

async function failure(response, quiet = false) {
  let problem = null;
  try { problem = await response.json(); } catch { /* not JSON */ }
  if (response.status === 401 && !quiet) auth.onUnauthorized(problem);
  return new ApiError(response.status, problem);
}

/** GET (or another method) a JSON resource of the API. */
export async function api(path, { method = "GET", body, signal, accept = "application/json", quiet = false, headers: extra = {} } = {}) {
  const init = { method, signal, headers: headers({ ...extra, Accept: accept }) };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response, quiet);
  return accept === "application/json" ? response.json() : response.blob();
}

/** A query string of the non-empty values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** Every item of a cursor-paged list (bounded by ``limitPages``). */
export async function allPages(path, params, { signal, limitPages = 200 } = {}) {
  const items = [];
  let cursor;
  for (let page = 0; page < limitPages; page += 1) {
    const answer = await api(path + query({ ...params, cursor }), { signal });
    items.push(...answer.items);
    cursor = answer.next_cursor;
    if (!cursor) break;
  }
  return items;
}

function parseBlock(block) {
  const event = { event: "message", data: "", id: null };
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") event.event = value;
    else if (field === "id") event.id = value;
  }
  event.data = data.join("\n");
  return event;
}

async function readOnce(path, lastId, onEvent, signal) {
  const extra = { Accept: "text/event-stream" };
  if (lastId) extra["Last-Event-ID"] = lastId;
  const response = await fetch(path, { headers: headers(extra), signal });
  if (!response.ok) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return lastId;
    buffer += value;
    const blocks = buffer.split(/\r?\n\r?\n/);
    buffer = blocks.pop();
    for (const block of blocks) {
      const event = parseBlock(block);
      if (event.id) lastId = event.id;
      if (event.data) onEvent(event.event, JSON.parse(event.data), event.id);
    }
  }
}

/**
 * Follow a Server-Sent Events stream with fetch, since EventSource cannot send the Authorization
 * header. The stream ends when ``isOver()`` says so after it closes; a dropped connection is
 * reopened with Last-Event-ID, so no event is seen twice.
 */
export async function follow(path, onEvent, { signal, isOver }) {
  let lastId = null;
  for (let attempt = 0; attempt < 30 && !signal.aborted; attempt += 1) {
    try {
      lastId = await readOnce(path, lastId, onEvent, signal);
      if (isOver()) return;
    } catch (error) {
      if (signal.aborted || error instanceof ApiError) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, 5000)));
  }
}
