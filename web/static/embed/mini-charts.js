// Small canvas line charts for embeds, with the interface of charts.js (apply/reset/flush/destroy,
// mark, keepAsGhost, describe) but without uPlot, so an embed stays small. One chart per charted
// metric, one line per panel (its colour and dash), a y axis with a title and three ticks, the
// time axis, and a legend of the panels with their latest values. Data handling is chart-data.js's.
import { ChartData } from "../js/chart-data.js";
import { axisTitle, formatMetric, formatTick, metricInfo, niceRange, niceTicks } from "../js/metrics.js";
import { dashFor } from "../js/palette.js";

const H = 120;
const LEFT = 44;
const BOTTOM = 16;
const TOP = 6;

export class MiniCharts {
  constructor(host, metrics, panels, colors, { columns = metrics, windows = {}, units = {}, duration = 0 } = {}) {
    this.panels = panels;
    this.colors = colors;
    this.units = units;
    this.data = new ChartData(metrics, panels, columns, windows, duration, {
      noZero: columns.filter((c) => metricInfo(c, units).kind === "time"),
    });
    this.recent = this.data.windowable.length > 0;
    this.marks = [];
    this.ghost = null;
    this.dirty = false;
    this.boxes = [];
    host.replaceChildren();
    host.classList.add("cs-mini");
    for (const metric of this.data.display(this.recent)) {
      const info = metricInfo(metric, units);
      const fig = document.createElement("figure");
      fig.className = "cs-chart";
      fig.dataset.metric = metric;
      const cap = document.createElement("figcaption");
      cap.textContent = info.recent ? `${info.title} (last ${this.data.windowSeconds.toFixed(1)} s)` : info.title;
      const canvas = document.createElement("canvas");
      canvas.setAttribute("role", "img");
      canvas.setAttribute("aria-label", `${axisTitle(metric, units)} over virtual time, one line per panel: ${panels.join(", ")}`);
      const legend = document.createElement("ul");
      legend.className = "cs-legend";
      const items = panels.map((p, k) => {
        const li = document.createElement("li");
        li.style.setProperty("--cs-panel-color", colors[k]);
        const val = document.createElement("b");
        li.append(document.createElement("i"), document.createTextNode(`${p} `), val);
        legend.append(li);
        return val;
      });
      fig.append(cap, canvas, legend);
      host.append(fig);
      this.boxes.push({ canvas, cap, metric, info, items, fig, w: 0 });
    }
    this._ro = new ResizeObserver(() => {
      for (const b of this.boxes) b.w = 0;
      this.dirty = true;
    });
    this._ro.observe(host);
  }

  apply(batch) {
    if (this.data.apply(batch)) this.dirty = true;
  }

  reset() {
    this.apply({ from: 0, rows: [] });
  }

  keepAsGhost() {
    this.ghost = this.data.snapshot();
    this.dirty = true;
  }

  mark(t, label) {
    if (!this.marks.some((m) => m.t === t && m.label === label)) this.marks.push({ t, label });
    this.dirty = true;
  }

  clearMarks() {
    this.marks = [];
    this.dirty = true;
  }

  describe() {
    return this.boxes.map((b) => ({
      metric: b.metric,
      title: axisTitle(b.metric, this.units),
      xTitle: "virtual time (s)",
      yTicks: b.ticks || [],
      series: this.panels.map((p, k) => ({ label: p, stroke: this.colors[k], dash: dashFor(k) })),
    }));
  }

  /** Redraw if data changed (the element calls this once per animation frame). */
  flush() {
    if (!this.dirty) return;
    this.dirty = false;
    for (const box of this.boxes) this._draw(box);
  }

  _draw(box) {
    const { canvas, metric, info } = box;
    const dpr = window.devicePixelRatio || 1;
    if (!box.w) {
      canvas.style.display = "block";
      canvas.style.width = "100%"; // the figure's content box, whatever its padding
      canvas.style.height = `${H}px`;
      box.w = Math.max(120, Math.floor(canvas.getBoundingClientRect().width));
      canvas.width = box.w * dpr;
      canvas.height = H * dpr;
    }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, box.w, H);
    const xs = this.data.xs;
    const n = xs.length;
    const series = this.panels.map((_, k) => this.data.values(metric, k));
    for (const [k, arr] of series.entries()) {
      let v = null;
      for (let i = n - 1; i >= 0 && v == null; i--) v = arr[i];
      const text = v == null ? "–" : formatMetric(metric.replace(/@recent$/, ""), v, this.units);
      if (box.items[k].textContent !== text) box.items[k].textContent = text;
    }
    let [lo, hi] = this.data.extent(metric, this.ghost);
    if (lo === Infinity) [lo, hi] = [0, 1];
    [lo, hi] = niceRange(lo, hi, info.kind, info.integer);
    const { ticks, step } = niceTicks(lo, hi, 3, 3, info.integer);
    box.ticks = ticks.map((v) => formatTick(v, info.kind, step));
    const fg = getComputedStyle(canvas).color || "#555";
    const plotW = box.w - LEFT - 4;
    const plotH = H - TOP - BOTTOM;
    const tMax = this.data.span(this.ghost);
    const px = (t) => LEFT + (t / tMax) * plotW;
    const py = (v) => TOP + plotH - ((v - lo) / (hi - lo)) * plotH;
    // axes: y ticks with grid lines, the y title along the left edge, t at both ends
    ctx.font = "10px system-ui, sans-serif";
    ctx.fillStyle = fg;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (const [i, v] of ticks.entries()) {
      const y = py(v);
      ctx.globalAlpha = 0.15;
      ctx.fillRect(LEFT, Math.round(y), plotW, 1);
      ctx.globalAlpha = 0.85;
      ctx.fillText(box.ticks[i], LEFT - 4, y);
    }
    ctx.textAlign = "left";
    ctx.textBaseline = "alphabetic";
    ctx.fillText("0", LEFT, H - 3);
    ctx.textAlign = "right";
    ctx.fillText(`${formatTick(tMax, "count", tMax / 4)} s (virtual time)`, LEFT + plotW, H - 3);
    ctx.save();
    ctx.translate(9, TOP + plotH / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center";
    ctx.fillText(axisTitle(metric, this.units, Math.floor(plotH / 5.5)), 0, 0);
    ctx.restore();
    ctx.globalAlpha = 1;
    // marks
    for (const m of this.marks) {
      const x = px(m.t);
      ctx.globalAlpha = 0.5;
      ctx.fillRect(Math.round(x), TOP, 1, plotH);
    }
    ctx.globalAlpha = 1;
    const line = (arr, xsOf, k, faint) => {
      ctx.strokeStyle = this.colors[k];
      ctx.lineWidth = faint ? 1 : 1.6;
      ctx.globalAlpha = faint ? 0.3 : 1;
      ctx.setLineDash(faint ? [] : dashFor(k));
      ctx.beginPath();
      let pen = false;
      const m = xsOf.length;
      const stride = Math.max(1, Math.floor(m / plotW)); // at most about one point per pixel
      for (let i = 0; i < m; i += i + stride >= m && i !== m - 1 ? m - 1 - i : stride) {
        const v = arr[i];
        if (v == null) {
          pen = false;
          continue;
        }
        pen ? ctx.lineTo(px(xsOf[i]), py(v)) : ctx.moveTo(px(xsOf[i]), py(v));
        pen = true;
      }
      ctx.stroke();
    };
    if (this.ghost) for (const k of this.panels.keys()) line(this.ghost.values(metric, k), this.ghost.xs, k, true);
    if (n >= 2) for (const [k, arr] of series.entries()) line(arr, xs, k, false);
    ctx.setLineDash([]);
    ctx.globalAlpha = 1;
  }

  destroy() {
    this._ro.disconnect();
  }
}
