// Renderers of topic `sorting`'s view kinds (sims/sorting/topic.toml `views`), loaded by render.js's
// loadTopic("sorting") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { text } from "../draw.js";
import { stepFrame } from "../stepframe.js";

// a location (sims/sorting/array.py): i >= 0 is the array's slot i, ~k (-k - 1) is aux slot k;
// the bar that draws it, when `aux` says which strip, or -1
const bar = (p, aux, stride) => (p === null || p === undefined || p >= 0 === aux ? -1 : Math.floor((aux ? ~p : p) / stride));

// one strip of bars, key height from `low` to `high` (the smallest key still shows); the pair just
// compared and the slot just written in colour, at least 2 px wide and marked under the strip,
// an empty slot left blank
function drawBars(ctx, keys, area, v, theme, aux) {
  const n = keys.length;
  const w = area.w / n;
  const low = v.low ?? 0;
  const span = Math.max(1, (v.high ?? 1) - low);
  const stride = v.stride || 1;
  const cmp = (v.cmp || []).map((p) => bar(p, aux, stride)).filter((i) => i >= 0);
  const wrote = bar(v.wrote, aux, stride);
  const height = (k) => Math.max(1, area.h * (0.08 + (0.92 * (k - low)) / span));
  ctx.fillStyle = theme.accent;
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    if (k === null || k === undefined) continue;
    const h = height(k);
    ctx.fillRect(area.x + i * w, area.y + area.h - h, Math.max(w - (w > 3 ? 1 : 0), 0.6), h);
  }
  const mark = (i, color) => {
    const k = keys[i];
    const bw = Math.max(2, w - (w > 3 ? 1 : 0));
    const x = area.x + i * w + (w - bw) / 2;
    ctx.fillStyle = color;
    if (k !== null && k !== undefined) ctx.fillRect(x, area.y + area.h - height(k), bw, height(k));
    ctx.fillRect(x - 1, area.y + area.h + 4, bw + 2, 3);
  };
  cmp.forEach((i) => mark(i, theme.bad));
  if (wrote >= 0) mark(wrote, theme.good);
  if (!aux && v.span && (v.span[0] > 0 || v.span[1] < v.n)) {
    // the part of the array the algorithm works on now
    ctx.fillStyle = theme.fg;
    const a = v.span[0] / stride;
    const b = v.span[1] / stride;
    ctx.fillRect(area.x + a * w, area.y + area.h + 1, Math.max(1, (b - a) * w), 2);
  }
  const cuts = aux ? v.cuts || [] : [];
  if (cuts.length && cuts.length * 4 <= n) {
    // bucket boundaries, where the buckets are wide enough to tell apart
    ctx.fillStyle = theme.muted;
    cuts.forEach((c) => ctx.fillRect(area.x + c * w, area.y, 1, area.h));
  }
}

// the count table as a histogram, the slot just updated in colour
function drawCounts(ctx, counts, area, v, theme) {
  const n = counts.length;
  const w = area.w / n;
  const top = Math.max(1, ...counts);
  for (let i = 0; i < n; i++) {
    const h = (area.h * counts[i]) / top;
    ctx.fillStyle = i === v.counted ? theme.good : theme.muted;
    ctx.fillRect(area.x + i * w, area.y + area.h - h, Math.max(w - (w > 3 ? 1 : 0), 0.6), h);
  }
}

// bars: the array (and, below it, the auxiliary memory or the count table when the sort uses
// one), in the frame every stepping panel shares (../stepframe.js); a line above the bars says what
// the sort holds in hand (insertion's key, a swap's first half)
registerRenderer("bars", (ctx, v, box, theme) => {
  let status = `${fmt(v.comparisons || 0)} cmp · ${fmt(v.writes || 0)} writes`;
  if (v.done) status = v.sorted ? `sorted · ${status}` : `done, NOT sorted · ${status}`;
  const frame = stepFrame(ctx, v, box, theme, status);
  const keys = v.keys || [];
  const hand = 12;
  const area = { ...frame, y: frame.y + hand, h: frame.h - hand - 8 }; // 8: the marks under the bars
  if (!keys.length || area.w < 10 || area.h < 20) return;
  if (v.held !== null && v.held !== undefined) text(ctx, `in hand: ${fmt(v.held)}`, area.x, frame.y + hand / 2, theme.bad);
  const aux = (v.aux || []).length;
  const counts = (v.counts || []).length;
  const label = 11;
  const mainH = aux || counts ? Math.round(area.h * 0.6) : area.h;
  drawBars(ctx, keys, { x: area.x, y: area.y, w: area.w, h: mainH }, v, theme, false);
  if (!aux && !counts) return;
  const top = area.y + mainH + 8;
  const below = { x: area.x, y: top + label, w: area.w, h: area.h - mainH - 8 - label };
  if (below.h < 6) return;
  if (aux) {
    text(ctx, v.cuts && v.cuts.length ? "buckets" : "aux memory", area.x, top + label / 2, theme.muted);
    const w = area.w / keys.length; // the array's bar width: aux[0] sits under a[aux_at]
    drawBars(ctx, v.aux, { ...below, x: area.x + (v.aux_at || 0) * w, w: v.aux.length * w }, v, theme, true);
  } else {
    text(ctx, "count table", area.x, top + label / 2, theme.muted);
    drawCounts(ctx, v.counts, below, v, theme);
  }
});
