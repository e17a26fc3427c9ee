// Drawing helpers the topics' renderers (js/topics/*.js) share. Each draws into {w, h} CSS pixels;
// anything missing from a view is skipped rather than fatal (drawView falls back).
import { fmt } from "./render.js";

export const PAD = 8;

export function text(ctx, s, x, y, color, align = "left") {
  ctx.fillStyle = color;
  ctx.textAlign = align;
  ctx.fillText(s, x, y);
}

export function meter(ctx, x, y, w, h, frac, color, theme) {
  ctx.fillStyle = theme.track;
  ctx.fillRect(x, y, w, h);
  ctx.fillStyle = color;
  ctx.fillRect(x, y, Math.max(0, Math.min(1, frac || 0)) * w, h);
}

/** A strip of recent outcomes, newest on the right: ok -> good, else bad. */
export function outcomes(ctx, items, y, h, box, theme, isOk) {
  const n = items.length;
  if (!n) return;
  const w = Math.max(2, Math.min(10, (box.w - 2 * PAD) / n));
  const x0 = box.w - PAD - n * w;
  items.forEach((it, i) => {
    ctx.fillStyle = isOk(it) ? theme.good : theme.bad;
    ctx.fillRect(x0 + i * w, y, Math.max(1, w - 1), h);
  });
}

/** Bars of `value(item)`, scaled to `max` when given (one scale across compared panels). */
export function bars(ctx, items, value, label, box, theme, y0, color = theme.accent, max = 0) {
  const n = items.length;
  if (!n) return;
  const h = box.h - y0 - 16;
  const w = (box.w - 2 * PAD) / n;
  const mx = Math.max(1e-9, max, ...items.map(value));
  items.forEach((it, i) => {
    const v = value(it);
    const bh = (v / mx) * (h - 12);
    ctx.fillStyle = it.alive === false ? theme.bad : typeof color === "function" ? color(it, i) : color;
    ctx.fillRect(PAD + i * w + 1, y0 + h - bh, Math.max(1, w - 2), bh);
    if (w > 30) text(ctx, fmt(v), PAD + i * w + w / 2, y0 + h - bh - 6, theme.fg, "center");
    if (w > 18) text(ctx, label(it, i), PAD + i * w + w / 2, box.h - 7, theme.muted, "center");
    if (it.alive === false) {
      // a dead server: a cross where its bar would be, and the word
      ctx.strokeStyle = theme.bad;
      ctx.lineWidth = 2;
      const cx = PAD + i * w + w / 2;
      const cy = y0 + h - 10;
      ctx.beginPath();
      ctx.moveTo(cx - 5, cy - 5);
      ctx.lineTo(cx + 5, cy + 5);
      ctx.moveTo(cx + 5, cy - 5);
      ctx.lineTo(cx - 5, cy + 5);
      ctx.stroke();
      if (w > 26) text(ctx, "down", cx, cy - 14, theme.bad, "center");
    }
  });
}

/**
 * The workload's latest mark at or before the frame's time (theme.marks, theme.t: a scan starts,
 * the working set moves), or null. Binary search: cache-scan has hundreds.
 */
export function lastMark(theme) {
  const marks = theme.marks || [];
  let lo = 0;
  let hi = marks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (marks[mid].t <= theme.t) lo = mid + 1;
    else hi = mid;
  }
  return lo ? marks[lo - 1] : null;
}

/**
 * "scan starts, 0.04 s ago" for the latest workload mark at (x, y), or just its label where the
 * whole does not fit in `room` CSS px, or nothing; nothing before the first mark.
 */
export function markNote(ctx, theme, x, y, align = "left", room = Infinity) {
  const m = lastMark(theme);
  if (!m) return;
  const ago = theme.t - m.t;
  const s = [`${m.label}, ${ago < 1 ? ago.toFixed(2) : fmt(ago)} s ago`, m.label].find((c) => ctx.measureText(c).width <= room);
  if (s) text(ctx, s, x, y, theme.muted, align);
}
