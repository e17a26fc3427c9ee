// One uPlot chart per charted metric, one line per panel, cursors synced across the charts of a sim.
// Data arrive as series rows [t, {panel: [values per column]}] (columns: the meta's `series`, the
// charted metrics plus the counters that recent ratios need); a row batch {from, rows} first
// truncates to `from` rows (after a seek backwards) and then appends.
//
// What a reader gets: each panel's colour and dash (palette.js), its name at its line's end, axis
// titles with units, at least three y ticks with labels that fit, ratios in percent; ratios that
// are counts over counts drawn over a moving window ("recent", the default) or since the start;
// marks for scheduled events and injected actions; the previous run as a faint line after a
// parameter change.
import uPlot from "../vendor/uplot/uPlot.esm.js";
import { axisTitle, formatMetric, formatTick, metricInfo, niceRange, niceTicks } from "./metrics.js";
import { dashFor } from "./palette.js";
import { ChartData } from "./chart-data.js";

let syncSeq = 0;
const LABEL_FONT = "600 11px system-ui, sans-serif";
const TICK_FONT = "11px system-ui, sans-serif";

export class Charts {
  constructor(host, metrics, panels, colors, { height = 190, columns = metrics, windows = {}, units = {}, duration = 0 } = {}) {
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
    this.ghost = null;
    this.plots = [];
    this.sync = `cs-${++syncSeq}`;
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
    if (this.data.windowable.length) host.append(this._toggle());
    const cols = this._cols();
    for (const [i, metric] of this.shown.entries()) {
      const info = metricInfo(metric, this.units);
      const fig = document.createElement("figure");
      fig.className = "cs-chart";
      fig.dataset.metric = metric;
      const cap = document.createElement("figcaption");
      cap.textContent = info.recent ? `${info.title} (last ${this.data.windowSeconds.toFixed(1)} s)` : info.title;
      const box = document.createElement("div");
      box.setAttribute("role", "img");
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
    for (const [recent, text] of [
      [true, `Recent (last ${this.data.windowSeconds.toFixed(1)} s)`],
      [false, "Since the start"],
    ]) {
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
    const n = Math.max(1, this.data.metrics.length);
    return w > 760 ? Math.min(n, 3) : w > 480 ? Math.min(n, 2) : 1;
  }

  _width(cols) {
    return Math.max(200, Math.floor((this.host.clientWidth || 900) / cols) - 14);
  }

  _opts(metric, info, i, cols) {
    const units = this.units;
    const labelW = Math.min(96, 14 + 6.6 * Math.max(...this.panels.map((p) => p.length)));
    const gridStroke = "rgba(128,128,128,.15)";
    const tickStroke = "rgba(128,128,128,.3)";
    return {
      width: this._width(cols),
      height: this.height,
      padding: [10, labelW, 0, 0],
      legend: { show: i === 0, live: true },
      cursor: { sync: { key: this.sync }, drag: { x: false, y: false } },
      scales: {
        x: { time: false, range: () => [0, this.data.span(this.ghost)] }, // the whole run: the lines fill it
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
          size: (u, values) => {
            if (!values) return 40;
            const longest = Math.max(...values.map((s) => String(s).length));
            return Math.ceil(16 + longest * 6.6);
          },
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
      },
    };
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
    const { left, top, width, height } = u.bbox;
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
    // marks: scheduled events and injected actions
    ctx.font = TICK_FONT.replace("11px", `${Math.round(10 * dpr)}px`);
    ctx.textBaseline = "top";
    ctx.textAlign = "left";
    const style = getComputedStyle(this.host);
    const fg = style.color || "#444";
    let row = 0;
    for (const m of this.marks) {
      const x = u.valToPos(m.t, "x", true);
      if (!(x >= left - 1 && x <= left + width + 1)) continue;
      ctx.strokeStyle = fg;
      ctx.globalAlpha = 0.55;
      ctx.setLineDash([3 * dpr, 3 * dpr]);
      ctx.lineWidth = dpr;
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.stroke();
      ctx.globalAlpha = 0.9;
      ctx.fillStyle = fg;
      const text = m.label.length > 22 ? `${m.label.slice(0, 21)}…` : m.label;
      const tw = ctx.measureText(text).width;
      const tx = x + 3 * dpr + tw > left + width ? x - 3 * dpr - tw : x + 3 * dpr;
      ctx.fillText(text, tx, top + 2 * dpr + (row % 3) * 12 * dpr);
      row++;
    }
    ctx.setLineDash([]);
    ctx.globalAlpha = 1;
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
    for (const e of ends) {
      ctx.fillStyle = this.colors[e.k];
      ctx.fillText(this.panels[e.k], e.x + 5 * dpr, e.y);
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
      series: p.series
        .slice(1)
        .map((s) => ({ label: s.label, stroke: typeof s.stroke === "function" ? s._stroke : s.stroke, dash: s.dash })),
    }));
  }

  resize() {
    if (!this.plots.length) return;
    const w = this._width(this._cols());
    for (const p of this.plots) if (w > 100 && Math.abs(p.width - w) > 2) p.setSize({ width: w, height: p.height });
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

  /** A vertical mark at virtual time `t` (an event or an injected action). */
  mark(t, label) {
    if (!this.marks.some((m) => m.t === t && m.label === label)) this.marks.push({ t, label });
    this.dirty = true;
  }

  clearMarks() {
    this.marks = [];
    this.dirty = true;
  }

  /** Redraw if data changed (call once per animation frame). */
  flush() {
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
