// A chart across the panels: each panel is one point, at (its X metric, its Y metric) now, and the
// points are joined in order of X. A preset asks for it with [site] xy = {x = "METRIC", y =
// "METRIC"}: queues-hockey-stick's mean wait against utilization is the hockey stick itself, one
// point per queue. Drawn from each frame's metrics (so the poster draws it too), under the
// time-series charts' host.
import { axisTitle, formatTick, metricInfo, niceRange, niceTicks } from "./metrics.js";
import { LabelSpace } from "./draw.js";

const FONT = "11px system-ui, sans-serif";
const HEIGHT = 220;

export class XYChart {
  /** `spec`: {x, y} metric names; `colors[k]`: panel k's colour; `units`: the meta's metrics. */
  constructor(spec, panels, colors, units) {
    this.spec = spec;
    this.panels = panels;
    this.colors = colors;
    this.units = units;
    this.fig = document.createElement("figure");
    this.fig.className = "cs-chart cs-xy";
    this.fig.dataset.metric = `${spec.y}@${spec.x}`;
    const cap = document.createElement("figcaption");
    cap.textContent = `${metricInfo(spec.y, units).title} against ${metricInfo(spec.x, units).title}, one point per panel`;
    this.canvas = document.createElement("canvas");
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", `${cap.textContent}: ${panels.join(", ")}`);
    // absolutely placed in a box of its own, so its bitmap's size never widens the figure
    this.canvas.style.cssText = "position:absolute;inset:0;width:100%;height:100%";
    const box = document.createElement("div");
    box.style.cssText = `position:relative;height:${HEIGHT}px`;
    box.append(this.canvas);
    this.fig.append(cap, box);
  }

  /** Draw the panels' metrics of frame `f` ({panels: {name: {metrics}}}). */
  draw(f, fg) {
    const w = Math.floor(this.canvas.clientWidth);
    if (!w || !f) return;
    const dpr = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(w * dpr)) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(HEIGHT * dpr);
    }
    const ctx = this.canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, HEIGHT);
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    const { x: mx, y: my } = this.spec;
    const pts = this.panels
      .map((name, k) => ({ name, k, x: f.panels[name]?.metrics?.[mx], y: f.panels[name]?.metrics?.[my] }))
      .filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y))
      .sort((a, b) => a.x - b.x);
    const xi = metricInfo(mx, this.units);
    const yi = metricInfo(my, this.units);
    const [x0, x1] = niceRange(Math.min(0, ...pts.map((p) => p.x)), Math.max(xi.kind === "ratio" ? 1 : 0, ...pts.map((p) => p.x)), xi.kind);
    const [y0, y1] = niceRange(0, Math.max(0, ...pts.map((p) => p.y)), yi.kind);
    const yt = niceTicks(y0, y1, 4, 3);
    const xt = niceTicks(x0, x1, 5, 3);
    const yLabels = yt.ticks.map((v) => formatTick(v, yi.kind, yt.step));
    const left = 18 + 8 + Math.max(...yLabels.map((s) => ctx.measureText(s).width));
    const lastX = formatTick(xt.ticks[xt.ticks.length - 1], xi.kind, xt.step);
    const plot = { l: left, r: w - 6 - ctx.measureText(lastX).width / 2, t: 10, b: HEIGHT - 40 };
    const X = (v) => plot.l + ((v - x0) / (x1 - x0 || 1)) * (plot.r - plot.l);
    const Y = (v) => plot.b - ((v - y0) / (y1 - y0 || 1)) * (plot.b - plot.t);
    ctx.fillStyle = fg;
    ctx.strokeStyle = "rgba(128,128,128,.18)";
    ctx.lineWidth = 1;
    yt.ticks.forEach((v, i) => {
      ctx.beginPath();
      ctx.moveTo(plot.l, Y(v));
      ctx.lineTo(plot.r, Y(v));
      ctx.stroke();
      ctx.textAlign = "right";
      ctx.fillText(yLabels[i], plot.l - 5, Y(v));
    });
    ctx.textAlign = "center";
    for (const v of xt.ticks) ctx.fillText(formatTick(v, xi.kind, xt.step), X(v), plot.b + 10);
    ctx.fillText(axisTitle(mx, this.units), (plot.l + plot.r) / 2, HEIGHT - 10);
    ctx.save();
    ctx.translate(9, (plot.t + plot.b) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(axisTitle(my, this.units, Math.floor((plot.b - plot.t) / 6)), 0, 0);
    ctx.restore();
    // the curve, then each point in its panel's colour with its name where it has room
    ctx.strokeStyle = fg;
    ctx.globalAlpha = 0.5;
    ctx.beginPath();
    pts.forEach((p, i) => (i ? ctx.lineTo(X(p.x), Y(p.y)) : ctx.moveTo(X(p.x), Y(p.y))));
    ctx.stroke();
    ctx.globalAlpha = 1;
    const space = new LabelSpace({ left: plot.l, top: 0, w: plot.r, h: plot.b });
    for (const p of pts) space.take(X(p.x) - 4, Y(p.y) - 4, X(p.x) + 4, Y(p.y) + 4);
    for (const p of pts) {
      ctx.fillStyle = this.colors[p.k];
      ctx.beginPath();
      ctx.arc(X(p.x), Y(p.y), 4, 0, 2 * Math.PI);
      ctx.fill();
      const half = ctx.measureText(p.name).width / 2 + 7;
      space.place(
        ctx,
        [
          [p.name, X(p.x) - half, Y(p.y) - 10],
          [p.name, X(p.x) + half, Y(p.y) + 10],
          [p.name, X(p.x) - half, Y(p.y) + 10],
          [p.name, X(p.x) + half, Y(p.y) - 10],
        ],
        this.colors[p.k],
      );
    }
  }
}
