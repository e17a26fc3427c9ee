// The sampled series of one simulation, as the charts (charts.js, the embed's mini-charts) draw
// them: raw columns per panel from the bridge's rows, and the metrics derived from them. A ratio
// of two cumulative counters (the meta's `windows`: {ratio: [numerator, denominator]}, from the
// bridge) also exists as METRIC@recent, the same ratio over the
// last `windowSeconds` of samples: (num[i] - num[j]) / (den[i] - den[j]), j the first sample in
// the window; no value while the window holds no denominator.
const RECENT = "@recent";

export class ChartData {
  /**
   * `metrics`: the charted metrics (the meta's `charts`); `columns`: what each row holds, in
   * order (the meta's `series`: the charted metrics, then any counters); `windows`: the meta's;
   * `duration`: the run's.
   */
  constructor(metrics, panels, columns, windows, duration, { noZero = [] } = {}) {
    this.windows = windows || {};
    this.noZero = new Set(noZero); // latencies: 0 before anything completed means "none yet"
    this.metrics = metrics;
    this.panels = panels;
    this.columns = columns.length ? columns : metrics;
    this.col = Object.fromEntries(this.columns.map((c, i) => [c, i]));
    this.xs = [];
    this.raw = panels.map(() => this.columns.map(() => []));
    this.duration = duration;
    this.windowSeconds = Math.max(duration / 20, 0);
    // ratios whose counters the rows carry
    this.windowable = metrics.map((m) => m.replace(/@recent$/, "")).filter((m) => this.windows[m]?.every((c) => c in this.col));
    this._cache = new Map();
  }

  /** The metrics to draw: each windowable ratio in its recent form when `recent`. */
  display(recent) {
    return this.metrics.map((m) => {
      const base = m.replace(/@recent$/, "");
      if (!this.windowable.includes(base)) return m;
      return recent ? base + RECENT : base;
    });
  }

  /** Apply a batch {from, rows}; true when anything changed. */
  apply(batch) {
    if (!batch) return false;
    const { from, rows } = batch;
    let changed = false;
    if (from < this.xs.length) {
      this.xs.length = from;
      for (const per of this.raw) for (const arr of per) arr.length = from;
      changed = true;
    }
    // rows name their columns; a session of fewer panels may chart other metrics than the meta's
    const at = batch.columns ? this.columns.map((c) => batch.columns.indexOf(c)) : this.columns.map((_, c) => c);
    for (const [t, byPanel] of rows) {
      this.xs.push(t);
      for (const [k, name] of this.panels.entries()) {
        const vals = byPanel[name];
        for (const [c, arr] of this.raw[k].entries()) arr.push(vals && at[c] >= 0 ? (vals[at[c]] ?? null) : null);
      }
      changed = true;
    }
    if (changed) this._cache.clear();
    return changed;
  }

  /** Panel `k`'s values of `metric` (a column, or METRIC@recent), one per sample. */
  values(metric, k) {
    const key = `${metric}\u0000${k}`;
    if (this._cache.has(key)) return this._cache.get(key);
    let out;
    if (metric in this.col) {
      out = this.raw[k][this.col[metric]];
      if (this.noZero.has(metric)) {
        const first = out.findIndex((v) => v != null && v !== 0);
        out = out.map((v, i) => (first < 0 || i < first ? null : v)); // no line until the first value
      }
    } else if (metric.endsWith(RECENT) && this.windows[metric.slice(0, -RECENT.length)])
      out = this._windowed(metric.slice(0, -RECENT.length), k);
    else out = this.xs.map(() => null);
    this._cache.set(key, out);
    return out;
  }

  _windowed(metric, k) {
    const [num, den] = this.windows[metric].map((c) => this.raw[k][this.col[c]]);
    const xs = this.xs;
    const out = new Array(xs.length).fill(null);
    let j = 0;
    for (let i = 0; i < xs.length; i++) {
      while (j < i && xs[j] < xs[i] - this.windowSeconds - 1e-9) j++;
      const a = j === i ? Math.max(0, i - 1) : j; // at least one sample back
      if (a === i || num[i] == null || den[i] == null || num[a] == null || den[a] == null) continue;
      const d = den[i] - den[a];
      if (d > 0) out[i] = (num[i] - num[a]) / d;
    }
    return out;
  }

  /** [lo, hi] of `metric` over every panel (and a ghost's), or [Infinity, -Infinity]. */
  extent(metric, ghost) {
    let lo = Infinity;
    let hi = -Infinity;
    const scan = (arr) => {
      for (const v of arr || [])
        if (v != null) {
          if (v < lo) lo = v;
          if (v > hi) hi = v;
        }
    };
    for (const k of this.panels.keys()) scan(this.values(metric, k));
    if (ghost) for (const k of this.panels.keys()) scan(ghost.values(metric, k));
    return [lo, hi];
  }

  /** The time axis: the whole run (or as far as the samples, or a ghost's, reach). */
  span(ghost) {
    const last = (d) => (d && d.xs.length ? d.xs[d.xs.length - 1] : 0);
    return Math.max(this.duration, last(this), last(ghost), 1e-9);
  }

  /** A frozen copy (the previous run, drawn faint after a parameter change). */
  snapshot() {
    const copy = new ChartData(this.metrics, this.panels, this.columns, this.windows, 0, { noZero: [...this.noZero] });
    copy.windowSeconds = this.windowSeconds;
    copy.xs = this.xs.slice();
    copy.raw = this.raw.map((per) => per.map((arr) => arr.slice()));
    return copy;
  }
}
