// Renderers of topic `filters`'s view kinds (sims/filters/topic.toml `views`), loaded by
// render.js's loadTopic("filters") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text, markNote } from "../draw.js";

const pct = (x) => `${fmt(100 * (x || 0))}%`;

// What the filter is, in a few words: its size and shape.
function shape(v) {
  if (typeof v.k === "number") {
    const wide = v.counter_bits ? ` · ${v.counter_bits}-bit counters` : "";
    return `m ${fmt(v.m)} · k ${v.k}${wide}`;
  }
  if (typeof v.fingerprint === "number") return `${fmt(v.buckets)} buckets × ${v.slots} · ${v.fingerprint}-bit fp`;
  return "a set of whole keys";
}

// filter: the array as a strip (how full each stretch of bits, counters or buckets is; saturated
// counters in red), then the false-positive rate of the recent absent lookups against the
// formula's over time
registerRenderer("filter", (ctx, v, box, theme) => {
  const x0 = PAD;
  const x1 = box.w - PAD;
  const cells = v.cells || [];
  const per = (v.per_cell || 1) * (v.slots || 1);

  // headline: n, then the shape where it fits
  ctx.font = `bold 12px ${theme.font}`;
  const head = `n ${fmt(v.items || 0)}`;
  text(ctx, head, PAD, 9, theme.fg);
  const hw = ctx.measureText(head).width;
  ctx.font = `12px ${theme.font}`;
  const detail = `${shape(v)} · ${fmt(v.items ? v.bits / v.items : 0)} bits/key`;
  if (ctx.measureText(detail).width <= box.w - 2 * PAD - hw - 8) text(ctx, detail, PAD + hw + 8, 9, theme.muted);

  // the strip
  const yStrip = 20;
  const hStrip = box.h < 140 ? 14 : 20;
  if (cells.length) {
    const w = (x1 - x0) / cells.length;
    const full = v.full || [];
    cells.forEach((c, i) => {
      ctx.globalAlpha = 0.12 + 0.88 * Math.min(1, c / per);
      ctx.fillStyle = full[i] ? theme.bad : theme.accent;
      ctx.fillRect(x0 + i * w, yStrip, Math.max(1, w - 0.5), hStrip);
    });
    ctx.globalAlpha = 1;
  } else {
    text(ctx, `${fmt(v.items || 0)} keys stored whole: nothing to confuse`, x0, yStrip + hStrip / 2, theme.muted);
  }

  // the rates over time: measured (recent absent lookups) against the formula
  const yTop = yStrip + hStrip + 18;
  const yBot = box.h - 18;
  const hist = v.history || [];
  const most = Math.max(1e-4, ...hist.map((h) => Math.max(h[1], h[2])));
  const tA = hist.length ? hist[0][0] : 0;
  const tB = hist.length ? Math.max(tA + 1e-9, hist[hist.length - 1][0]) : 1;
  const xt = (t) => x0 + ((t - tA) / (tB - tA)) * (x1 - x0);
  const yv = (f) => yBot - (f / most) * Math.max(4, yBot - yTop);
  ctx.fillStyle = theme.track;
  ctx.fillRect(x0, yBot, x1 - x0, 1);
  [
    [2, theme.muted],
    [1, theme.bad],
  ].forEach(([j, colour]) => {
    if (hist.length < 2) return;
    ctx.strokeStyle = colour;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    hist.forEach((h, i) => (i ? ctx.lineTo(xt(h[0]), yv(h[j])) : ctx.moveTo(xt(h[0]), yv(h[j]))));
    ctx.stroke();
  });
  // the legend doubles as the present values: measured in the line's colour, then the formula's
  const yLegend = yStrip + hStrip + 9;
  const measured = `FP ${pct(v.fp_recent)} (last 1,000)`;
  text(ctx, measured, x0, yLegend, theme.bad);
  const formula = `formula ${pct(v.fp_formula)}`;
  const mw = ctx.measureText(measured).width;
  if (x0 + mw + 10 + ctx.measureText(formula).width <= x1 - 50) text(ctx, formula, x0 + mw + 10, yLegend, theme.muted);
  if (hist.length > 1) text(ctx, `top ${pct(most)}`, x1, yLegend, theme.muted, "right");

  // bottom line: what went wrong besides false positives, then the latest mark where room is left
  const yText = box.h - 6;
  const notes = [];
  if (v.false_negatives) notes.push([`${fmt(v.false_negatives)} false neg.`, theme.bad]);
  if (v.overflows) notes.push([`${fmt(v.overflows)} overflows`, theme.bad]);
  if (v.failures) notes.push([`${fmt(v.failures)} failed inserts`, theme.bad]);
  notes.push([`load ${pct(v.load)}`, theme.muted]);
  let x = x1;
  for (const [s, c] of notes.reverse()) {
    const w = ctx.measureText(s).width;
    if (x - w < x0 + 40) break;
    text(ctx, s, x, yText, c, "right");
    x -= w + 10;
  }
  markNote(ctx, theme, PAD, yText, "left", x - PAD - 4);
});
