// A run's page: its rounds as they arrive over the run's event stream (verdict cards, the score,
// the think-aloud as it streams, the revision as a diff, each step of an acceptance's escalation below
// the guaranteed threshold), then the final problem.

import { follow } from "./api.js";
import { api } from "./api.js";
import { diffBlock } from "./diff.js";
import { append, badge, fill, fmt, h, problemBlock, short, warrantBadge, when } from "./dom.js";

const JUDGES = ["remember", "understand", "apply", "analyze", "evaluate", "create", "holistic"];
const ENDED = new Set(["accepted", "screened", "exhausted", "needs_review", "error", "cancelled"]);
const PASS_MARK = 85; // the default threshold of every judge; the round's figures say who passed

/** The metadata the run was submitted with, as "key: value" pairs ("none" without any). */
function metadataText(metadata) {
  const pairs = Object.entries(metadata || {});
  if (!pairs.length) return "no metadata";
  return pairs.map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`).join(" · ");
}

/** What the round's agreement figure means, under the run's scoring policy. */
function agreementMeaning(policy) {
  if (policy === "think-paper") {
    return "Agreement: the share of pairs of judges whose pass/fail votes are alike (1: all vote the same way).";
  }
  return "Agreement: how closely the judges agree that this version meets the bar (85). 1 when every judge " +
    "is at or above it; it falls with how far the others fall short, and is 0 when those shortfalls are as " +
    "large as random answers would give. So 5 of 7 passing with the other 2 far below scores 0.";
}

/** A judge's rationale in words. The offline judges write "Found: [check] what. Advice. … Passed:
 * check, check."; each finding is shown as its sentence with the check's name as a detail, and the
 * checks passed under a disclosure. Any other rationale (a language model's) is shown as written. */
function rationaleBlock(text) {
  let body = text;
  let passed = [];
  const at = body.lastIndexOf(" Passed: ");
  if (body.startsWith("Passed: ") || at >= 0) {
    const start = at >= 0 ? at + 1 : 0;
    passed = body.slice(start + "Passed: ".length).replace(/\.$/, "").split(", ").filter(Boolean);
    body = body.slice(0, at >= 0 ? at : 0);
  }
  const found = body.startsWith("Found: ") ? body.slice("Found: ".length).split(/\[([A-Za-z0-9_]+)\]\s*/) : null;
  const findings = [];
  if (found && found.length > 1) {
    for (let i = 1; i < found.length; i += 2) findings.push([found[i], found[i + 1].trim()]);
  }
  const words = (check) => check.replace(/_/g, " ");
  return h("div", { class: "rationale" },
    findings.length
      ? h("ul", { class: "findings" }, findings.map(([check, sentence]) => h("li", {}, sentence || words(check), " ",
        h("small", { class: "check", "data-check": check }, `(check: ${words(check)})`))))
      : body ? h("p", {}, body) : null,
    passed.length
      ? h("details", {}, h("summary", {}, `${passed.length} check${passed.length === 1 ? "" : "s"} passed`),
        h("p", {}, passed.map(words).join(", ")))
      : null);
}

class RoundView {
  constructor(number, question, solution, previous, policy) {
    this.policy = policy;
    this.number = number;
    this.question = question;
    this.solution = solution;
    this.cards = new Map();
    this.figures = h("div", { class: "figures", "aria-label": `Round ${number} score` },
      h("span", { class: "note" }, "Waiting for the panel…"));
    this.verification = h("div", {});
    this.escalation = h("div", {});
    this.steps = null;
    this.thinking = null;
    this.after = h("div", {});
    const list = h("ul", { class: "cards", "aria-label": `Verdicts of round ${number}` },
      JUDGES.map((judge) => {
        const card = h("li", { class: "card waiting", "data-judge": judge },
          h("h4", {}, judge), h("p", {}, "waiting for its verdict…"));
        this.cards.set(judge, card);
        return card;
      }));
    const changes = previous
      ? h("div", {}, h("h4", {}, `What changed since round ${previous.number}`),
        diffBlock("Question", previous.question, question), diffBlock("Solution", previous.solution, solution))
      : null;
    this.element = h("section", { class: "round", "aria-labelledby": `round-${number}`, "data-round": number },
      h("h3", { id: `round-${number}` }, `Round ${number}`),
      changes ?? h("div", {}, h("h4", {}, "Version judged"), problemBlock(question, solution)),
      this.figures, list, this.verification, this.escalation, this.after);
  }

  verdict(v) {
    const card = this.cards.get(v.judge);
    if (!card) return;
    const scored = v.score !== null && v.score !== undefined;
    card.className = `card done ${scored && v.score >= PASS_MARK ? "high" : "low"}`;
    fill(card,
      h("h4", {}, v.judge),
      scored
        ? h("p", {}, h("strong", {}, `score ${v.score}`), ` · confidence ${v.confidence ?? "—"}`,
          " · ", h("span", { class: `nowrap ${v.score >= PASS_MARK ? "pass" : "fail"}` }, v.score >= PASS_MARK ? "85 or more" : "below 85"))
        : h("p", { class: "fail" }, `no verdict (${v.abstain_reason || "abstained"})`),
      v.rationale ? rationaleBlock(v.rationale) : null,
      v.failure ? h("p", { class: "error" }, `${v.failure.exception || "error"}: ${v.failure.message || ""}`) : null);
  }

  scored(s) {
    fill(this.figures,
      h("span", {}, "Q ", h("strong", {}, fmt(s.quality))),
      h("span", {}, "pass rate ", h("strong", {}, fmt(s.pass_rate))),
      h("span", {}, h("abbr", { title: agreementMeaning(this.policy) }, "agreement"), " ", h("strong", {}, fmt(s.agreement))),
      h("span", {}, "confidence ", h("strong", {}, fmt(s.confidence))),
      h("span", {}, h("strong", {}, `${s.n_passing}/${s.n_voting + (s.n_failed || 0)}`), " passing"),
      h("span", {}, "decision ", badge(s.decision)));
    append(this.figures, h("p", { class: "note explain", "data-explains": "agreement" }, agreementMeaning(this.policy)));
    if (s.verification?.length) {
      fill(this.verification, h("p", { class: "error" }, "Wrong computations found: ", s.verification.join("; ")));
    }
  }

  /** One step of the acceptance's escalation (a round.escalated event): its stage, the panel that
   * judged, its Q against that panel's calibrated threshold, the decision and why. */
  escalated(step) {
    if (!this.steps) {
      this.steps = h("ol", { class: "escalation", "aria-label": `Escalation of round ${this.number}` });
      append(this.escalation, h("h4", {}, "Escalation below the guaranteed threshold"), this.steps);
    }
    if (this.steps.querySelector(`[data-stage="${step.stage}"]`)) return; // replayed after the stream
    const threshold = step.threshold === null || step.threshold === undefined
      ? "no calibrated threshold" : `threshold ${fmt(step.threshold)}`;
    append(this.steps, h("li", { "data-stage": step.stage },
      `Stage ${step.stage} · ${step.panel} · `,
      step.quality === null || step.quality === undefined ? "" : h("span", {}, "Q ", h("strong", {}, fmt(step.quality)), " vs "),
      threshold, " · ", badge(step.decision),
      step.reason ? ` · ${step.reason}` : ""));
  }

  think(delta) {
    if (!this.thinking) {
      this.thinking = h("pre", { class: "thinking", tabindex: "0", "aria-label": `Think-aloud after round ${this.number}` });
      append(this.after, h("h4", {}, "The model under test, thinking aloud"), this.thinking);
    }
    this.thinking.append(document.createTextNode(delta));
    this.thinking.scrollTop = this.thinking.scrollHeight;
  }

  revised(problem, error) {
    if (error) append(this.after, h("p", { class: "error" }, `No revision: ${error}`));
    else if (problem) append(this.after, h("p", { class: "note" }, "It proposed a new version: judged in the next round."));
  }
}

class RunPage {
  constructor(main, trace, announce) {
    this.policy = trace.policy;
    this.rounds = new Map();
    this.announce = announce;
    this.status = h("p", {});
    this.list = h("div", {});
    this.final = h("section", { "aria-labelledby": "final-h" });
    fill(main,
      h("h1", { tabindex: "-1" }, `Run ${short(trace.id)}`),
      this.status,
      h("dl", { class: "meta" },
        h("dt", {}, "Run id"), h("dd", {}, h("code", {}, trace.id)),
        h("dt", {}, "Model under test"), h("dd", {}, trace.model),
        h("dt", {}, "Judge model"), h("dd", {}, trace.judge_model),
        h("dt", {}, "Policy · max rounds"), h("dd", {}, `${trace.policy} · ${trace.max_rounds}`),
        h("dt", {}, "Created"), h("dd", {}, when(trace.created_at)),
        h("dt", {}, "Submitted with"), h("dd", { "data-metadata": "" }, metadataText(trace.problem.metadata)),
        trace.batch_id ? [h("dt", {}, "Batch item of"),
          h("dd", {}, h("a", { href: `#/batches/${trace.batch_id}` }, `batch ${short(trace.batch_id)}`), ` (${trace.arm} arm)`)] : null),
      h("section", { "aria-labelledby": "submitted-h" }, h("h2", { id: "submitted-h" }, "Problem as submitted"),
        problemBlock(trace.problem.question, trace.problem.solution)),
      h("section", { "aria-labelledby": "rounds-h" }, h("h2", { id: "rounds-h" }, "Rounds"), this.list),
      this.final);
    this.showStatus(trace);
  }

  showStatus(run) {
    const live = !ENDED.has(run.status);
    fill(this.status, "Status ", badge(run.status), " ", warrantBadge(run.warrant), live ? " · following it live" : "",
      run.stop_reason ? ` · ${run.stop_reason}` : "");
    this.status.dataset.status = run.status;
  }

  round(number, problem) {
    if (this.rounds.has(number)) return this.rounds.get(number);
    const previous = this.rounds.get(number - 1);
    const view = new RoundView(number, problem?.question ?? "", problem?.solution ?? "", previous, this.policy);
    this.rounds.set(number, view);
    append(this.list, view.element);
    return view;
  }

  event(kind, data) {
    if (kind === "round.started") this.round(data.round, data.problem);
    else if (kind === "judge.verdict") this.round(data.round).verdict(data);
    else if (kind === "round.scored") {
      this.round(data.round).scored(data);
      this.announce(`Round ${data.round} scored: Q ${fmt(data.quality)}, ${data.decision.replace("_", " ")}`);
    } else if (kind === "round.escalated") this.round(data.round).escalated(data);
    else if (kind === "reviser.thinking") this.round(data.round).think(data.delta);
    else if (kind === "revision.proposed") this.round(data.round).revised(data.problem, data.error);
  }

  replay(trace) {
    for (const r of trace.rounds) {
      const view = this.round(r.round, r);
      r.verdicts.forEach((v) => view.verdict(v));
      if (r.decision) view.scored(r);
      (r.escalations || []).forEach((step) => view.escalated(step));
      if (r.revision) {
        if (r.revision.thinking) view.think(r.revision.thinking);
        view.revised(r.revision.question ? r.revision : null, r.revision.error);
      }
    }
  }

  finish(trace) {
    this.showStatus(trace);
    const parts = [h("h2", { id: "final-h" }, "Final problem")];
    if (trace.final) {
      parts.push(h("p", {}, `The last version judged (round ${trace.final.round}), Q ${fmt(trace.final.quality)}:`),
        problemBlock(trace.final.question, trace.final.solution));
      if (trace.best && trace.best_round !== trace.final.round) {
        parts.push(h("p", {}, `The best version was round ${trace.best_round}'s, Q ${fmt(trace.best.quality)}:`),
          problemBlock(trace.best.question, trace.best.solution));
      }
    } else parts.push(h("p", {}, "No version was judged."));
    if (trace.failure) parts.push(h("p", { class: "error" }, `Error: ${trace.failure.message || trace.failure.exception}`));
    if (trace.metrics) {
      parts.push(h("p", {}, `Rounds to pass: ${trace.metrics.rounds_to_pass ?? "none passed"} · ` +
        `AvgQualityScore final ${fmt(trace.metrics.avg_quality_final)} · over all steps ${fmt(trace.metrics.avg_quality_all_steps)}`));
    }
    fill(this.final, parts);
  }
}

export async function runView(main, runId, { signal, announce }) {
  const trace = await api(`/v1/runs/${encodeURIComponent(runId)}`, { signal });
  document.title = `Run ${short(trace.id)} · thinkloop viewer`;
  const page = new RunPage(main, trace, announce);
  if (ENDED.has(trace.status)) {
    page.replay(trace);
    page.finish(trace);
    return;
  }
  let over = false;
  const onEvent = (kind, data) => {
    page.event(kind, data);
    if (kind === "run.finished" || kind === "run.failed") over = true;
  };
  // Not awaited: the view is shown at once and fills in as the run goes.
  follow(`/v1/runs/${encodeURIComponent(runId)}/events`, onEvent, { signal, isOver: () => over })
    .then(() => api(`/v1/runs/${encodeURIComponent(runId)}`, { signal }))
    .then((done) => { page.finish(done); announce(`Run ended: ${done.status.replace("_", " ")}`); })
    .catch((error) => { if (!signal.aborted) append(page.status, h("span", { class: "error" }, ` · ${error.message}`)); });
}
