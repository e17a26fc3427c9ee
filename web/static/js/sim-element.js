// <contention-sim preset seed speed panels t overrides actions autoplay controls>: one live
// simulation. Contract (DESIGN.md): data-state = loading | ready | running | paused | error;
// play(), pause(), step(), seek(t), snapshot() -> Promise<{t, panels: {name: {metric: value}}}>.
// The parts: link.js (the URL codec), meta.js (the preset's metadata), poster.js (the build's
// frames and the handover), sim-ui.js (the DOM), driver.js (the clock), charts.js (the charts).
import { sharedWorker } from "./worker-client.js";
import { Channel, Clock, sliderFromSpeed, SPEED_MIN, SPEED_MAX } from "./driver.js";
import { actionLabel } from "./action-label.js";
import { ceilTime, parseActions, parseOverrides, parsePanels } from "./link.js";
import { claimOf, loadMeta, shownByDefault } from "./meta.js";
import { Poster, dropPoster, handover } from "./poster.js";
import { buildUI, el, handleKey, readTheme, renderFrame, sharedScales, showSpeed, watchText } from "./sim-ui.js";
import { panelColors, siteDark } from "./palette.js";
import { loadTopic } from "./render.js";

export { formatActions, formatOverrides, parseActions, parseOverrides } from "./link.js";
export { loadMeta } from "./meta.js";

// charts.js (and uPlot) load on first use, so a subclass with its own `static Charts` (the embed) never fetches them
const loadCharts = () => import("./charts.js").then((m) => m.Charts);
const STEP_LIMIT = 200; // events one step() may pass over looking for a notable one
let seq = 0;

export class ContentionSim extends HTMLElement {
  static observedAttributes = ["speed"];
  /** Subclasses (the embed) set this to render into an open shadow root with its own styles. */
  static shadow = false;
  /** Whether the `edits` attribute (a link's edited policies) may run, after the reader's yes (consent.js). */
  static linkEdits = true;

  constructor() {
    super();
    this.simId = `sim-${++seq}-${Math.random().toString(36).slice(2, 7)}`;
    this.mode = "loading"; // loading -> poster? -> live | error (see poster.js)
    this.frame = null;
    this.actions = [];
    this.overrides = {};
    this.handover = null;
    this.poster = null;
    this._live = null;
    this._renderScheduled = false;
    this.renderTimes = [];
  }

  // -- public API (DESIGN.md) ------------------------------------------------------------------
  get state() {
    return this.dataset.state || "loading";
  }
  get t() {
    return this.clock ? this.clock.shown : 0;
  }
  get speed() {
    return this.clock ? this.clock.speed : Number(this.getAttribute("speed")) || 1;
  }
  play() {
    if (!this.clock || this.mode === "error") return;
    this.clock.play();
    this._syncState();
  }
  pause() {
    this.clock?.pause();
    this._syncState();
    this._changed();
  }
  /**
   * Step to the next notable event (a miss, an eviction, a refusal, a new maximum...), at most
   * STEP_LIMIT events on; the step note says what happened. Resolves to {t, events, text}.
   */
  async step() {
    await this.whenLive();
    this.pause();
    const { describeStep, isNotable } = await import("./steps.js"); // loaded on the first step
    const before = this.frame;
    let f = before;
    let events = 0;
    while (events < STEP_LIMIT) {
      f = await this.channel.request("step");
      events++;
      if (!before || isNotable(before, f, this.panelNames) || f.t >= this.meta.duration) break;
    }
    const text = describeStep(before, f, this.panelNames, events, this.meta.metrics);
    this.ui.stepNote.hidden = false;
    this.ui.stepNote.textContent = text;
    return { t: f.t, events, text };
  }
  async seek(t) {
    await this.whenReady();
    t = Math.max(0, Math.min(Number(t), this.meta.duration));
    this.clock.set(t);
    const f = await this.channel.request(this.mode === "live" ? "seek" : "advance", { t });
    this._changed();
    return { t: f.t };
  }
  async snapshot() {
    await this.whenLive();
    const snap = await this.channel.request("snapshot");
    return this.editRun ? this.editRun.snapshot(snap) : snap;
  }
  setSpeed(x) {
    x = Math.min(SPEED_MAX, Math.max(SPEED_MIN, Number(x) || 1));
    if (this.clock) this.clock.speed = x;
    if (this.ui) {
      this.ui.speed.value = String(sliderFromSpeed(x));
      showSpeed(this.ui, x);
    }
    this._changed();
  }
  /**
   * Inject action `index` ("break it"; or a drawn fault's key, faults.js) at the current time, rounded up to the link's millisecond
   * so a copied link replays it exactly. When paused, the run moves on a little so the effect shows.
   */
  async inject(index) {
    await this.whenLive();
    const at = ceilTime(this.t);
    if (at > this.t) await this.channel.request("advance", { t: at });
    const r = await this.channel.request("inject", { action: index });
    this.actions = r.actions;
    this.editRun?.inject(index, at);
    this.charts.mark?.(at, actionLabel(this.meta, index));
    if (!this.clock.playing) {
      const ahead = Math.min(this.meta.duration, at + Math.max(1, this.meta.duration / 30));
      this.clock.set(ahead);
      await this.channel.request("advance", { t: ahead });
    }
    this._changed();
    return r;
  }
  /** Mark these keys in the views (what two panels' decisions moved: diverge.js); [] clears. */
  mark(keys) {
    this.marked = new Set((keys || []).map(String));
    this._scheduleRender();
  }
  /** Restart from t=0 with parameter overrides (deterministic: same seed, same stream). */
  async restart(overrides = this.overrides) {
    this._dropPoster();
    this.overrides = { ...overrides };
    this.actions = [];
    this.handover = null;
    await this._create(0);
    if (this.ui.watch) this.ui.watch.textContent = watchText(this.meta, this.overrides);
    this._changed();
  }
  /**
   * A parameter change that keeps the reader's place: the new run goes to the current time (and
   * keeps playing if it was), the previous run stays on the charts as a faint line.
   */
  async retune(overrides) {
    const playing = this.clock.playing;
    const t = this.t;
    this.clock.pause();
    this.charts.keepAsGhost?.();
    this._dropPoster();
    this.overrides = { ...overrides };
    this.actions = this.actions.filter(([, at]) => at <= t);
    if (this.ui.watch) this.ui.watch.textContent = watchText(this.meta, this.overrides);
    await this._create(t);
    if (playing) this.play();
    this._changed();
  }
  /** Show these panels (names of the preset's panels), at the current time. */
  async choosePanels(names) {
    const playing = this.clock.playing;
    const t = this.t;
    this.clock.pause();
    this._dropPoster();
    const known = new Set(this.meta.panels.map((p) => p.name));
    this.panelNames = [...new Set(names)].filter((n) => known.has(n)); // in the order asked: a concept shows its own first
    this._rebuildUI();
    await this._create(t);
    if (playing) this.play();
    this._changed();
  }
  whenReady() {
    return this._ready || Promise.reject(new Error("not connected"));
  }
  whenLive() {
    return this._ready ? this._ready.then(() => this._live) : Promise.reject(new Error("not connected"));
  }
  /** The link state: {seed, speed, t, panels, defaultPanels, overrides, actions}. */
  linkState() {
    return {
      seed: this.seed,
      speed: this.speed,
      t: this.t,
      panels: this.panelNames,
      overrides: this.overrides,
      actions: this.actions,
      edits: this.edits || [],
      defaultPanels: this.meta ? shownByDefault(this.meta, this.edits || []) : [],
    };
  }
  /** A panel's colour: fixed by its place among the preset's panels, whichever are shown. */
  colorOf(name) {
    const k = this.meta.panels.findIndex((p) => p.name === name);
    return this.colors[Math.max(0, k)];
  }
  /** Metrics shown first in each panel: the claim's metric, then the charted ones. */
  firstMetrics() {
    const claim = claimOf(this.meta)?.metric;
    const out = claim ? [claim] : [];
    for (const c of this.meta.charts || []) {
      const base = c.replace(/@recent$/, "");
      if (!out.includes(base)) out.push(base);
    }
    return out;
  }

  // -- lifecycle -------------------------------------------------------------------------------
  connectedCallback() {
    if (this._started) return;
    this._started = true;
    this.root = this.constructor.shadow ? this.attachShadow({ mode: "open" }) : this;
    const siteTheme = document.documentElement.dataset.theme; // the site's toggle reaches a shadow root this way
    if (this.constructor.shadow && !this.hasAttribute("theme")) {
      this.dataset.siteTheme = ""; // theme.js keeps `theme` in step with the toggle
      if (siteTheme === "dark" || siteTheme === "light") this.setAttribute("theme", siteTheme);
    }
    this._onTheme = () => this._themeChanged();
    document.addEventListener("cs-theme", this._onTheme);
    this.dataset.state = "loading";
    this.status = el("p", { class: "cs-status", role: "status", "aria-live": "polite", text: "Loading the simulation…" });
    this.root.append(this.status);
    let readyResolve, readyReject;
    this._ready = new Promise((res, rej) => ((readyResolve = res), (readyReject = rej)));
    this._ready.catch(() => {});
    this._init().then(readyResolve, (err) => {
      this._fail(err);
      readyReject(err);
    });
  }

  disconnectedCallback() {
    document.removeEventListener("cs-theme", this._onTheme);
    this.clock?.destroy();
    this.charts?.destroy();
    this._unRestart?.();
    this.editRun?.close();
    this.worker?.request("drop", { id: this.simId }).catch(() => {});
    this._started = false;
  }

  attributeChangedCallback(name, _old, value) {
    if (name === "speed" && this.clock) this.setSpeed(value);
  }

  async _init() {
    const name = this.getAttribute("preset");
    if (!name) throw new Error('no preset: set the "preset" attribute');
    this.meta = await loadMeta(name);
    // start the worker (Pyodide's download and compile) before building the UI, or asking about edits
    this.worker = this.constructor.worker ? this.constructor.worker() : sharedWorker();
    this._unRestart = this.worker.onRestart(() => this._recover());
    // edited policies a link carries (edits.js, editor.js) run only once the reader says yes
    // edits.js loads only where a link carries edits (an embed never runs them: linkEdits = false)
    const edits = this.constructor.linkEdits && this.getAttribute("edits") ? await import("./edits.js") : null;
    const carried = edits ? await edits.parseEdits(this.getAttribute("edits")) : [];
    this.edits = carried.length ? await (await import("./consent.js")).consent(this, carried) : [];
    const refused = new Set(carried.filter((e) => !this.edits.includes(e)).map((e) => e.name));
    if (this.edits.length) this.meta = edits.withEdits(this.meta, this.edits);
    await loadTopic(this.meta.topic); // its renderers, before the first frame is drawn
    const m = this.meta;
    const seedAttr = this.getAttribute("seed");
    this.seed = seedAttr === null || seedAttr === "" ? m.seed : Number(seedAttr);
    if (!Number.isInteger(this.seed)) throw new Error(`seed must be an integer, got "${seedAttr}"`);
    const names = parsePanels(this.getAttribute("panels")).filter((n) => !refused.has(n));
    const valid = m.panels.map((p) => p.name);
    for (const n of names) if (!valid.includes(n)) throw new Error(`unknown panel "${n}" for ${m.name}; valid: ${valid.join(", ")}`);
    this.panelNames = names.length ? names : shownByDefault(m, this.edits);
    this.overrides = parseOverrides(this.getAttribute("overrides"));
    this.actions = parseActions(this.getAttribute("actions"));
    // where the page opens, already playing (the preset's site.start)
    const start = m.start || 0;
    const t0 = Math.max(0, Math.min(this.hasAttribute("t") ? Number(this.getAttribute("t")) || 0 : start, m.duration));
    const posterOk =
      this.seed === m.seed && !Object.keys(this.overrides).length && !this.actions.length && !this.edits.length && t0 === start;
    this.poster = posterOk && m.poster && m.poster.length ? new Poster(m.poster) : null;

    this._Charts = this.constructor.Charts || (await loadCharts());
    const dark = this.dark ?? siteDark(); // `dark`: a subclass's theme override
    this.colors = panelColors(m.panels.length, dark);
    this._buildUI();
    this.clock = new Clock({
      duration: m.duration,
      advance: (t) => this.channel.request("advance", { t }).catch(() => {}),
      canRequest: () => this.channel.idle,
      onEnd: () => this._syncState(),
    });
    this.channel = new Channel(
      (op, args) => this._send(op, args),
      (op, result) => this._onResult(op, result),
      (err, op) => this._onRequestError(err, op),
    );
    this.setSpeed(this.getAttribute("speed") || m.speed || 1);

    if (this.poster) {
      this.mode = "poster";
      this.clock.maxLead = Infinity;
      this._showPoster(0);
      this._setStatus("Preview from the build while Python starts…");
      // on a page, what works now and what waits, and how long Python has taken (an embed says its own)
      if (!this.constructor.shadow) import("./waiting.js").then((w) => this.mode === "poster" && w.waitingStatus(this));
    }
    const autoplay = this.getAttribute("autoplay") !== "false" && !matchMedia("(prefers-reduced-motion: reduce)").matches;
    if (autoplay && t0 === start) this.clock.play();
    this._syncState();
    this._create(t0); // not awaited: the poster plays meanwhile
  }

  async _create(t) {
    const m = this.meta;
    let liveResolve, liveReject;
    this._live = new Promise((res, rej) => ((liveResolve = res), (liveReject = rej)));
    this._live.catch(() => {});
    const wasPoster = this.mode === "poster";
    if (!wasPoster) this.mode = "loading";
    this._syncState();
    try {
      const edited = new Set(this.edits.map((e) => e.name));
      this.editErrors = {};
      if (this.edits.length) {
        // the edited panels run in a worker of their own, built meanwhile, from 0 to t and on (edited.js)
        this.editRun ||= new (await import("./edited.js")).EditedRun(this);
        this.editRun.start(t);
      } else {
        this.editRun?.close();
        this.editRun = null;
      }
      // createOp/createArgs: a page feature's own way to build the run (tracedrop.js: a dropped trace)
      const r = await this.worker.request(this.createOp || "create", {
        id: this.simId,
        preset: m.name,
        seed: this.seed,
        panels: this.panelNames.filter((n) => !edited.has(n)),
        overrides: this.overrides,
        actions: this.actions,
        t,
        ...this.createArgs,
      });
      this.info = r.info;
      if (r.info.duration !== this.meta.duration) this._adoptDuration(r.info.duration);
      this._adoptControls(r.info);
      if (wasPoster && this.mode === "poster") {
        await this.channel.request("handover");
      } else {
        this.mode = "live";
        this.charts?.reset();
        this.clock.set(r.frame.t);
        this._onResult("create", r.frame);
      }
      this._markActions();
      this._setStatus("");
      this._clearPanelErrors();
      this.liveAt ??= performance.now();
      liveResolve();
    } catch (err) {
      this._fail(err);
      liveReject(err);
    }
    this._syncState();
  }

  /** The worker died and came back: rebuild this simulation at the moment it had reached. */
  _recover() {
    if (!this.clock || (this.mode === "error" && !this.info)) return;
    const playing = this.clock.playing;
    this.clock.pause();
    this.channel.clear(new Error("worker restarted"));
    this.mode = "loading";
    this._setStatus("The simulation worker restarted; rebuilding…");
    this._create(this.clock.shown).then(() => playing && this.play());
  }

  async _send(op, args) {
    if (op === "handover") return this._handover();
    if (this.mode === "poster" && (op === "advance" || op === "seek")) {
      if (args.t >= this.poster.frames[0].t) return this._showPoster(this.poster.indexAt(args.t));
      // before the poster's first frame (the preset's start): only the live run has it
      this._dropPoster();
    }
    await this._live;
    return this.worker.request(op, { id: this.simId, ...args });
  }

  /** The build's frames are of the preset as written: a change of parameters or panels drops them. */
  _dropPoster() {
    dropPoster(this);
  }

  _handover() {
    return handover(this);
  }

  _showPoster(k) {
    const frame = this.poster.show(k, this.charts);
    this._onResult("poster", frame);
    return frame;
  }

  /** Scheduled events, injected actions and the workload's own moments as marks on the charts. */
  _markActions() {
    if (!this.charts.mark) return;
    this.charts.clearMarks?.();
    for (const m of this.info?.marks || []) this.charts.mark(m.t, m.label, "workload");
    for (const ev of this.meta.events || []) this.charts.mark(ev.t, ev.label || ev.kind.replaceAll("_", " "));
    for (const [i, t] of this.actions) this.charts.mark(t, actionLabel(this.meta, i));
  }

  /** The edited panels moved on (edited.js): draw them with the latest frame. */
  _editedFrame() {
    if (this.frame && this.mode === "live") this._onResult("edited", { ...this.frame, series: null });
  }

  _onResult(op, result) {
    if (op === "snapshot") return;
    let frame = op === "inject" ? result.frame : result;
    if (!frame || !frame.panels) return;
    if (this.editRun && op !== "poster") frame = this.editRun.merge(frame, op);
    if (op !== "poster" && frame.series) this.charts.apply(frame.series);
    this.frame = frame;
    if (op === "edited") return this._scheduleRender();
    this.clock.frameShown(frame.t);
    if (op === "step" || op === "seek") this.clock.set(frame.t);
    if (op !== "step" && this.ui && !this.ui.stepNote.hidden && op !== "inject") this.ui.stepNote.hidden = true;
    this._scheduleRender();
    if (!this.clock.playing) this._syncState();
  }

  _onRequestError(err, op) {
    if (err.message === "worker restarted" || err.message === "killed") return;
    this.clock.pause();
    this._setStatus(`${op} failed: ${err.message}`, true);
    this._syncState();
  }

  _fail(err) {
    this.mode = "error";
    this.clock?.pause();
    const msg = err && err.message ? err.message : String(err);
    this.dataset.state = "error";
    this.dataset.error = msg;
    this._setStatus(`This simulation cannot run: ${msg}`, true);
    for (const p of this.ui ? Object.values(this.ui.panels) : []) {
      p.error.hidden = false;
      p.error.textContent = msg;
    }
    this.dispatchEvent(new CustomEvent("cs-state", { detail: "error", bubbles: true }));
  }

  _clearPanelErrors() {
    delete this.dataset.error;
    for (const p of Object.values(this.ui.panels)) p.error.hidden = true;
  }

  _setStatus(text, isError = false) {
    this.status.textContent = text;
    this.status.hidden = !text;
    this.status.classList.toggle("cs-error", isError);
  }

  _syncState() {
    let s;
    if (this.mode === "error") s = "error";
    else if (this.mode !== "live") s = "loading";
    else if (this.clock.playing) s = "running";
    else s = this.clock.shown === 0 && !this._everPlayed ? "ready" : "paused";
    if (this.clock?.playing) this._everPlayed = true;
    if (this.ui) {
      const playing = this.clock.playing;
      this.ui.play.textContent = playing ? "❚❚ Pause" : "▶ Play";
      this.ui.play.setAttribute("aria-label", playing ? "Pause" : "Play");
      this.ui.play.setAttribute("aria-pressed", String(playing));
    }
    if (this.dataset.state !== s) {
      this.dataset.state = s;
      this.dispatchEvent(new CustomEvent("cs-state", { detail: s, bubbles: true }));
    }
  }

  _changed() {
    this.dispatchEvent(new CustomEvent("cs-change", { bubbles: true }));
  }

  // -- UI (sim-ui.js) ------------------------------------------------------------------------
  _buildUI() {
    this.ui = buildUI(this);
    this.charts = new this._Charts(
      this.ui.chartHost,
      this.meta.charts || [],
      this.panelNames,
      this.panelNames.map((n) => this.colorOf(n)),
      {
        columns: this.meta.series || this.meta.charts || [],
        windows: this.meta.windows || {},
        units: this.meta.metrics || {},
        duration: this.meta.duration,
        xy: this.meta.site?.xy,
      },
    );
    this._ro = new ResizeObserver(() => this._scheduleRender(true));
    for (const p of Object.values(this.ui.panels)) this._ro.observe(p.canvas.parentElement);
  }

  /** A run of another length than the preset's (a dropped trace): the clock, the time slider and the charts follow. */
  _adoptDuration(d) {
    this.meta = { ...this.meta, duration: d };
    this.clock.duration = d;
    this._rebuildUI();
  }

  /** The sliders follow the run: a workload found by search replaces the generator whose
   * sliders then go (web/pyodide/ops_search.py); back on the preset's own, they return. */
  _adoptControls(info) {
    const targets = (controls) => (controls || []).map((c) => c.target).join("\n");
    if (targets(info.controls) === targets(this.meta.controls)) return;
    this.meta = { ...this.meta, controls: info.controls, control_values: info.control_values };
    this._rebuildUI();
  }

  /** The page's theme changed: new panel colours, and canvases and charts drawn again in it. */
  async _themeChanged() {
    if (!this.ui || !this.clock || this.mode === "error") return;
    const colors = panelColors(this.meta.panels.length, this.dark ?? siteDark());
    if (colors.join() === this.colors.join() && this._themeCache?.fg === readTheme(this).fg) return;
    this.colors = colors;
    this._themeCache = null;
    if (this.mode !== "live") return this._rebuildUI(); // the poster's next frame draws in the new colours
    const playing = this.clock.playing;
    const t = this.t;
    this.clock.pause();
    this._rebuildUI();
    await this._create(t); // the new charts get their rows from 0
    if (playing) this.play();
  }

  /** Rebuild the DOM (a new choice of panels); the speed and the status line stay. */
  _rebuildUI() {
    this._ro?.disconnect();
    this.charts?.destroy();
    this.ui.wrap.remove();
    for (const link of this.root.querySelectorAll?.(":scope > link[rel=stylesheet]") || []) link.remove();
    this._buildUI();
    this.setSpeed(this.speed);
    this._syncState();
  }

  /** The keyboard: space/k play-pause, arrows seek (shift: 5 s) and change speed, "." steps. */
  handleKey(e) {
    handleKey(this, e);
  }

  _scheduleRender(resized = false) {
    if (resized) this._resized = true;
    if (this._renderScheduled) return;
    this._renderScheduled = true;
    requestAnimationFrame(() => {
      this._renderScheduled = false;
      const s = performance.now();
      this._render();
      this.renderTimes.push(performance.now() - s);
      if (this.renderTimes.length > 5000) this.renderTimes.splice(0, 1000);
    });
  }

  _render() {
    const f = this.frame;
    if (!f || !this.ui) return;
    this.firstFrameAt ??= performance.now(); // ms since navigation: the benchmark's first paint
    if (!this._themeCache || this._resized) this._themeCache = readTheme(this);
    renderFrame(this, f, { ...this._themeCache, scales: sharedScales(f, this.panelNames) }, this._resized);
    this._resized = false;
    this.charts.flush();
    this.charts.across?.(f);
  }
}

// an embed sets globalThis.contentionDefineLater before importing this module and defines its subclass
if (!globalThis.contentionDefineLater && !customElements.get("contention-sim")) customElements.define("contention-sim", ContentionSim);
