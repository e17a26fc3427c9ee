// What one step means: the next event after which some panel's integer counter moved, other than
// the ones every event moves (requests, hits, admissions...). A miss, an eviction, a fault, a
// refusal, a failed allocation, a new maximum queue, a completion under pressure: each is one
// step, with a sentence that says which panels it touched and how.
import { formatMetric } from "./metrics.js";

/** Counters that move on every ordinary event: not a reason to stop. */
const ROUTINE = new Set([
  "requests",
  "refs",
  "hits",
  "accepted",
  "tokens_admitted",
  "tokens_used",
  "tokens_charged",
  "completed",
  "attempts",
  "arrivals",
  "served",
  "live",
  "in_flight",
  "in_system",
  "running",
  "waiting",
]);

function changes(before, after, panelNames) {
  const out = [];
  for (const n of panelNames) {
    const a = before?.panels[n]?.metrics || {};
    const b = after.panels[n]?.metrics || {};
    for (const [k, v] of Object.entries(b)) {
      const u = a[k];
      if (ROUTINE.has(k) || !Number.isInteger(v) || !Number.isInteger(u) || u === v) continue;
      out.push({ panel: n, metric: k, from: u, to: v });
    }
  }
  return out;
}

export const isNotable = (before, after, panelNames) => changes(before, after, panelNames).length > 0;

/** "At 3.412 s (2 events on): lru misses 41 → 42; fifo misses 40 → 41. arc, opt: nothing notable." */
export function describeStep(before, after, panelNames, events, units) {
  const at = `At ${after.t.toFixed(3)} s`;
  const ch = changes(before, after, panelNames);
  const on = events > 1 ? ` (${events} events on)` : "";
  if (!ch.length) return `${at}${on}: nothing notable happened in any panel.`;
  const parts = ch
    .slice(0, 4)
    .map(
      (c) =>
        `${c.panel} ${c.metric.replaceAll("_", " ")} ${formatMetric(c.metric, c.from, units)} → ${formatMetric(c.metric, c.to, units)}`,
    );
  const touched = new Set(ch.map((c) => c.panel));
  const calm = panelNames.filter((n) => !touched.has(n));
  const rest = ch.length > 4 ? `; ${ch.length - 4} more` : "";
  const quiet = calm.length ? ` ${calm.join(", ")}: no change.` : "";
  return `${at}${on}: ${parts.join("; ")}${rest}.${quiet}`;
}
