// One uPlot chart per charted metric, one line per panel, cursors synced across the charts of a sim.
// Data arrive as series rows [t, {panel: [values per column]}] (columns: the meta's `series`, the
// charted metrics plus the counters that recent ratios need); a row batch {from, rows} first
// truncates to `from` rows (after a seek backwards) and then appends.
//
// What a reader gets: each panel's colour and dash (palette.js), its name at its line's end, axis
// titles with units, at least three y ticks with labels that fit, ratios in percent; ratios that
// are counts over counts drawn over a moving window ("recent", the default) or since the start;
// marks for scheduled events, injected actions and the workload's own moments (a scan starts, a
// phase changes: the bridge's info `marks`); the previous run as a faint line after a
// parameter change.
import uPlot from "../vendor/uplot/uPlot.esm.js";
import { axisTitle, formatMetric, formatTick, metricInfo, niceRange, niceTicks } from "./metrics.js";
import { dashFor } from "./palette.js";
import { ChartData } from "./chart-data.js";
import { drawMarks, recentWindow } from "./chart-marks.js";
import { XYChart } from "./chart-xy.js";

let syncSeq = 0;
const seconds = (s) => (s >= 1 ? s.toFixed(1) : String(Number(s.toPrecision(2)))); // 3.0, 0.12
const LABEL_FONT = "600 11px system-ui, sans-serif";
const TICK_FONT = "11px system-ui, sans-serif";
const TICK_ROOM = 10 + 5 + 3; // a y axis's tick and gap (uPlot's defaults), and a margin, besides its longest label

let measurer = null;
/** The width of `s` in CSS px under `font` (the charts' own fonts). */
function textWidth(s, font) {
  measurer ??= document.createElement("canvas").getContext("2d");
  measurer.font = font;
  return measurer.measureText(String(s)).width;
}

/**
 * Seconds a recent window needs to hold about `count` of its ratios' denominators (references,
 * requests) at the rate the samples so far show (ChartData `data`), in the panel and ratio where
 * they come slowest: a window that mostly holds none draws the line as dashes (paging-belady: one
 * reference a second). 0 before the rate is known.
 */
function denominatorWindow(data, count = 4) {
  const n = data.xs.length;
  if (n < 2 || !(data.xs[n - 1] > data.xs[0])) return 0;
  let need = 0;
  for (const metric of data.windowable)
    for (const per of data.raw) {
      const den = per[data.col[data.windows[metric][1]]];
      if (den[n - 1] == null || den[0] == null) continue;
      const rate = (den[n - 1] - den[0]) / (data.xs[n - 1] - data.xs[0]);
      if (rate > 0) need = Math.max(need, count / rate);
    }
  return need;
}

export class Charts {
  constructor(host, metrics, panels, colors, { height = 190, columns = metrics, windows = {}, units = {}, duration = 0, xy = null } = {}) {
    this.host = host;
    this.panels = panels;
    this.colors = colors;
    this.height = height;
    this.units = units;
    this.data = new ChartData(metrics, panels, columns, windows, duration, {
      noZero: columns.filter((c) => metricInfo(c, units).kind === "time"),
    });
    this.recent = this.data.windowable.length > 0; // recent ratios by default where they exist
    this.marks = [];
    this.view = null; // [lo, hi] virtual seconds when zoomed in (drag across a chart), else the whole run
    this.ghost = null;
    this.plots = [];
    this.sync = `cs-${++syncSeq}`;
    this.xy = xy ? new XYChart(xy, panels, colors, units) : null; // one point per panel (chart-xy.js)
    this._build();
    this._ro = new ResizeObserver(() => this.resize());
    this._ro.observe(host);
  }

  /** The metrics drawn now (METRIC@recent for the recent form of a ratio). */
  get shown() {
    return this.data.display(this.recent);
  }

  _build() {
    const host = this.host;
    for (const p of this.plots) p.destroy();
    this.plots = [];
    host.replaceChildren();
    if (this.data.windowable.length || this.view) host.append(this._toggle());
    if (this.xy) host.append(this.xy.fig);
    const cols = this._cols();
    for (const [i, metric] of this.shown.entries()) {
      const info = metricInfo(metric, this.units);
      const fig = document.createElement("figure");
      fig.className = "cs-chart";
      fig.dataset.metric = metric;
      const cap = document.createElement("figcaption");
      cap.textContent = info.recent ? `${info.title} (last ${seconds(this.data.windowSeconds)} s)` : info.title;
      const box = document.createElement("div");
      box.setAttribute("role", "img");
      box.title = this.view ? "Double-click for the whole run" : "Drag across the chart to zoom in";
      box.setAttribute("aria-label", `${axisTitle(metric, this.units)} over virtual time, one line per panel: ${this.panels.join(", ")}`);
      fig.append(cap, box);
      host.append(fig);
      const plot = new uPlot(this._opts(metric, info, i, cols), [[], ...this.panels.map(() => [])], box);
      plot._metric = metric;
      plot._fig = fig;
      this.plots.push(plot);
    }
    this.dirty = true;
  }

  _toggle() {
    const wrap = document.createElement("div");
    wrap.className = "cs-chart-opts";
    wrap.setAttribute("role", "group");
    wrap.setAttribute("aria-label", "Ratios over");
    if (this.view) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "cs-btn cs-zoom-out";
      b.textContent = `Whole run (showing ${seconds(this.view[0])}–${seconds(this.view[1])} s)`;
      b.addEventListener("click", () => this.zoom(null));
      wrap.append(b);
    } else {
      const hint = document.createElement("span");
      hint.className = "cs-zoom-hint";
      hint.style.cssText = "align-self:center;opacity:.7;font-size:.85em";
      hint.textContent = "Drag across a chart to zoom in";
      wrap.append(hint);
    }
    for (const [recent, text] of this.data.windowable.length
      ? [
          [true, `Recent (last ${seconds(this.data.windowSeconds)} s)`],
          [false, "Since the start"],
        ]
      : []) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "cs-btn cs-toggle";
      b.textContent = text;
      b.setAttribute("aria-pressed", String(recent === this.recent));
      b.addEventListener("click", () => {
        if (this.recent === recent) return;
        this.recent = recent;
        this._build();
        this.flush();
      });
      wrap.append(b);
    }
    return wrap;
  }

  _cols() {
    const w = this.host.clientWidth || 900;
    const n = Math.max(1, this.data.metrics.length + (this.xy ? 1 : 0));
    return w > 760 ? Math.min(n, 3) : w > 480 ? Math.min(n, 2) : 1;
  }

  _width(cols) {
    return Math.max(200, Math.floor((this.host.clientWidth || 900) / cols) - 14);
  }

  _opts(metric, info, i, cols) {
    const units = this.units;
    const labelW = this._labelRoom(cols);
    const gridStroke = "rgba(128,128,128,.15)";
    const tickStroke = "rgba(128,128,128,.3)";
    return {
      width: this._width(cols),
      height: this.height,
      padding: [10, labelW, 0, 0],
      legend: { show: i === 0, live: true },
      cursor: { sync: { key: this.sync }, drag: { x: true, y: false, setScale: false } },
      scales: {
        x: { time: false, range: () => this._xRange() }, // the whole run (the lines fill it), or the zoom
        y: { range: () => this._range(metric, info) },
      },
      axes: [
        {
          stroke: "currentColor",
          grid: { stroke: gridStroke },
          ticks: { stroke: tickStroke },
          label: "virtual time (s)",
          labelSize: 18,
          labelFont: TICK_FONT,
          font: TICK_FONT,
        },
        {
          stroke: "currentColor",
          grid: { stroke: gridStroke },
          ticks: { stroke: tickStroke },
          label: axisTitle(metric, units, Math.floor((this.height - 60) / 6)),
          labelSize: 18,
          labelFont: TICK_FONT,
          font: TICK_FONT,
          splits: (u) => niceTicks(u.scales.y.min, u.scales.y.max, 4, 3, info.integer).ticks,
          values: (u, splits) => {
            const step = splits.length > 1 ? splits[1] - splits[0] : 0;
            return splits.map((v) => formatTick(v, info.kind, step));
          },
          size: (u, values) => (values ? Math.ceil(TICK_ROOM + Math.max(0, ...values.map((v) => textWidth(v, TICK_FONT)))) : 40),
        },
      ],
      series: [
        { label: "t (s)", value: (u, v) => (v == null ? "–" : v.toFixed(2)) },
        ...this.panels.map((p, k) => ({
          label: p,
          stroke: this.colors[k],
          width: 2,
          dash: dashFor(k),
          points: { show: false },
          value: (u, v) => (v == null ? "–" : formatMetric(metric.replace(/@recent$/, ""), v, units)),
        })),
      ],
      hooks: {
        drawSeries: [],
        draw: [(u) => this._overlay(u, metric)],
        setSelect: [(u) => this._selected(u)],
        ready: [(u) => u.over.addEventListener("dblclick", () => this.zoom(null))],
      },
    };
  }

  /** CSS px right of the plot for the lines' names: the longest name, at most a third of the chart (names are then cut to fit). */
  _labelRoom(cols) {
    const longest = Math.max(0, ...this.panels.map((p) => textWidth(p, LABEL_FONT)));
    return Math.ceil(Math.min(longest + 8, this._width(cols) / 3));
  }

  _xRange() {
    return this.view ? [...this.view] : [0, this.data.span(this.ghost)];
  }

  /** A drag across a chart: zoom every chart of the sim to the dragged span. */
  _selected(u) {
    const { left, width } = u.select;
    if (width < 5) return;
    const lo = u.posToVal(left, "x");
    const hi = u.posToVal(left + width, "x");
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    this.zoom(lo, hi);
  }

  /**
   * Show [lo, hi] virtual seconds on every chart (null: the whole run). The recent window follows
   * the view (chart-marks.js recentWindow), so a zoom into a few phases shows each of them.
   */
  zoom(lo, hi) {
    this.view = lo == null || !(hi > lo) ? null : [Math.max(0, lo), hi];
    this._fitWindow(true);
  }

  /** Set the recent window for the current view; rebuild the charts when it changed (or `force`). */
  _fitWindow(force = false) {
    const [lo, hi] = this._xRange();
    const xs = this.data.xs;
    const step = xs.length > 1 ? (xs[xs.length - 1] - xs[0]) / (xs.length - 1) : 0;
    const fit = recentWindow(this.marks, lo, hi, Math.max(100, this._width(this._cols()) - 60), step);
    const win = Math.min(Math.max(fit, denominatorWindow(this.data)), Math.max(fit, (hi - lo) / 3));
    if (!force && Math.abs(win - this.data.windowSeconds) <= 1e-9 * Math.max(1, win)) return;
    for (const d of [this.data, this.ghost]) {
      if (!d) continue;
      d.windowSeconds = win;
      d._cache.clear();
    }
    this._build();
  }

  _range(metric, info) {
    let [lo, hi] = this.data.extent(metric, this.ghost);
    if (lo === Infinity) [lo, hi] = [0, 1];
    return niceRange(lo, hi, info.kind, info.integer);
  }

  /** The previous run (faint), the marks, and each line's name at its end. */
  _overlay(u, metric) {
    const ctx = u.ctx;
    const dpr = uPlot.pxRatio;
    const { top, height } = u.bbox;
    ctx.save();
    // the previous run
    if (this.ghost) {
      const g = this.ghost;
      ctx.globalAlpha = 0.3;
      ctx.lineWidth = 1.5 * dpr;
      for (const [k] of this.panels.entries()) {
        const ys = g.values(metric, k);
        if (!ys) continue;
        ctx.strokeStyle = this.colors[k];
        ctx.setLineDash([]);
        ctx.beginPath();
        let pen = false;
        for (let i = 0; i < g.xs.length; i++) {
          const v = ys[i];
          if (v == null) {
            pen = false;
            continue;
          }
          const x = u.valToPos(g.xs[i], "x", true);
          const y = u.valToPos(v, "y", true);
          pen ? ctx.lineTo(x, y) : ctx.moveTo(x, y);
          pen = true;
        }
        ctx.stroke();
      }
      ctx.globalAlpha = 1;
    }
    // marks: scheduled events, injected actions and the workload's own moments
    u._marksDrawn = drawMarks(u, ctx, dpr, this.marks, getComputedStyle(this.host).color || "#444");
    // direct labels: each panel's name at its line's last point, nudged apart so none overlap
    ctx.font = LABEL_FONT.replace("11px", `${Math.round(11 * dpr)}px`);
    ctx.textBaseline = "middle";
    const ends = [];
    for (const [k] of this.panels.entries()) {
      const ys = u.data[k + 1];
      let i = ys.length - 1;
      while (i >= 0 && ys[i] == null) i--;
      if (i < 0) continue;
      ends.push({ k, y: u.valToPos(ys[i], "y", true), x: u.valToPos(u.data[0][i], "x", true) });
    }
    ends.sort((a, b) => a.y - b.y);
    const gap = 12 * dpr;
    for (let j = 1; j < ends.length; j++) if (ends[j].y - ends[j - 1].y < gap) ends[j].y = ends[j - 1].y + gap;
    const overflow = ends.length ? ends[ends.length - 1].y - (top + height) : 0;
    if (overflow > 0) for (const e of ends) e.y = Math.max(top, e.y - overflow);
    const right = u.width * dpr; // the canvas's right edge
    for (const e of ends) {
      ctx.fillStyle = this.colors[e.k];
      const room = right - e.x - 7 * dpr;
      let name = this.panels[e.k];
      while (name.length > 1 && ctx.measureText(name).width > room) name = `${name.slice(0, -2)}…`;
      if (ctx.measureText(name).width <= room) ctx.fillText(name, e.x + 5 * dpr, e.y);
    }
    ctx.restore();
    this._describeInto(u);
  }

  /** What the chart shows, for tests and assistive tech: data attributes on its figure. */
  _describeInto(u) {
    const ticks = u.axes[1]._values || [];
    u._fig.dataset.yTicks = JSON.stringify(ticks);
    u._fig.dataset.title = u.axes[1].label || "";
  }

  /** Every chart's axis title, y tick labels and drawn series (label, colour, dash). */
  describe() {
    return this.plots.map((p) => ({
      metric: p._metric,
      title: p.axes[1].label,
      xTitle: p.axes[0].label,
      yTicks: p.axes[1]._values || [],
      marks: p._marksDrawn || [],
      // uPlot keeps a colour as a function of (plot, series index); asking it does not wait for the first draw
      series: p.series
        .slice(1)
        .map((s, k) => ({ label: s.label, stroke: typeof s.stroke === "function" ? s.stroke(p, k + 1) : s.stroke, dash: s.dash })),
    }));
  }

  resize() {
    if (!this.plots.length) return;
    const w = this._width(this._cols());
    for (const p of this.plots) if (w > 100 && Math.abs(p.width - w) > 2) p.setSize({ width: w, height: p.height });
  }

  /** Draw what compares the panels at frame `f` itself (the XY chart), if the preset asks for it. */
  across(f) {
    this.xy?.draw(f, getComputedStyle(this.host).color || "#444");
  }

  /** Apply a batch {from, rows}; rows are [t, {panel: [v per column]}]. */
  apply(batch) {
    if (this.data.apply(batch)) this.dirty = true;
  }

  reset() {
    this.apply({ from: 0, rows: [] });
  }

  /** Keep what is drawn now as the faint "before" line (a parameter change reruns the same time span). */
  keepAsGhost() {
    this.ghost = this.data.snapshot();
    this.dirty = true;
  }

  /**
   * A vertical mark at virtual time `t`: `kind` "event" (a scheduled event or an injected action)
   * or "workload" (a moment the workload causes: a scan starts, a phase changes).
   */
  mark(t, label, kind = "event") {
    const key = `${t}\u0000${label}`;
    this._markKeys ??= new Set();
    if (this._markKeys.has(key)) return;
    this._markKeys.add(key);
    this.marks.push({ t, label, kind });
    this._windowStale = true;
    this.dirty = true;
  }

  clearMarks() {
    this.marks = [];
    this._markKeys = new Set();
    this.dirty = true;
  }

  /** Redraw if data changed (call once per animation frame). */
  flush() {
    if (this._windowStale || this._steps !== Math.min(this.data.xs.length, 2)) {
      this._windowStale = false;
      this._steps = Math.min(this.data.xs.length, 2); // the sample step is known from two samples on
      this._fitWindow();
    }
    if (!this.dirty) return;
    this.dirty = false;
    for (const plot of this.plots) plot.setData([this.data.xs, ...this.panels.map((_, k) => this.data.values(plot._metric, k))]);
  }

  destroy() {
    this._ro.disconnect();
    for (const p of this.plots) p.destroy();
    this.plots = [];
  }
}
