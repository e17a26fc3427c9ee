// What a metric is, for people: its title, its unit and how to write its values (panels, chart
// axes, tooltips). A topic describes its metrics (the meta's `metrics`: {name: {unit, format}},
// from the topic's topic.toml); a metric it does not describe is read from its name (DESIGN.md's
// conventions: ratios in [0, 1] shown as percentages, times in seconds, shown in ms below 1 s).
import { fmt } from "./render.js";

const RATIO = /(rate|ratio|frag|utilization|fraction|_frac|_share)$/;
const TIME = /(latency|ttft|tpot|e2e|itl|_wait$|_wait_|_s$|wait$|_time$|pause)/;
const BYTES = /(_bytes$|^peak_used$|^heap$|bytes_)/;
const TOKS = /tok_s$/;
const NOT_TIME = /(_per_s$|tok_s$|^requests_s$)/;
const RECENT = "@recent";
const SHOWN_UNIT = { ratio: "%", time: "s", bytes: "B", rate: "tok/s", count: "" };

function kindOf(base, d) {
  if (d) {
    if (d.format === "percent" || d.unit === "ratio") return "ratio";
    if (d.format === "seconds" || d.unit === "s") return "time";
    if (d.format === "bytes" || d.unit === "bytes") return "bytes";
    if (d.unit === "tok/s") return "rate";
    return "count";
  }
  if (RATIO.test(base)) return "ratio";
  if (TOKS.test(base)) return "rate";
  if (TIME.test(base) && !NOT_TIME.test(base)) return "time";
  if (BYTES.test(base)) return "bytes";
  return "count";
}

/**
 * {title, unit, kind: "ratio" | "time" | "bytes" | "rate" | "count", recent} for a metric name;
 * `described`: the meta's `metrics`. METRIC@recent is METRIC over the recent window.
 */
export function metricInfo(name, described = {}) {
  const base = name.endsWith(RECENT) ? name.slice(0, -RECENT.length) : name;
  const recent = base !== name;
  const d = described?.[base];
  const kind = kindOf(base, d);
  const own = d && !["count", "ratio", "s", "bytes", "tok/s"].includes(d.unit) ? d.unit : null; // tokens, ×
  const unit = own || SHOWN_UNIT[kind];
  const words = base.replaceAll("_", " ");
  return { title: recent ? `${words}, recent` : words, unit, kind, recent, integer: !recent && d?.format === "int" };
}

/** "hit ratio (%)", "ttft p90 (s)": an axis title, at most `max` characters when given (it must fit the axis). */
export function axisTitle(name, units, max = 0) {
  const { title, unit } = metricInfo(name, units);
  const words = max ? title.replace(/, recent$/, "") : title; // an axis: the chart's caption says "recent"
  const tail = unit ? ` (${unit})` : "";
  const room = max ? max - tail.length : Infinity;
  return (words.length > room ? `${words.slice(0, Math.max(1, room - 1))}…` : words) + tail;
}

/** A metric value as the panels show it. */
export function formatMetric(name, v, units) {
  if (typeof v !== "number") return String(v ?? "–");
  const { kind } = metricInfo(name, units);
  if (kind === "ratio" && v >= 0 && v <= 1) return `${(v * 100).toFixed(1)}%`;
  if (kind === "time" && v === 0) return "0";
  if (kind === "time") return v < 1 ? `${(v * 1000).toFixed(v < 0.01 ? 2 : 0)} ms` : `${v.toFixed(2)} s`;
  return fmt(v);
}

/** Decimals that write every multiple of `step` exactly (at most 4). */
function decimals(step) {
  for (let d = 0; d < 4; d++) if (Math.abs(step * 10 ** d - Math.round(step * 10 ** d)) < 1e-6) return d;
  return 4;
}

/** Compact tick labels that fit a narrow axis: 0.5, 12, 1.5k, 100k, 2.5M; ratios as 45%. */
export function formatTick(v, kind, step = 0) {
  if (v === null || v === undefined || !Number.isFinite(v)) return "";
  if (kind === "ratio") return `${(v * 100).toFixed(step ? decimals(step * 100) : 0)}%`;
  const a = Math.abs(v);
  const trim = (x, d) => String(Number(x.toFixed(d)));
  if (a >= 1e9) return `${trim(v / 1e9, 1)}G`;
  if (a >= 1e6) return `${trim(v / 1e6, 1)}M`;
  if (a >= 1e4) return `${trim(v / 1e3, 1)}k`;
  if (a >= 1000) return `${trim(v / 1e3, 2)}k`;
  if (a === 0) return "0";
  return step > 0 ? v.toFixed(decimals(step)) : trim(v, 3);
}

/**
 * The span below which [lo, hi] is one value seen through float rounding (0.1 + 0.2 beside 0.3):
 * a step that small would not move a tick off lo (a run's chart froze its tab 20 s on one).
 */
function noise(lo, hi) {
  return Math.max(Math.abs(lo), Math.abs(hi)) * 1e-9;
}

/** Nice ticks: at least `min` (3) values from lo to hi, a step of 1, 2 or 5 x 10^k. */
export function niceTicks(lo, hi, target = 4, min = 3, integer = false) {
  if (!(hi - lo > noise(lo, hi))) hi = lo + (lo === 0 ? 1 : Math.abs(lo) * 0.1);
  if (integer && hi - lo < min - 1) hi = lo + min - 1;
  for (let want = target; want <= target * 4; want++) {
    const raw = (hi - lo) / want;
    const mag = 10 ** Math.floor(Math.log10(raw));
    const nice = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw - 1e-12);
    const step = integer ? Math.max(1, Math.round(nice)) : nice;
    const first = Math.ceil(lo / step - 1e-9) * step;
    const n = Math.floor((hi - first) / step + 1e-9) + 1; // first + i * step <= hi
    if (n >= min && n <= 1000) return { ticks: Array.from({ length: n }, (_, i) => Number((first + i * step).toPrecision(12))), step };
  }
  return { ticks: [lo, (lo + hi) / 2, hi], step: (hi - lo) / 2 };
}

/** A y range that shows [lo, hi] with nice ends (ratios within [0, 1]; whole steps for counts). */
export function niceRange(lo, hi, kind, integer = false) {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, 1];
  if (lo > 0 && lo < (hi - lo) * 1.5) lo = 0; // near zero: start at zero
  if (hi - lo <= noise(lo, hi)) {
    const pad = hi === 0 ? 1 : Math.abs(hi) * 0.2;
    [lo, hi] = [lo >= 0 ? Math.max(0, lo - pad) : lo - pad, hi + pad];
  }
  if (integer && hi - lo < 2) hi = lo + 2;
  const { step } = niceTicks(lo, hi, 4, 3, integer);
  let a = Math.floor(lo / step + 1e-9) * step;
  let b = Math.ceil(hi / step - 1e-9) * step;
  if (kind === "ratio") [a, b] = [Math.max(0, a), Math.min(1, b)];
  if (b <= a) b = a + step;
  return [a, b];
}
