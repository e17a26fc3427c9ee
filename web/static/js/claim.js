// The preset's claim said in a run's numbers, under its panels (docs/site.md): `verdict` for the
// claim itself, `bill` for what its worst panel pays against its best when the claim is in other
// terms. Loaded after the first frame (sim-ui.js), so an embed's first paint does not wait for it.
import { fmt } from "./render.js";
import { formatMetric } from "./metrics.js";
import { claimOf } from "./meta.js";
// What a dollar metric is per, in words (docs/cost.md): the verdict says "pays $X per ...".
const PER = {
  usd_per_mtok_out: "per million output tokens",
  usd_per_mtok: "per million tokens",
  usd_per_mtok_good: "per million output tokens that met the SLO",
  usd_per_mtok_out_busy: "per million output tokens of busy GPU time",
};

/**
 * The preset's claim, said with this run's numbers at time `t`: `claim` is [site.claim] (metric,
 * panels best first, margin, at, higher_is_better), `values` the panels' values of its metric.
 * A dollar metric reads as a bill ("random pays $2.73 per million output tokens, precise_prefix
 * $2.18: 1.25× as much, for the same traffic"); any other as "metric: a X, b Y". Null when a
 * value is missing.
 */
export function verdict(claim, t, values, units) {
  const [best, other] = claim.panels || [];
  const vb = values[best];
  const vo = values[other];
  if (typeof vb !== "number" || typeof vo !== "number") return null;
  const m = claim.metric;
  const when = `At ${t.toFixed(1)} s`;
  const ratio = vb > 0 && vo > 0 ? vo / vb : null;
  const judged = t >= claim.at ? "" : ` The claim is judged at ${fmt(claim.at)} s.`;
  if (PER[m]) {
    const times = ratio === null ? "" : `: ${ratio.toFixed(2)}× as much, for the same traffic`;
    return `${when}, ${other} pays $${vo.toFixed(2)} ${PER[m]} and ${best} $${vb.toFixed(2)}${times}.${judged}`;
  }
  const words = m.replace(/@recent$/, ", recent").replaceAll("_", " ");
  const times = ratio === null ? "" : `; ${other} is ${ratio.toFixed(2)}× ${best}`;
  return `${when}, ${words}: ${best} ${formatMetric(m, vb, units)}, ${other} ${formatMetric(m, vo, units)}${times}.${judged}`;
}

/**
 * The bill beside a claim that is not in dollars, on pages whose panels report it: what the last
 * of the claim's panels (the worst) pays per million output tokens against the first, at `t`.
 * Null when the claim is about dollars already or a panel reports none (docs/cost.md).
 */
export function bill(claim, t, values) {
  const names = claim.panels || [];
  if (PER[claim.metric] || names.length < 2) return null;
  return verdict({ ...claim, metric: "usd_per_mtok_out", panels: [names[0], names[names.length - 1]], at: 0 }, t, values, {});
}

/** Write the claim's sentence for frame `f` into the element's `ui.verdict` (hidden without one). */
export function say(sim, f) {
  const claim = claimOf(sim.meta);
  if (!claim) return;
  const of = (metric) => Object.fromEntries((claim.panels || []).map((n) => [n, f.panels[n]?.metrics?.[metric]]));
  const said = verdict(claim, f.t, of(claim.metric), sim.meta.metrics);
  const paid = said && bill(claim, f.t, of("usd_per_mtok_out"));
  const text = paid ? `${said} The bill: ${paid.replace(/^At [\d.]+ s, /, "")}` : said;
  const p = (sim.ui.verdict ??= line(sim.ui.wrap));
  p.hidden = !text;
  if (text && p.textContent !== text) p.textContent = text;
}

/** The sentence's line, under what to watch for (or under the panels when there is none). */
function line(wrap) {
  const p = document.createElement("p");
  p.className = "cs-verdict";
  p.style.cssText = "margin:-0.4rem 0 0.8rem;padding:0 0.9rem;font-size:0.95rem;font-variant-numeric:tabular-nums";
  (wrap.querySelector(":scope > .cs-watch") || wrap.querySelector(":scope > .cs-panels")).after(p);
  return p;
}
