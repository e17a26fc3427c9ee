// "Find a workload that breaks this" on a preset page (docs/search.md): an adversary search in the
// page's worker (web/pyodide/ops_search.py), run in chunks of evaluations so a progress bar moves
// between them, then the best workload loaded into the page as an override (o.workload=JSON in
// the URL), from t = 0. Only on pages whose topic the search covers; the worker says which. On a
// consensus page it searches fault schedules instead ("Find a schedule that breaks this"): the one
// found is shown step by step, with what the safety checker caught, and replaces the page's.
import { el } from "./sim-ui.js";

const CHUNK_MS = 150; // worker time per chunk: the page (and a Stop click) stay responsive between chunks
const fmt = (x) => (x === null || x === undefined ? "nothing" : Number.isInteger(x) ? String(x) : x.toPrecision(4));

export class SearchBox {
  constructor(sim, slot) {
    this.sim = sim;
    this.slot = slot;
    this.id = `search-${sim.simId}`;
    this.running = false;
    this.stopped = false;
  }

  async init() {
    await this.sim.whenReady();
    const info = await this.sim.worker.request("search_info", { preset: this.sim.meta.name, overrides: this.sim.overrides });
    if (!info.supported) return;
    this.info = info;
    this.go = el("button", {
      type: "button",
      class: "cs-btn",
      "data-search-go": true,
      text: `Find a ${info.searches} that breaks this`,
      onclick: () => this.run(),
    });
    this.stop = el("button", { type: "button", class: "cs-btn", hidden: true, text: "Stop", onclick: () => (this.stopped = true) });
    this.objective = el("input", {
      type: "text",
      class: "cs-search-objective",
      value: info.objective,
      size: "40",
      spellcheck: "false",
      "aria-label": "Objective to maximize",
    });
    this.bar = el("progress", { max: "1", value: "0", hidden: true, "aria-label": "Search progress" });
    this.note = el("p", { class: "muted cs-search-note", role: "status", "aria-live": "polite" });
    const hint = `maximize, over ${info.searches}s, arithmetic of METRIC(policy, size) with k = ${info.size}; ${info.budget} evaluations`;
    this.slot.replaceChildren(
      el(
        "div",
        { class: "cs-search" },
        this.go,
        el("label", { title: hint }, el("span", { class: "muted", text: " objective " }), this.objective),
        this.stop,
        this.bar,
      ),
      this.note,
    );
    this.slot.dataset.searchState = "idle";
  }

  _state(s, text) {
    this.slot.dataset.searchState = s;
    this.note.textContent = text;
  }

  /** A found schedule in words, one event a line as the CLI prints it, then what the checker caught. */
  _showSchedule(r) {
    const words = (ev) =>
      Object.entries(ev)
        .map(([k, v]) => `${k} ${k === "t" ? Number(v.toFixed(3)) : typeof v === "object" ? JSON.stringify(v) : v}`)
        .join(", ");
    this.slot.append(
      el(
        "div",
        { class: "cs-search-found" },
        el("p", { class: "muted", text: `The schedule (${r.steps} steps, ${r.schedule.length} events):` }),
        el("ol", { "data-search-schedule": true }, ...r.schedule.map((ev) => el("li", { text: words(ev) }))),
        el("ul", { "data-search-why": true }, ...r.why.map((line) => el("li", { text: line }))),
      ),
    );
  }

  async run() {
    if (this.running) return;
    const sim = this.sim;
    const w = sim.worker;
    this.running = true;
    this.stopped = false;
    this.go.disabled = true;
    this.stop.hidden = false;
    this.bar.hidden = false;
    this.bar.value = 0;
    this.slot.querySelector(".cs-search-found")?.remove();
    sim.pause();
    try {
      const keep = Object.fromEntries(
        Object.entries(sim.overrides).filter(([k]) => k !== "workload" && k !== "controls" && !k.startsWith("workload.")),
      );
      let s = await w.request("search_start", {
        id: this.id,
        preset: sim.meta.name,
        seed: sim.seed,
        overrides: keep,
        objective: this.objective.value,
      });
      this._state("running", `searching: ${s.objective}, k = ${s.size}`);
      let n = 100;
      while (!s.done && !this.stopped) {
        const t0 = performance.now();
        s = await w.request("search_run", { id: this.id, n });
        const ms = performance.now() - t0;
        n = Math.max(10, Math.min(20000, Math.round((n * CHUNK_MS) / Math.max(ms, 1))));
        this.bar.value = s.evaluations / s.budget;
        this._state("running", `${s.evaluations} of ${s.budget} evaluations; best ${fmt(s.best_score)} (at ${s.found_at})`);
      }
      const r = await w.request("search_result", { id: this.id });
      await w.request("search_drop", { id: this.id });
      if (!(r.best_score > 0)) {
        this._state(
          "none",
          `No ${this.info.searches} found that breaks this in ${r.evaluations} evaluations: the best scores ${fmt(r.best_score)}.`,
        );
        return;
      }
      const shown = Object.entries(r.panels)
        .map(
          ([name, m]) =>
            `${name}: ${Object.entries(m)
              .filter(([k]) => r.objective.includes(k))
              .map(([k, v]) => `${k} ${fmt(v)}`)
              .join(", ")}`,
        )
        .join("; ");
      await sim.restart({ ...keep, ...r.overrides });
      const cut = r.shrunk
        ? `, then shrunk from ${r.shrunk.from} to ${r.shrunk.to} ${r.shrunk.minimal ? "(no single one can go)" : "(stopped before a minimum)"}`
        : "";
      this._state(
        "found",
        `Found ${r.objective} = ${fmt(r.best_score)} at evaluation ${r.found_at}${cut} (${shown}). Loaded from t = 0: press play, or copy the link.`,
      );
      if (r.schedule) this._showSchedule(r);
    } catch (err) {
      this._state("error", `Search failed: ${err.message}`);
    } finally {
      this.running = false;
      this.go.disabled = false;
      this.stop.hidden = true;
      this.bar.hidden = true;
    }
  }
}

const sim = document.querySelector("contention-sim");
const slot = document.querySelector("[data-search]");
if (sim && slot) new SearchBox(sim, slot).init().catch(() => {});
