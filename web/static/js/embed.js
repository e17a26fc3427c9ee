// The embed: `<script type="module" src="https://HOST/embed.js">` then
// `<contention-sim preset="cache-scan" seed="7" speed="1" panels="lru,arc" height="420">` anywhere.
// It is the site's element (sim-element.js, the same driver and worker) rendered into a Shadow
// DOM, with: assets resolved relative to this file (the worker starts through a same-origin blob
// URL when the page is on another origin); the build's precomputed poster until the widget is
// visible; Python started lazily (first visibility or click: loading="lazy|eager|click"); a pause
// while scrolled out of view; theme="light|dark" over prefers-color-scheme; an "open in
// playground" link carrying the exact state. Every widget on a page shares one worker (one Pyodide).
import "../embed/defer-define.js";
import { ContentionSim } from "./sim-element.js";
import { linkHash } from "./link.js";
import { sharedWorker } from "./worker-client.js";
import { MiniCharts } from "../embed/mini-charts.js";

const STATIC = new URL("../", import.meta.url);
const RENDER_BUDGET_MS = 6; // main-thread time per animation frame for all the page's widgets
export const SITE = new URL("../../", import.meta.url); // where embed.js and play/ live
const LOADING = ["lazy", "eager", "click"];

/**
 * The page's worker, created on the first request (not on import), so widgets that are never
 * seen never start Pyodide. Restart listeners registered before it exists are kept and attached.
 */
export const lazyWorker = {
  real: null,
  fns: new Set(),
  get started() {
    return this.real !== null;
  },
  get() {
    if (!this.real) {
      this.real = sharedWorker();
      this.real.onRestart((why) => {
        for (const fn of this.fns) fn(why);
      });
    }
    return this.real;
  },
  request(op, args) {
    if (!this.real && op === "drop") return Promise.resolve({});
    return this.get().request(op, args);
  },
  onRestart(fn) {
    this.fns.add(fn);
    return () => this.fns.delete(fn);
  },
};

let presetNames = null;
/** The site's preset names (static/presets/index.json), or null when it cannot be read. */
function knownPresets() {
  presetNames ||= Array.isArray(globalThis.contentionPresets)
    ? Promise.resolve(globalThis.contentionPresets) // the notebook passes the names in
    : fetch(new URL("presets/index.json", STATIC))
        .then((r) => (r.ok ? r.json() : null))
        .catch(() => null);
  return presetNames;
}

const LIGHT_VARS =
  "--cs-fg:#1c1d21;--cs-muted:#5f6470;--cs-bg:#fff;--cs-line:#e3e1dc;--cs-accent:#2457d6;--cs-good:#0f9d6b;" +
  "--cs-bad:#dc3c2e;--cs-track:rgba(120,120,130,.16);--cs-on-accent:#fff;color-scheme:light;";
const DARK_VARS =
  "--cs-fg:#e7e8ec;--cs-muted:#9aa0ad;--cs-bg:#181b22;--cs-line:#2a2e38;--cs-accent:#7aa2ff;--cs-good:#34d399;" +
  "--cs-bad:#f87171;--cs-track:rgba(160,170,190,.16);--cs-on-accent:#0d0f14;color-scheme:dark;";
const CSS = `
:host{display:block;box-sizing:border-box;overflow:visible;contain:layout style;background:var(--cs-bg,#fff);
 color:var(--cs-fg,#1c1d21);border:1px solid var(--cs-line,#ddd);border-radius:12px;padding:10px 14px;
 font:15px/1.45 ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;text-align:left}
:host([hidden]){display:none}
:host([theme="light"]){${LIGHT_VARS}}
:host([theme="dark"]){${DARK_VARS}}
.cs-status{margin:.3rem 0}
.cs-status.cs-error{color:var(--cs-bad,#c00);font-weight:600}
.cs-panels{grid-template-columns:repeat(auto-fit,minmax(150px,1fr))}
.cs-mini{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:.5rem .9rem;margin-top:.4rem}
.cs-mini .cs-chart{margin:0;min-width:0}
.cs-mini figcaption{font-size:.8rem;color:var(--cs-muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.cs-embed-head{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.3rem 1rem;margin:0 0 .4rem;font-size:.8rem;color:var(--cs-muted)}
.cs-embed-head a{color:var(--cs-accent);text-decoration:none;font-weight:600}
.cs-embed-head a:hover,.cs-embed-head a:focus-visible{text-decoration:underline}
`;

/**
 * One render loop for every widget of the page: each animation frame draws queued widgets in
 * FIFO order until RENDER_BUDGET_MS is spent (at least one), the rest the next frame. A Set keeps
 * insertion order, and a widget drawn leaves it, so no widget waits more than a few frames.
 */
const renderQueue = new Set();
let renderRaf = 0;
function renderFrame() {
  renderRaf = 0;
  const start = performance.now();
  for (const sim of renderQueue) {
    renderQueue.delete(sim);
    sim._renderScheduled = false;
    const s = performance.now();
    sim._render();
    sim.renderTimes.push(performance.now() - s);
    if (sim.renderTimes.length > 5000) sim.renderTimes.splice(0, 1000);
    if (performance.now() - start >= RENDER_BUDGET_MS) break;
  }
  if (renderQueue.size) renderRaf = requestAnimationFrame(renderFrame);
}

export class EmbedSim extends ContentionSim {
  static shadow = true;
  static Charts = MiniCharts;
  static worker = () => lazyWorker;
  /** Edited policies never run in an embed: it lives on someone else's page, under their policy. */
  static linkEdits = false;
  /** CSS text used instead of the element's stylesheet links (set by the notebook widget). */
  static inlineCss = null;
  static observedAttributes = [...ContentionSim.observedAttributes, "height", "theme"];

  constructor() {
    super();
    this._opened = false;
    this._gate = new Promise((resolve) => (this._openGate = resolve));
    this._visible = false;
    this._wantPlay = false;
    this._createCall = null;
    /** Set before connecting to drive the simulation from another source (the notebook). */
    this.workerSource = null;
  }

  /** theme="dark|light" overrides the host's prefers-color-scheme (read by the element). */
  get dark() {
    const t = this.getAttribute("theme");
    return t === "dark" ? true : t === "light" ? false : undefined;
  }
  get loading() {
    const v = (this.getAttribute("loading") || "lazy").toLowerCase();
    return LOADING.includes(v) ? v : "lazy";
  }
  /** Whether the simulation's Python has been asked to start for this widget. */
  get opened() {
    return this._opened;
  }
  get visible() {
    return this._visible;
  }

  attachShadow(init) {
    // reconnecting (the node moved): reuse the shadow root instead of throwing
    if (this.shadowRoot) {
      this.shadowRoot.replaceChildren();
      return this.shadowRoot;
    }
    return super.attachShadow(init);
  }

  connectedCallback() {
    if (this._started) return;
    super.connectedCallback();
    this._style = document.createElement("style");
    this._style.textContent = CSS;
    this._hostStyle = document.createElement("style");
    this.root.prepend(this._style, this._hostStyle);
    this._applyHeight();
    this._head();
    for (const ev of ["pointerdown", "click", "focusin"]) this.addEventListener(ev, () => this.open());
    EmbedSim.observer.observe(this);
    if (this.loading === "eager") this.open();
  }

  disconnectedCallback() {
    EmbedSim.observer.unobserve(this);
    super.disconnectedCallback();
  }

  attributeChangedCallback(name, old, value) {
    if (name === "height") this._applyHeight();
    else super.attributeChangedCallback(name, old, value);
  }

  _applyHeight() {
    if (!this._hostStyle) return;
    const h = this.getAttribute("height");
    const px = /^\d+(\.\d+)?$/.test(h || "") ? `${h}px` : /^\d+(\.\d+)?(px|em|rem|vh|%)$/.test(h || "") ? h : "";
    // a minimum, never a cap: the widget grows to its content, so nothing inside is clipped or scrolls
    this._hostStyle.textContent = px ? `:host{min-height:${px}}` : "";
  }

  _buildUI() {
    super._buildUI();
    // the embed's rules go after the element's stylesheets (same specificity: later wins); where
    // the site's files cannot be fetched (a notebook), EmbedSim.inlineCss replaces the links
    const links = [...this.root.querySelectorAll('link[rel="stylesheet"]')];
    let last = links[links.length - 1];
    if (EmbedSim.inlineCss && links.length) {
      const inline = document.createElement("style");
      inline.textContent = EmbedSim.inlineCss;
      last.after(inline);
      for (const l of links) l.remove();
      last = inline;
    }
    last?.after(this._style, this._hostStyle);
  }

  _head() {
    this.link = document.createElement("a");
    this.link.textContent = "Open in playground ↗";
    this.link.target = "_blank";
    this.link.rel = "noopener";
    this.link.href = SITE.href;
    const refresh = () => (this.link.href = this.playgroundURL());
    for (const ev of ["pointerenter", "focus", "click", "auxclick", "contextmenu"]) this.link.addEventListener(ev, refresh);
    this.addEventListener("cs-change", refresh);
    this.addEventListener("cs-state", refresh);
    const credit = document.createElement("span");
    credit.textContent = "Live simulation · Contention";
    const head = document.createElement("p");
    head.className = "cs-embed-head";
    head.append(credit, this.link);
    this.status.before(head);
  }

  /** /play/PRESET/#seed=…&speed=…&t=…[&panels=…][&o.K=V…][&actions=…]: this exact moment. */
  playgroundURL() {
    const name = this.getAttribute("preset") || "";
    if (!this.meta || !this.clock) return this.meta ? new URL(`play/${encodeURIComponent(name)}/`, SITE).href : SITE.href;
    const hash = linkHash(this.linkState());
    return new URL(`play/${encodeURIComponent(this.meta.name)}/#${hash}`, SITE).href;
  }

  /** Ask for the live simulation (Python starts on the first widget that asks). */
  open() {
    if (this._opened) return;
    this._opened = true;
    this.dataset.opened = "";
    this._openGate();
    this._gate.then(() => this._createCall).then(() => this._resume());
  }

  /** Playing needs the poster or an opened simulation (else every frame would ask for Python). */
  _canPlay() {
    return this._opened || this.mode === "poster";
  }

  _resume() {
    if (this._wantPlay && this._visible && this.clock && !this.clock.playing && this.mode !== "error" && this._canPlay()) super.play();
  }

  async _init() {
    const name = this.getAttribute("preset");
    const known = name ? await knownPresets() : null;
    if (known && !known.includes(name)) {
      const close = known.filter((n) => n.split("-")[0] === name.split("-")[0]);
      throw new Error(`unknown preset "${name}"; try ${(close.length ? close : known).slice(0, 8).join(", ")}`);
    }
    await super._init();
    // ask for the next frame only once the last one is drawn: with several widgets on screen the
    // shared render budget, not the worker, sets each widget's frame rate
    const idle = this.clock.canRequest;
    this.clock.canRequest = () => idle() && !this._renderScheduled;
    this._wantPlay = this.clock.playing;
    // without a poster there is nothing to play until Python runs: hold the clock until opened
    if ((!this._visible || !this._canPlay()) && this.clock.playing) {
      this.clock.pause();
      this._syncState();
    }
    if (!this._opened && this.mode === "poster")
      this._setStatus(
        this.loading === "click"
          ? "Preview from the build: click to run it live."
          : "Preview from the build: Python starts when you scroll here.",
      );
    else if (!this._opened)
      this._setStatus(this.loading === "click" ? "Click to run the simulation." : "The simulation starts when you scroll here.");
  }

  _create(t) {
    this._createCall = this._gate.then(() => {
      if (this.mode === "error" && !this.meta) return undefined;
      if (this.workerSource && this.worker !== this.workerSource) {
        this._unRestart?.();
        this.worker = this.workerSource;
        this._unRestart = this.worker.onRestart?.(() => this._recover()) || (() => {});
      }
      return super._create(t);
    });
    return this._createCall;
  }

  _scheduleRender(resized = false) {
    if (resized) this._resized = true;
    if (this._renderScheduled) return;
    this._renderScheduled = true;
    renderQueue.add(this);
    renderRaf ||= requestAnimationFrame(renderFrame);
  }

  async _send(op, args) {
    const fromPoster = this.mode === "poster" && (op === "advance" || op === "seek");
    if (!fromPoster && op !== "handover") {
      this.open();
      await (this._createCall || this._gate);
    }
    return super._send(op, args);
  }

  async whenLive() {
    this.open();
    await this.whenReady();
    await this._createCall;
    return super.whenLive();
  }

  play() {
    this._wantPlay = true;
    this.open();
    if (this._visible) super.play();
  }

  pause() {
    this._wantPlay = false;
    super.pause();
  }

  _syncState() {
    if (this.clock && !this.clock.playing && this.meta && this.clock.shown >= this.meta.duration) this._wantPlay = false;
    super._syncState();
  }

  /** IntersectionObserver: play while on screen (if it was meant to play), pause when not. */
  _visibility(visible) {
    this._visible = visible;
    this.dataset.visible = String(visible);
    if (visible) {
      if (this.loading !== "click") this.open();
      this._resume();
    } else if (this.clock?.playing) {
      this.clock.pause();
      this._wantPlay = true;
      this._syncState();
    }
  }
}

EmbedSim.observer = new IntersectionObserver((entries) => {
  for (const e of entries) e.target._visibility(e.isIntersecting);
});

if (!customElements.get("contention-sim")) customElements.define("contention-sim", EmbedSim);
