// <contention-sim preset seed speed panels t overrides actions autoplay controls>: one live
// simulation. Contract (DESIGN.md): data-state = loading | ready | running | paused | error;
// play(), pause(), step(), seek(t), snapshot() -> Promise<{t, panels: {name: {metric: value}}}>.
// Until Python is live it animates the precomputed poster frames from the build; when the worker
// takes over, its frame at the handover time must equal the poster's (else a visible error).
import { sharedWorker } from "./worker-client.js";
import { Channel, Clock, MAX_LEAD, speedFromSlider, sliderFromSpeed, SPEED_MIN, SPEED_MAX } from "./driver.js";
import { drawView, fmt, loadTopic } from "./render.js";
// charts.js (and uPlot) load on first use, so a subclass with its own `static Charts` (the embed) never fetches them
const loadCharts = () => import("./charts.js").then((m) => m.Charts);

const STATIC = new URL("../", import.meta.url);
const LIGHT = ["#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626"];
const DARK = ["#60a5fa", "#fbbf24", "#34d399", "#f472b6", "#a78bfa", "#22d3ee", "#a3e635", "#f87171"];
let seq = 0;

const metaCache = new Map();

/** A preset's site metadata: inline on its page, else fetched from static/presets/NAME.json. */
export function loadMeta(name) {
  if (metaCache.has(name)) return metaCache.get(name);
  const inline = document.querySelector(`script[type="application/json"][data-contention-preset="${CSS.escape(name)}"]`);
  const p = inline
    ? Promise.resolve(JSON.parse(inline.textContent))
    : fetch(new URL(`presets/${encodeURIComponent(name)}.json`, STATIC)).then((r) => {
        if (r.status === 404) throw new Error(`unknown preset "${name}"`);
        if (!r.ok) throw new Error(`cannot load preset "${name}": HTTP ${r.status}`);
        return r.json();
      });
  metaCache.set(name, p);
  return p;
}

/** "workload.rate=5;defaults.size=50" <-> {"workload.rate": 5, ...} */
export function parseOverrides(text) {
  const out = {};
  for (const part of (text || "").split(";")) {
    const i = part.indexOf("=");
    if (i <= 0) continue;
    const v = part.slice(i + 1).trim();
    out[part.slice(0, i).trim()] = v !== "" && !Number.isNaN(Number(v)) ? Number(v) : v;
  }
  return out;
}
export const formatOverrides = (o) =>
  Object.entries(o)
    .map(([k, v]) => `${k}=${v}`)
    .join(";");
/** "0@5.2,1@7" <-> [[0, 5.2], [1, 7]] (action index @ virtual time, in injection order) */
export const parseActions = (text) =>
  (text || "")
    .split(",")
    .filter((s) => s.includes("@"))
    .map((s) => s.split("@").map(Number))
    .filter(([i, t]) => Number.isInteger(i) && Number.isFinite(t));
export const formatActions = (a) => a.map(([i, t]) => `${i}@${t}`).join(",");

const isRatio = (m) => /(rate|ratio|frag|utilization|fraction)$/.test(m);
const isTime = (m) => /(latency|ttft|tpot|e2e|itl|_wait$)/.test(m);
function formatMetric(name, v) {
  if (typeof v !== "number") return String(v ?? "–");
  if (isRatio(name) && v >= 0 && v <= 1) return `${(v * 100).toFixed(1)}%`;
  if (isTime(name) && v === 0) return "0";
  if (isTime(name)) return v < 1 ? `${(v * 1000).toFixed(v < 0.01 ? 2 : 0)} ms` : `${v.toFixed(2)} s`;
  return fmt(v);
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children);
  return e;
}

export class ContentionSim extends HTMLElement {
  static observedAttributes = ["speed"];
  /** Subclasses (the embed) set this to render into an open shadow root with its own styles. */
  static shadow = false;

  constructor() {
    super();
    this.simId = `sim-${++seq}-${Math.random().toString(36).slice(2, 7)}`;
    this.mode = "loading"; // loading -> poster? -> live | error
    this.frame = null;
    this.actions = [];
    this.overrides = {};
    this.handover = null;
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
  async step() {
    await this.whenLive();
    this.pause();
    const f = await this.channel.request("step");
    return { t: f.t };
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
    return this.channel.request("snapshot");
  }
  setSpeed(x) {
    x = Math.min(SPEED_MAX, Math.max(SPEED_MIN, Number(x) || 1));
    if (this.clock) this.clock.speed = x;
    if (this.ui) {
      this.ui.speed.value = String(sliderFromSpeed(x));
      this.ui.speedOut.textContent = `${x < 1 ? x.toFixed(2) : x.toFixed(1)}×`;
    }
    this._changed();
  }
  async inject(index) {
    await this.whenLive();
    const r = await this.channel.request("inject", { action: index });
    this.actions = r.actions;
    this._changed();
    return r;
  }
  /** Restart from t=0 with parameter overrides (deterministic: same seed, same stream). */
  async restart(overrides = this.overrides) {
    if (this.mode === "poster") {
      // the build's frames are for the preset as written: drop them rather than compare
      this.poster = null;
      this.mode = "loading";
      this.clock.maxLead = MAX_LEAD;
      this.charts.reset();
    }
    this.overrides = { ...overrides };
    this.actions = [];
    this.handover = null;
    await this._create(0);
    this._changed();
  }
  whenReady() {
    return this._ready || Promise.reject(new Error("not connected"));
  }
  whenLive() {
    return this._ready ? this._ready.then(() => this._live) : Promise.reject(new Error("not connected"));
  }
  /** The link state: {seed, speed, t, panels, overrides, actions}. */
  linkState() {
    return {
      seed: this.seed,
      speed: this.speed,
      t: this.t,
      panels: this.panelNames,
      overrides: this.overrides,
      actions: this.actions,
      defaultPanels: this.meta?.panels.map((p) => p.name),
    };
  }

  // -- lifecycle -------------------------------------------------------------------------------
  connectedCallback() {
    if (this._started) return;
    this._started = true;
    this.root = this.constructor.shadow ? this.attachShadow({ mode: "open" }) : this;
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
    this.clock?.destroy();
    this.charts?.destroy();
    this._unRestart?.();
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
    await loadTopic(this.meta.topic); // its renderers, before the first frame is drawn
    const m = this.meta;
    const seedAttr = this.getAttribute("seed");
    this.seed = seedAttr === null || seedAttr === "" ? m.seed : Number(seedAttr);
    if (!Number.isInteger(this.seed)) throw new Error(`seed must be an integer, got "${seedAttr}"`);
    const names = (this.getAttribute("panels") || "").split(",").map((s) => s.trim()).filter(Boolean);
    const valid = m.panels.map((p) => p.name);
    for (const n of names)
      if (!valid.includes(n)) throw new Error(`unknown panel "${n}" for ${m.name}; valid: ${valid.join(", ")}`);
    this.panelNames = names.length ? names : valid;
    this.overrides = parseOverrides(this.getAttribute("overrides"));
    this.actions = parseActions(this.getAttribute("actions"));
    const t0 = Math.max(0, Math.min(Number(this.getAttribute("t")) || 0, m.duration));
    const posterOk = this.seed === m.seed && !Object.keys(this.overrides).length && !this.actions.length && t0 === 0;
    this.poster = posterOk && m.poster && m.poster.length ? m.poster : null;
    this.posterShown = -1;

    // start the worker (Pyodide's download and compile) before building the UI
    this.worker = this.constructor.worker ? this.constructor.worker() : sharedWorker();
    this._unRestart = this.worker.onRestart(() => this._recover());
    this._Charts = this.constructor.Charts || (await loadCharts());
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
      this._setStatus("Preview from the build: Python is starting…");
    }
    const autoplay = this.getAttribute("autoplay") !== "false" && !matchMedia("(prefers-reduced-motion: reduce)").matches;
    if (autoplay && t0 === 0) this.clock.play();
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
      const r = await this.worker.request("create", {
        id: this.simId,
        preset: m.name,
        seed: this.seed,
        panels: this.panelNames,
        overrides: this.overrides,
        actions: this.actions,
        t,
      });
      this.info = r.info;
      if (wasPoster && this.mode === "poster") {
        await this.channel.request("handover");
      } else {
        this.mode = "live";
        this.charts?.reset();
        this.clock.set(r.frame.t);
        this._onResult("create", r.frame);
      }
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
    if (this.mode === "poster" && (op === "advance" || op === "seek")) return this._posterAt(args.t);
    await this._live;
    return this.worker.request(op, { id: this.simId, ...args });
  }

  async _handover() {
    const k = Math.max(0, this.posterShown);
    const expected = this.poster[k];
    const live = await this.worker.request("advance", { id: this.simId, t: expected.t });
    const diffs = [];
    if (live.t !== expected.t) diffs.push(`t ${live.t} != ${expected.t}`);
    for (const n of this.panelNames) {
      const [a, b] = [live.panels[n] || {}, expected.panels[n] || {}];
      if (JSON.stringify(a.metrics) !== JSON.stringify(b.metrics)) diffs.push(`${n} metrics`);
      else if (JSON.stringify(a.view) !== JSON.stringify(b.view)) diffs.push(`${n} view`);
    }
    this.handover = { t: expected.t, ok: !diffs.length, diffs };
    this.clock.maxLead = MAX_LEAD;
    this.clock.set(live.t);
    this.dataset.handover = diffs.length ? "mismatch" : "ok";
    this.mode = "live";
    if (diffs.length) {
      this.ui.banner.hidden = false;
      this.ui.banner.textContent =
        `Python's frame at t=${expected.t} differs from the precomputed one (${diffs.join(", ")}): ` +
        "the browser and the build disagree — please report this.";
    }
    this.charts.reset();
    return live;
  }

  _posterAt(t) {
    let k = 0;
    while (k + 1 < this.poster.length && this.poster[k + 1].t <= t) k++;
    this._showPoster(k);
    return this.poster[k];
  }

  _showPoster(k) {
    if (k < this.posterShown) {
      this.charts.reset();
      this.posterShown = -1;
    }
    for (let i = this.posterShown + 1; i <= k; i++) this.charts.apply(this.poster[i].series);
    this.posterShown = k;
    this._onResult("poster", this.poster[k]);
  }

  _onResult(op, result) {
    if (op === "snapshot") return;
    const frame = op === "inject" ? result.frame : result;
    if (!frame || !frame.panels) return;
    if (op !== "poster" && frame.series) this.charts.apply(frame.series);
    this.frame = frame;
    this.clock.frameShown(frame.t);
    if (op === "step" || op === "seek") this.clock.set(frame.t);
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

  // -- UI --------------------------------------------------------------------------------------
  _buildUI() {
    const m = this.meta;
    const full = this.getAttribute("controls") !== "basic";
    if (this.constructor.shadow) {
      for (const href of ["css/sim.css", "vendor/uplot/uPlot.min.css"])
        this.root.append(el("link", { rel: "stylesheet", href: new URL(href, STATIC).href }));
    }
    const ui = (this.ui = { panels: {} });
    ui.play = el("button", { type: "button", class: "cs-btn cs-primary", onclick: () => (this.clock.playing ? this.pause() : this.play()) });
    const stepBtn = el("button", { type: "button", class: "cs-btn", "aria-label": "Step to the next event", title: "Step (.)", text: "Step ›", onclick: () => this.step().catch(() => {}) });
    const resetBtn = el("button", { type: "button", class: "cs-btn", "aria-label": "Reset to the start", title: "Reset", text: "↺ Reset", onclick: () => this.seek(0).catch(() => {}) });
    ui.speed = el("input", { type: "range", min: "0", max: "1", step: "0.001", "aria-label": "Speed", oninput: (e) => this.setSpeed(speedFromSlider(Number(e.target.value))) });
    ui.speedOut = el("output", { class: "cs-num" });
    ui.time = el("input", {
      type: "range", min: "0", max: String(m.duration), step: "any", value: "0", "aria-label": "Virtual time (drag to seek)",
      oninput: (e) => this.seek(Number(e.target.value)).catch(() => {}),
      onpointerdown: () => (this._dragging = true),
      onpointerup: () => (this._dragging = false),
    });
    ui.timeOut = el("output", { class: "cs-num" });
    const bar = el(
      "div",
      { class: "cs-controls" },
      ui.play,
      stepBtn,
      resetBtn,
      el("label", { class: "cs-speed" }, el("span", { text: "Speed" }), ui.speed, ui.speedOut),
      el("label", { class: "cs-time" }, el("span", { text: "Time" }), ui.time, ui.timeOut),
    );
    ui.banner = el("p", { class: "cs-banner", role: "alert", hidden: true });
    const extras = el("div", { class: "cs-extras" });
    if (full) {
      for (const c of m.controls || []) extras.append(this._controlUI(c));
      m.actions?.forEach((a, i) =>
        extras.append(el("button", { type: "button", class: "cs-btn cs-break", text: `⚡ ${a.label}`, "aria-label": `Break it: ${a.label}`, onclick: () => this.inject(i).catch(() => {}) })),
      );
    }
    const watch = m.watch_for && this.getAttribute("caption") !== "false" ? el("p", { class: "cs-watch" }, el("strong", { text: "Watch for: " }), m.watch_for) : "";
    const grid = el("div", { class: "cs-panels" });
    this.keyMetrics = new Set(m.key_metrics || []);
    const dark = this.dark ?? matchMedia("(prefers-color-scheme: dark)").matches; // `dark`: a subclass's theme override
    this.colors = dark ? DARK : LIGHT;
    for (const [k, name] of this.panelNames.entries()) {
      const spec = m.panels.find((p) => p.name === name);
      const canvas = el("canvas", { role: "img", "aria-label": `${name}: state of the ${spec.policy} policy` });
      const metrics = el("dl", { class: "cs-metrics" });
      const moreList = el("dl", { class: "cs-metrics" });
      const more = el("details", { class: "cs-more", hidden: true }, el("summary", { text: "more metrics" }), moreList);
      const error = el("p", { class: "cs-panel-error", role: "alert", hidden: true });
      const fig = el(
        "figure",
        { class: "cs-panel", "data-panel": name, style: `--cs-panel-color:${this.colors[k % this.colors.length]}` },
        el("figcaption", {}, el("span", { class: "cs-swatch" }), el("b", { text: name }), spec.policy !== name ? el("small", { text: spec.policy }) : ""),
        el("div", { class: "cs-canvas" }, canvas),
        error,
        metrics,
        more,
      );
      grid.append(fig);
      ui.panels[name] = { canvas, metrics, more, moreList, error, cells: {}, w: 0, h: 0 };
    }
    const chartHost = el("div", { class: "cs-charts" });
    const wrap = el("div", { class: "cs", tabindex: "0", onkeydown: (e) => this.handleKey(e) }, ui.banner, watch, bar, extras, grid, chartHost);
    this.root.append(wrap);
    this.charts = new this._Charts(chartHost, m.charts || [], this.panelNames, this.colors);
    this._ro = new ResizeObserver(() => this._scheduleRender(true));
    for (const p of Object.values(ui.panels)) this._ro.observe(p.canvas.parentElement);
  }

  _controlUI(c) {
    const [section, key] = c.target.split(".");
    const cur = this.overrides[c.target] ?? this.meta.control_values?.[c.target] ?? c.min;
    const out = el("output", { class: "cs-num", text: fmt(cur) });
    const input = el("input", {
      type: "range",
      min: String(c.min),
      max: String(c.max),
      step: String(c.step ?? (c.max - c.min) / 100),
      value: String(cur),
      "aria-label": c.label,
      "data-target": c.target,
      oninput: (e) => (out.textContent = fmt(Number(e.target.value))),
      onchange: (e) => {
        // JSON keeps 40 an integer and 2.5 a float, which is what the preset's params check
        this.restart({ ...this.overrides, [c.target]: Number(e.target.value) }).catch(() => {});
      },
    });
    return el("label", { class: "cs-param", title: `${section}.${key}` }, el("span", { text: c.label }), input, out);
  }

  handleKey(e) {
    if (e.target && /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName) && e.key !== " ") return;
    if (e.key === " " || e.key === "k") {
      e.preventDefault();
      this.clock.playing ? this.pause() : this.play();
    } else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      e.preventDefault();
      const d = (e.shiftKey ? 5 : 1) * (e.key === "ArrowRight" ? 1 : -1);
      this.seek(this.t + d).catch(() => {});
    } else if (e.key === "." || e.key === "ArrowUp" || e.key === "ArrowDown") {
      if (e.key === ".") {
        e.preventDefault();
        this.step().catch(() => {});
      } else {
        e.preventDefault();
        this.setSpeed(this.speed * (e.key === "ArrowUp" ? 1.25 : 0.8));
      }
    }
  }

  _theme() {
    const cs = getComputedStyle(this.ui.banner.parentElement);
    const v = (n, d) => cs.getPropertyValue(n).trim() || d;
    return {
      fg: v("--cs-fg", "#111"),
      muted: v("--cs-muted", "#666"),
      accent: v("--cs-accent", "#2563eb"),
      good: v("--cs-good", "#059669"),
      bad: v("--cs-bad", "#dc2626"),
      track: v("--cs-track", "rgba(128,128,128,.18)"),
      onAccent: v("--cs-on-accent", "#fff"),
      font: v("--cs-font", "system-ui, sans-serif"),
      palette: this.colors,
    };
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
    const ui = this.ui;
    if (!f || !ui) return;
    this.firstFrameAt ??= performance.now(); // ms since navigation: the benchmark's first paint
    if (!this._themeCache || this._resized) this._themeCache = this._theme();
    const theme = this._themeCache;
    const dpr = window.devicePixelRatio || 1;
    for (const name of this.panelNames) {
      const p = ui.panels[name];
      const data = f.panels[name];
      if (!data) continue;
      if (this._resized || !p.w) {
        const box = p.canvas.parentElement.getBoundingClientRect();
        p.w = Math.max(100, Math.floor(box.width));
        p.h = Math.max(80, Math.floor(box.height));
        p.canvas.width = p.w * dpr;
        p.canvas.height = p.h * dpr;
        p.canvas.style.width = `${p.w}px`;
        p.canvas.style.height = `${p.h}px`;
      }
      const ctx = p.canvas.getContext("2d");
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      drawView(ctx, data.view, { w: p.w, h: p.h }, theme);
      for (const [k, v] of Object.entries(data.metrics)) {
        let cell = p.cells[k];
        if (!cell) {
          cell = p.cells[k] = el("dd");
          const key = !this.keyMetrics.size || this.keyMetrics.has(k);
          (key ? p.metrics : p.moreList).append(el("div", {}, el("dt", { text: k.replaceAll("_", " "), title: k }), cell));
          if (!key) p.more.hidden = false;
        }
        const text = formatMetric(k, v);
        if (cell.textContent !== text) cell.textContent = text;
      }
    }
    this._resized = false;
    this.charts.flush();
    if (!this._dragging) ui.time.value = String(f.t);
    ui.timeOut.textContent = `${f.t.toFixed(1)} / ${fmt(this.meta.duration)} s`;
  }
}

// an embed sets globalThis.contentionDefineLater before importing this module and defines its subclass
if (!globalThis.contentionDefineLater && !customElements.get("contention-sim")) customElements.define("contention-sim", ContentionSim);
