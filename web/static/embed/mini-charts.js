// Small canvas line charts for embeds, with the interface of charts.js (apply/reset/flush/destroy)
// but without uPlot, so an embed stays small. One chart per key metric, one line per panel.
// Rows arrive as batches {from, rows}: `from` truncates (a seek backwards), then rows append;
// xs is therefore non-decreasing.

const H = 96;

export class MiniCharts {
  constructor(host, metrics, panels, colors) {
    this.metrics = metrics;
    this.panels = panels;
    this.colors = colors;
    this.xs = [];
    this.ys = metrics.map(() => panels.map(() => []));
    this.dirty = false;
    this.boxes = [];
    host.replaceChildren();
    host.classList.add("cs-mini");
    for (const metric of metrics) {
      const fig = document.createElement("figure");
      fig.className = "cs-chart";
      const cap = document.createElement("figcaption");
      const canvas = document.createElement("canvas");
      canvas.setAttribute("role", "img");
      canvas.setAttribute("aria-label", `${metric.replaceAll("_", " ")} over time, one line per panel`);
      fig.append(cap, canvas);
      host.append(fig);
      this.boxes.push({ canvas, cap, metric, w: 0 });
    }
    this._ro = new ResizeObserver(() => {
      for (const b of this.boxes) b.w = 0;
      this.dirty = true;
    });
    this._ro.observe(host);
  }

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
      for (const [m, per] of this.ys.entries())
        for (const [k, name] of this.panels.entries()) per[k].push(byPanel[name] ? byPanel[name][m] : null);
      this.dirty = true;
    }
  }

  reset() {
    this.apply({ from: 0, rows: [] });
  }

  /** Redraw if data changed (the element calls this once per animation frame). */
  flush() {
    if (!this.dirty) return;
    this.dirty = false;
    for (const [m, box] of this.boxes.entries()) this._draw(box, this.ys[m]);
  }

  _draw(box, series) {
    const { canvas } = box;
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
    const xs = this.xs;
    const n = xs.length;
    let lo = Infinity;
    let hi = -Infinity;
    for (const arr of series)
      for (const v of arr)
        if (v !== null && v !== undefined) {
          if (v < lo) lo = v;
          if (v > hi) hi = v;
        }
    const last = series.map((arr) => arr[n - 1]);
    box.cap.textContent = `${box.metric.replaceAll("_", " ")}${n ? `: ${last.map((v) => (typeof v === "number" ? +v.toPrecision(3) : "–")).join(" / ")}` : ""}`;
    if (n < 2 || !(hi >= lo)) return;
    if (hi === lo) (hi += 1), (lo -= hi === 1 ? 0 : 1);
    const x0 = xs[0];
    const sx = (box.w - 4) / Math.max(1e-9, xs[n - 1] - x0);
    const sy = (H - 8) / (hi - lo);
    const stride = Math.max(1, Math.floor(n / box.w)); // at most about one point per pixel
    ctx.lineWidth = 1.5;
    for (const [k, arr] of series.entries()) {
      ctx.strokeStyle = this.colors[k % this.colors.length];
      ctx.beginPath();
      let pen = false;
      for (let i = 0; i < n; i += i + stride >= n && i !== n - 1 ? n - 1 - i : stride) {
        const v = arr[i];
        if (v === null || v === undefined) {
          pen = false;
          continue;
        }
        const x = 2 + (xs[i] - x0) * sx;
        const y = H - 4 - (v - lo) * sy;
        if (pen) ctx.lineTo(x, y);
        else ctx.moveTo(x, y);
        pen = true;
      }
      ctx.stroke();
    }
  }

  destroy() {
    this._ro.disconnect();
  }
}
