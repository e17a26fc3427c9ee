// One uPlot chart per key metric, one line per panel, cursors synced across the charts of a sim.
// Data arrive as series rows [t, {panel: [values per chart metric]}]; a row batch {from, rows}
// first truncates to `from` rows (after a seek backwards) and then appends.
import uPlot from "../vendor/uplot/uPlot.esm.js";

let syncSeq = 0;

export class Charts {
  constructor(host, metrics, panels, colors, { height = 150 } = {}) {
    this.metrics = metrics;
    this.panels = panels;
    this.xs = [];
    this.ys = metrics.map(() => panels.map(() => []));
    this.dirty = false;
    this.plots = [];
    const sync = `cs-${++syncSeq}`;
    host.replaceChildren();
    for (const [i, metric] of metrics.entries()) {
      const fig = document.createElement("figure");
      fig.className = "cs-chart";
      const cap = document.createElement("figcaption");
      cap.textContent = metric.replaceAll("_", " ");
      const box = document.createElement("div");
      fig.append(cap, box);
      host.append(fig);
      const opts = {
        width: Math.max(200, host.clientWidth / Math.min(metrics.length, 3) - 16 || 300),
        height,
        legend: { show: i === 0, live: true },
        cursor: { sync: { key: sync }, drag: { x: false, y: false } },
        scales: { x: { time: false } },
        axes: [
          { stroke: "currentColor", grid: { stroke: "rgba(128,128,128,.15)" }, ticks: { stroke: "rgba(128,128,128,.3)" } },
          { stroke: "currentColor", grid: { stroke: "rgba(128,128,128,.15)" }, ticks: { stroke: "rgba(128,128,128,.3)" }, size: 48 },
        ],
        series: [
          { label: "t (s)", value: (u, v) => (v == null ? "–" : v.toFixed(2)) },
          ...panels.map((p, k) => ({ label: p, stroke: colors[k % colors.length], width: 2, points: { show: false } })),
        ],
      };
      const plot = new uPlot(opts, [[], ...panels.map(() => [])], box);
      this.plots.push(plot);
    }
    this._ro = new ResizeObserver(() => this.resize(host));
    this._ro.observe(host);
  }

  resize(host) {
    const n = this.plots.length;
    if (!n) return;
    const cols = host.clientWidth > 760 ? Math.min(n, 3) : host.clientWidth > 480 ? Math.min(n, 2) : 1;
    const w = Math.floor(host.clientWidth / cols) - 12;
    for (const p of this.plots) if (w > 100 && Math.abs(p.width - w) > 2) p.setSize({ width: w, height: p.height });
  }

  /** Apply a batch {from, rows}; rows are [t, {panel: [v per metric]}]. */
  apply(batch) {
    if (!batch) return;
    const { from, rows } = batch;
    if (from < this.xs.length) {
      this.xs.length = from;
      for (const per of this.ys) for (const arr of per) arr.length = from;
      this.dirty = true;
    }
    for (const [t, byPanel] of rows) {
      this.xs.push(t);
      for (const [m, per] of this.ys.entries()) {
        for (const [k, name] of this.panels.entries()) {
          const vals = byPanel[name];
          per[k].push(vals ? vals[m] : null);
        }
      }
      this.dirty = true;
    }
  }

  reset() {
    this.apply({ from: 0, rows: [] });
  }

  /** Redraw if data changed (call once per animation frame). */
  flush() {
    if (!this.dirty) return;
    this.dirty = false;
    for (const [m, plot] of this.plots.entries()) plot.setData([this.xs, ...this.ys[m]]);
  }

  destroy() {
    this._ro.disconnect();
    for (const p of this.plots) p.destroy();
    this.plots = [];
  }
}
