// Edited policies run in a worker of their own, never in the page's worker (where a dropped trace
// lives): a module worker started from a blob: URL, so the page's Content-Security-Policy governs
// it (sitebuild/csp.py: requests to this origin only, workers from blob: only), and which drops
// every way out of its global scope once Pyodide is up (worker.js). It gets what it needs by
// postMessage: the preset, seed, parameters, injected actions and the edits' source. It runs a
// session of the edited panels only on the page's stream (web/pyodide/ops_editor.py), follows the
// page's clock, and its panels and chart rows are merged into the page's frames (`merge`).
// A watchdog ends the worker when one request runs over WATCHDOG_MS (a builtin that never
// returns: 10**10**9, list(itertools.count())): the edited panels stop with a message, the others
// go on.
import { SimWorker } from "./worker-client.js";

export const WATCHDOG_MS = 4000; // the longest a request that runs edited code may take
const BOOT_MS = 120_000; // Pyodide's start, and building the stream: no edited code runs in them
const CHUNK = 0.02; // the share of the run the first request of a catch-up advances; then as below
const FAST_MS = 250; // a request quicker than this doubles the next one's stretch, one over 4x halves it
const NAME = "contention-edited"; // the worker's self.name: worker.js runs edited code only there
const TRACE_NOTE = "edited policies do not run on a dropped trace: your trace stays out of edited code (use the preset's own stream)";

let early = null; // a worker started before it is needed (the consent box, the editor)

const newWorker = () => new SimWorker(undefined, { name: NAME, restart: false });

/** Start the edited-policy worker ahead of need (Pyodide takes seconds); no edited code runs yet. */
export function prestart() {
  if (!early || early.dead) early = newWorker();
  return early;
}

/** The reader declined: the early worker is not needed. */
export function discardPrestarted() {
  early?.stop("not needed");
  early = null;
}

function adopt() {
  const w = early && !early.dead ? early : newWorker();
  early = null;
  return w;
}

class Watchdog extends Error {}

const watchdogText = (name, ms) =>
  `${name} stopped: its code ran for over ${Math.round(ms / 1000)} s without finishing a step of the simulation ` +
  "(a computation that never ends, such as 10**10**9 or list(itertools.count())?), so its worker was ended. " +
  "The other panels go on.";

export class EditedRun {
  constructor(sim) {
    this.sim = sim;
    this.worker = null;
    this.chain = Promise.resolve(); // requests go one at a time, so each one's time is its own
    this.epoch = 0; // one per start(): replies to an earlier one are dropped
    this.created = Promise.resolve();
    this._clear();
  }

  _clear() {
    this.t = 0; // where the edited session is
    this.target = 0; // where the page's session is
    this.running = false; // a session exists and follows the page
    this.busy = false;
    this.panels = {}; // the edited panels' latest {name: {metrics, view}}
    this.rows = []; // their chart rows by sample index, [t, {name: values of `own`}]
    this.own = []; // the columns of those rows: every metric the edited panels report
    this.main = []; // the page's chart rows, as the charts hold them
    this.dirty = Infinity; // the first row the charts must be sent again
    this.injects = []; // actions to pass on, [action, t]
    this.stretch = CHUNK * (this.sim.meta?.duration || 0); // virtual seconds the next advance may cover
    this._wake();
  }

  get names() {
    return this.sim.edits.map((e) => e.name);
  }

  /** A request to the edited worker, after those before it; it may take WATCHDOG_MS once the worker is up. */
  request(op, args, epoch = this.epoch) {
    const run = () => this._timed(op, args, epoch, op === "edited_create" ? BOOT_MS : WATCHDOG_MS);
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => {});
    return p;
  }

  async _timed(op, args, epoch, ms) {
    if (epoch !== this.epoch) throw new Error("superseded");
    if (!this.worker || this.worker.dead) this.worker = adopt();
    const w = this.worker;
    let timer;
    const limit = (ms, err) => new Promise((_, reject) => (timer = setTimeout(() => reject(err), ms)));
    try {
      await Promise.race([w.ready, limit(BOOT_MS, new Error("the edited policies' worker did not start"))]);
    } finally {
      clearTimeout(timer);
    }
    try {
      return await Promise.race([w.request(op, args), limit(ms, new Watchdog(String(ms)))]);
    } catch (err) {
      if (err instanceof Watchdog) {
        w.stop("watchdog");
        if (epoch === this.epoch) this._stop((name) => ({ kind: "watchdog", message: watchdogText(name, ms), line: null }));
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The edited source compiled, not run as a panel: {ok, policy} or {ok: false, error}. */
  check(base, source) {
    const m = this.sim.meta;
    return this.request("editor_check", { preset: m.name, overrides: this.sim.overrides, base, source }).catch((err) => {
      const text = err instanceof Watchdog ? watchdogText(base + " (edited)", Number(err.message)) : String(err.message || err);
      return { ok: false, error: { message: text, line: null, text } };
    });
  }

  /** (Re)build the edited panels on the page's stream, at 0, while the page builds its own run;
   * then follow the page to `t` and on. */
  start(t) {
    const sim = this.sim;
    this.epoch += 1;
    const epoch = this.epoch;
    this._clear();
    this.target = t;
    if (sim.createOp) {
      // a page feature's own stream (tracedrop.js: the reader's trace): never sent to edited code
      this._stop(() => ({ kind: "trace", message: TRACE_NOTE, line: null }));
      return (this.created = Promise.resolve());
    }
    const id = sim.simId;
    const stream = { id, preset: sim.meta.name, seed: sim.seed, overrides: sim.overrides };
    const edits = { id, actions: sim.actions, edits: sim.edits.map(({ base, source }) => ({ base, source })) };
    this.busy = true;
    const built = this.request("edited_create", stream, epoch); // the stream: none of the edits' code runs
    this.created = built
      .then(() => this.request("edited_apply", edits, epoch))
      .then(
        (r) => {
          if (epoch !== this.epoch) return;
          this.busy = false;
          Object.assign(sim.editErrors, r.errors);
          this.running = true;
          this._take(r.frame);
          this._pump();
        },
        (err) => epoch === this.epoch && this._failed(err),
      );
    return this.created;
  }

  /** The page injected `action` at `t`: the edited stream takes it too. */
  inject(action, t) {
    this.injects.push([action, t]);
    this._pump();
  }

  /** The page's frame `f` (op: what produced it) with the edited panels and their chart rows. */
  merge(f, op) {
    const s = f.series;
    if (s) {
      if (s.from < this.main.length) this.main.length = s.from;
      this.main.push(...s.rows);
      this.columns = s.columns;
      this.dirty = Math.min(this.dirty, s.from);
    }
    if (op !== "edited") {
      this.target = f.t;
      this._pump();
    }
    const from = Math.min(this.dirty, this.main.length);
    this.dirty = Infinity;
    const at = (this.columns || []).map((c) => this.own.indexOf(c)); // the edited rows' columns are their own
    const rows = this.main.slice(from).map(([t, byPanel], k) => {
      const mine = this.rows[from + k];
      if (!mine || mine[0] !== t) return [t, byPanel];
      const extra = Object.fromEntries(Object.entries(mine[1]).map(([n, v]) => [n, at.map((i) => (i < 0 ? null : v[i]))]));
      return [t, { ...byPanel, ...extra }];
    });
    return { ...f, panels: { ...f.panels, ...this.panels }, series: { from, rows, columns: this.columns } };
  }

  /** `snap` (the page's snapshot) with the edited panels' metrics, once they reached its time. */
  async snapshot(snap) {
    await this.created;
    this.target = snap.t;
    await new Promise((resolve) => {
      this.waiters.push([snap.t, resolve]);
      if (this.running)
        this._pump(); // wakes it once the session is there (at once if it is)
      else this._wake();
    });
    if (this.running) {
      const mine = await this.request("snapshot", { id: this.sim.simId }).catch(() => null);
      if (mine) return { ...snap, panels: { ...snap.panels, ...mine.panels } };
    }
    const stopped = Object.fromEntries(Object.entries(this.panels).map(([n, p]) => [n, p.metrics]));
    return { ...snap, panels: { ...snap.panels, ...stopped } };
  }

  close() {
    this.epoch += 1;
    this.worker?.stop("closed");
    this.worker = null;
    this._clear();
  }

  // -- following the page --------------------------------------------------------------------
  _pump() {
    if (!this.running || this.busy) return;
    let op, args;
    if (this.target < this.t - 1e-9)
      [op, args] = ["seek", { t: this.target }]; // back first: an action then lands in the present
    else if (this.injects.length) {
      const [action, t] = this.injects.shift();
      [op, args] = ["edited_inject", { action, t }];
    } else if (this.target > this.t) {
      const next = this.t + this.stretch; // the last step is exactly the page's time
      [op, args] = ["advance", { t: this.target - next < 1e-9 ? this.target : next }];
    } else return this._wake();
    const epoch = this.epoch;
    const sent = performance.now();
    this.busy = true;
    this.request(op, { id: this.sim.simId, ...args }, epoch).then(
      (r) => {
        if (epoch !== this.epoch) return;
        this.busy = false;
        const ms = performance.now() - sent; // how much of the run the next request may advance
        if (op === "advance") this.stretch = ms < FAST_MS ? this.stretch * 2 : ms > 4 * FAST_MS ? this.stretch / 2 : this.stretch;
        this._take(op === "edited_inject" ? r.frame : r);
        this._pump();
      },
      (err) => epoch === this.epoch && this._failed(err),
    );
  }

  _take(f) {
    this.t = f.t;
    this.panels = f.panels;
    const s = f.series;
    if (s) {
      if (s.from < this.rows.length) this.rows.length = s.from;
      this.rows.push(...s.rows);
      this.own = s.columns;
      this.dirty = Math.min(this.dirty, s.from);
    }
    this.sim._editedFrame();
  }

  /** Resolve the snapshots waiting for the session to reach their time (all, once it stopped). */
  _wake() {
    const waiting = this.waiters || [];
    this.waiters = waiting.filter(([t]) => this.running && t > this.t + 1e-9);
    for (const [t, resolve] of waiting) if (!this.running || t <= this.t + 1e-9) resolve();
  }

  /** Every edited panel stops with `error(name)`, keeping the numbers it had. */
  _stop(error) {
    this.running = false;
    this.busy = false;
    for (const name of this.names) {
      const e = error(name);
      this.sim.editErrors[name] = { ...e, text: e.message };
    }
    this._wake();
    this.sim._editedFrame();
    this.sim.editor?.watch(); // the message at once, not at the editor's next look
  }

  _failed(err) {
    if (err instanceof Watchdog) return; // _timed stopped the panels already
    const text = String(err.message || err);
    this._stop((name) => ({ kind: "exception", message: `${name} stopped: ${text}`, line: null }));
  }
}
